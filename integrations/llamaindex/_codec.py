"""The codec for LlamaIndex `ChatMessage` lists.

Tool calls live in two places depending on the llama-index-core version and the LLM that
made them: `ToolCallBlock`s in ``message.blocks`` (llama-index-core 0.14.5 and later), or
``additional_kwargs["tool_calls"]`` (older histories, and the OpenAI LLM, which writes
both). When an assistant message carries ToolCallBlocks, the ``additional_kwargs`` list
is a mirror of them that every converter ignores, so the blocks are authoritative. A
result is a ``tool`` (or ``function``) message whose id is
``additional_kwargs["tool_call_id"]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from llama_index.core.base.llms import types as _types
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from toolpair import Block, Codec, InvalidHistory, Message
from toolpair._model import Role, synthetic_result
from toolpair.engine.skeleton import Bone, Skeleton

try:  # llama-index-core >= 0.14.5
    from llama_index.core.base.llms.types import ToolCallBlock
except ImportError:  # pragma: no cover - depends on the installed version
    ToolCallBlock = None  # type: ignore[assignment,misc]

try:  # llama-index-core >= 0.14.3
    from llama_index.core.base.llms.types import ThinkingBlock
except ImportError:  # pragma: no cover - depends on the installed version
    ThinkingBlock = None  # type: ignore[assignment,misc]

__all__ = ["LlamaIndexCodec", "call_block_type"]

_ROLES: dict[str, Any] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}

_MEDIA = frozenset({"image", "audio", "video", "document"})

#: The text a result kept as text (the orphans="text" policy) becomes.
ORPHAN_TEXT = "[tool result for call {id} (its call is not in this history)]: {content}"

#: Keys that only make sense on a tool message; a tool message rebuilt as another role
#: must not carry them, or the OpenAI converter would send ``tool_call_id`` on it.
_RESULT_KEYS = ("tool_call_id", "call_id", "is_error", "name", "tool_name")


#: A block the skeleton checkers do not model.
_OTHER: Bone = ("other", None, None)

#: The roles by ``ChatMessage.role``: a MessageRole member hashes by its name, not its
#: value, so the members are keys beside the strings a message built by hand may hold.
_SKELETON_ROLES: dict[Any, Role] = {
    **_ROLES,
    **{r: _ROLES[r.value] for r in MessageRole if r.value in _ROLES},
}

#: The installed block classes by their ``block_type`` (a subclass or a later class is
#: read by its ``block_type``).
_BLOCK_KINDS: dict[type, str] = {
    cls: kind
    for cls, kind in (
        (TextBlock, "text"),
        (ToolCallBlock, "tool_call"),
        (ThinkingBlock, "thinking"),
        *(
            (getattr(_types, f"{k.title()}Block", None), k)
            for k in ("image", "audio", "video", "document")
        ),
    )
    if cls is not None
}

#: What the Anthropic converter reads from an ``additional_kwargs`` call.
_ANTHROPIC_LEGACY_KEYS = frozenset({"id", "input", "name"})


def call_block_type() -> type | None:
    """The installed `ToolCallBlock` class, or None on llama-index-core < 0.14.5."""
    return ToolCallBlock


def _role_value(msg: Any) -> str:
    role = getattr(msg, "role", None)
    return role.value if isinstance(role, MessageRole) else str(role)


def _id_or_none(value: Any) -> str | None:
    # An empty id is kept: the converters send it as is, so "" pairs with "" on the
    # wire (and is then rewritten), whereas a missing id pairs with nothing.
    return value if isinstance(value, str) else None


def _is_tool_call_block(block: Any) -> bool:
    return ToolCallBlock is not None and isinstance(block, ToolCallBlock)


def _legacy_call(entry: Any, index: int) -> Block:
    """A call stored in ``additional_kwargs["tool_calls"]``: an OpenAI-shaped dict
    (``function.name``), an Anthropic-shaped dict (``name``/``input``) or an SDK object
    (``.id``, ``.function.name``)."""
    if isinstance(entry, Mapping):
        fn = entry.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else entry.get("name")
        call_id = entry.get("id")
    elif hasattr(entry, "id"):
        fn = getattr(entry, "function", None)
        name = getattr(fn, "name", None) if fn is not None else getattr(entry, "name", None)
        call_id = entry.id
    else:
        raise InvalidHistory(
            f'additional_kwargs["tool_calls"] holds a {type(entry).__name__}, not a tool call',
            index,
        )
    return Block(
        "call",
        entry,
        id=_id_or_none(call_id),
        name=name if isinstance(name, str) else None,
        sub="legacy",
    )


def _content_block(block: Any, role: str) -> Block:
    kind = getattr(block, "block_type", None)
    if kind == "text":
        text = getattr(block, "text", None)
        return Block("text", block, text=text if isinstance(text, str) else None)
    if kind == "thinking":
        # The Anthropic converter sends additional_information["signature"]; the core's
        # signature rule reads a dict's "signature", so only an unsigned block gets the
        # sub-type it checks (a signed one was flagged invalid and left unrepaired).
        info = getattr(block, "additional_information", None)
        sig = info.get("signature") if isinstance(info, Mapping) else None
        return Block(
            "thinking", block, sub="signed" if isinstance(sig, str) and sig else "thinking"
        )
    if kind == "tool_call" and role == "assistant":
        return Block(
            "call",
            block,
            id=_id_or_none(block.tool_call_id),
            name=block.tool_name if isinstance(block.tool_name, str) else None,
        )
    if kind in _MEDIA:
        return Block("image", block, sub=kind)
    # Cache points, citations and whatever a later llama-index adds ride along unread.
    return Block("other", block, sub=str(kind))


def _result_empty(msg: Any) -> bool:
    for block in msg.blocks:
        if getattr(block, "block_type", None) != "text":
            return False
        if block.text.strip():
            return False
    return True


def _result_text(msg: Any) -> str:
    texts = [b.text for b in msg.blocks if getattr(b, "block_type", None) == "text"]
    if texts:
        return "\n".join(texts)
    return json.dumps([getattr(b, "block_type", "block") for b in msg.blocks])


class LlamaIndexCodec(Codec):
    """Reads and writes lists of `llama_index.core.llms.ChatMessage`.

    Pass an instance as ``format=`` to any toolpair function to run it on ChatMessages.
    It never mutates a message: every changed message is a ``model_copy``.
    """

    name = "llamaindex"
    shape = "chat"

    def __init__(self, *, gemini: bool = False, anthropic: bool = False) -> None:
        #: For Gemini and Vertex, read which calls GoogleGenAI sends with a thought
        #: signature (Gemini's rules ask; other providers' rules read no signature).
        self.gemini = gemini
        #: For Anthropic, `repair_messages` also rewrites the calls its converter would
        #: send wrong (string arguments, OpenAI-shaped ``additional_kwargs`` calls): the
        #: skeleton is None where one is, so a no-op verdict vouches for both at once.
        self.anthropic = anthropic

    splits = True
    #: The checkers whose pieces its tests hold to the full path's answer.
    pieces = frozenset({"anthropic", "openai"})

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """What `decode` makes of ChatMessages with ToolCallBlocks or dict-shaped
        ``additional_kwargs`` calls, read in one pass; None for anything else.

        It runs on every request: blocks are told apart by their exact class first
        (pydantic's attribute and isinstance checks cost more than the rest of the pass),
        and by ``block_type`` for any other class, as `decode` reads them."""
        out: Skeleton = []
        add = out.append
        gemini, anthropic = self.gemini, self.anthropic
        roles, kinds, chat = _SKELETON_ROLES, _BLOCK_KINDS, ChatMessage
        for msg in messages:
            if type(msg) is not chat:
                return None
            role = roles.get(msg.role)
            if role is None:
                return None
            kwargs = msg.additional_kwargs
            if role == "tool":
                rid = kwargs["tool_call_id"] if "tool_call_id" in kwargs else kwargs.get("call_id")
                if type(rid) is not str:
                    add(("tool", [_OTHER]))
                    continue
                bad = kwargs.get("is_error") is True and _result_empty(msg)
                add(("tool", [("result", rid, bad)]))
                continue
            bones: list[Bone] = []
            calls = False
            for block in msg.blocks:
                kind = kinds.get(type(block)) or getattr(block, "block_type", None)
                if kind == "text":
                    text = block.text
                    bones.append(("text", None, text) if type(text) is str else _OTHER)
                elif kind == "tool_call" and role == "assistant":
                    calls = True
                    cid, name = block.tool_call_id, block.tool_name
                    if anthropic and type(block.tool_kwargs) is not dict:
                        return None  # repair_messages turns the arguments into an object
                    if type(cid) is not str:
                        bones.append(_OTHER)
                    else:
                        bones.append(("call", cid, name if type(name) is str else None))
                elif kind == "thinking":
                    info = getattr(block, "additional_information", None)
                    sig = info.get("signature") if isinstance(info, Mapping) else None
                    bones.append(("thinking", None, isinstance(sig, str) and bool(sig)))
                elif kind in _MEDIA:
                    bones.append(("image", None, kind))
                else:
                    bones.append(_OTHER)
            if gemini and calls and role == "assistant":
                signatures = kwargs.get("thought_signatures")
                if isinstance(signatures, list | tuple):
                    for k, bone in enumerate(bones[: len(signatures)]):
                        if bone[0] == "call" and signatures[k]:
                            bones[k] = ("item_call", bone[1], bone[2])
            legacy = kwargs.get("tool_calls") if role == "assistant" and not calls else None
            if legacy:
                if type(legacy) is not list:
                    return None
                for entry in legacy:
                    if type(entry) is not dict:
                        return None  # an SDK object: decode reads its attributes
                    if anthropic and not entry.keys() >= _ANTHROPIC_LEGACY_KEYS:
                        return None  # the converter drops it: repair_messages lowers it
                    fn = entry.get("function")
                    name = fn.get("name") if isinstance(fn, Mapping) else entry.get("name")
                    cid = entry.get("id")
                    if not isinstance(cid, str):
                        bones.append(_OTHER)
                    else:
                        kind = "item_call" if gemini and entry.get("thought_signature") else "call"
                        bones.append((kind, cid, name if isinstance(name, str) else None))
            add((role, bones))
        return out

    def sends_blank_text(self, block: Block, provider: str) -> bool:
        """Whether llama-index's Anthropic formatter sends this blank text block.

        ``messages_to_anthropic_messages`` (llama-index-llms-anthropic, the chat path
        every ``Anthropic`` LLM takes) keeps a `TextBlock` only ``if block.text``: an
        empty one is dropped, a whitespace-only one is sent as it stands, in a user or
        an assistant message alike, beside a call or not. A block of type "text" that is
        not a TextBlock makes it raise, so it sends nothing. Only Anthropic's rules ask,
        for "anthropic" and "portable" alike; the answer is the same for every provider.
        (The beta formatter, used by ``structured_predict`` alone, sends "" too.)"""
        return block.text != "" and isinstance(block.native, TextBlock)

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            raise InvalidHistory(
                f"expected a list of ChatMessage, got {type(messages).__name__}", None
            )
        out: list[Message] = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, ChatMessage):
                raise InvalidHistory(f"expected a ChatMessage, got {type(msg).__name__}", i)
            raw_role = _role_value(msg)
            role = _ROLES.get(raw_role)
            if role is None:
                raise InvalidHistory(f"unknown role {raw_role!r}", i)
            kwargs = msg.additional_kwargs or {}
            if role == "tool":
                name = kwargs.get("name", kwargs.get("tool_name"))
                result = Block(
                    "result",
                    msg,
                    id=_id_or_none(kwargs.get("tool_call_id", kwargs.get("call_id"))),
                    name=name if isinstance(name, str) else None,
                    is_error=kwargs.get("is_error") is True,
                    empty=_result_empty(msg),
                )
                out.append(Message("tool", [result], msg, i))
                continue
            blocks = [_content_block(b, role) for b in msg.blocks]
            if self.gemini and role == "assistant":
                _mark_signed(blocks, kwargs.get("thought_signatures"))
            legacy = kwargs.get("tool_calls")
            if role == "assistant" and legacy and not any(b.kind == "call" for b in blocks):
                if not isinstance(legacy, list | tuple):
                    raise InvalidHistory(
                        'additional_kwargs["tool_calls"] must be a list, got '
                        f"{type(legacy).__name__}",
                        i,
                    )
                calls = [_legacy_call(entry, i) for entry in legacy]
                if self.gemini:
                    for b, entry in zip(calls, legacy, strict=True):
                        if _entry_signature(entry):
                            b.item_id = _signed(b.id)
                blocks.extend(calls)
            out.append(Message(role, blocks, msg, i))
        return out

    def build(self, role: Any, blocks: list[Block], template: Message | None) -> Any:
        if role == "tool" and len(blocks) == 1 and blocks[0].kind == "result":
            return blocks[0].native
        legacy = [
            b.native for b in blocks if b.kind == "call" and not _is_tool_call_block(b.native)
        ]
        content = [
            b.native for b in blocks if not (b.kind == "call" and not _is_tool_call_block(b.native))
        ]
        block_calls = [b for b in blocks if b.kind == "call" and _is_tool_call_block(b.native)]
        native = template.native if template is not None else None
        kwargs: dict[str, Any] = dict(native.additional_kwargs) if native is not None else {}
        if native is None or _ROLES.get(_role_value(native)) != role:
            for key in _RESULT_KEYS:
                kwargs.pop(key, None)
            msg_role: Any = MessageRole(role)
        else:
            msg_role = native.role
        if legacy:
            kwargs["tool_calls"] = legacy
        elif block_calls and kwargs.get("tool_calls"):
            kwargs["tool_calls"] = _mirror(kwargs["tool_calls"], block_calls)
        else:
            kwargs.pop("tool_calls", None)
        if native is None:
            return ChatMessage(role=msg_role, blocks=content, additional_kwargs=kwargs)
        return native.model_copy(
            update={"role": msg_role, "blocks": content, "additional_kwargs": kwargs}
        )

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        kwargs: dict[str, Any] = {"tool_call_id": call.id}
        if is_error:
            # No converter sends it (see QUICKSTART), but a later decode keeps the flag.
            kwargs["is_error"] = True
        native = ChatMessage(
            role=MessageRole.TOOL, blocks=[TextBlock(text=text)], additional_kwargs=kwargs
        )
        return synthetic_result(native, call, is_error=is_error, empty=not text.strip())

    def make_text(self, text: str, role: Any) -> Block:
        return Block("text", TextBlock(text=text), text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        native = block.native
        if block.kind == "result":
            kwargs = dict(native.additional_kwargs)
            kwargs[
                "call_id"
                if "call_id" in kwargs and "tool_call_id" not in kwargs
                else "tool_call_id"
            ] = new_id
            native = native.model_copy(update={"additional_kwargs": kwargs})
        elif _is_tool_call_block(native):
            native = native.model_copy(update={"tool_call_id": new_id})
        elif isinstance(native, Mapping):
            native = {**native, "id": new_id}
        elif hasattr(native, "model_copy"):
            native = native.model_copy(update={"id": new_id})
        else:
            raise InvalidHistory(f"cannot rename tool call of type {type(native).__name__}")
        # item_id remembers the id the history had, so build can find the
        # additional_kwargs mirror entry of a renamed ToolCallBlock (a signed call's
        # marker holds it already).
        return replace(block, native=native, id=new_id, item_id=block.item_id or block.id)

    def content_of(self, block: Block) -> Any:
        """A result's content as LlamaIndex stores it (compaction reads it)."""
        return block.native.content

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is ``text`` (error filling, clearing)."""
        native = block.native.model_copy(update={"blocks": [TextBlock(text=text)]})
        return replace(block, native=native, empty=not text.strip())

    def result_as_text(self, block: Block) -> Block:
        content = _result_text(block.native)
        if block.id is None:
            # An id-less observation (ReAct with observation_role=TOOL) is plain text
            # already; only its role was wrong.
            return self.make_text(content, "user")
        return self.make_text(ORPHAN_TEXT.format(id=block.id, content=content), "user")


def _entry_id(entry: Any) -> Any:
    return entry.get("id") if isinstance(entry, Mapping) else getattr(entry, "id", None)


#: The `Block.item_id` prefix of a call GoogleGenAI sends with a thought signature; the
#: id the history gave the call follows it (see `with_id`).
_SIGNED = "thought_signature:"


def _signed(call_id: str | None) -> str:
    return _SIGNED + (call_id or "")


def _source_id(call: Block) -> str | None:
    """The id a call had in the history, before any rename."""
    item = call.item_id
    if item is not None and item.startswith(_SIGNED):
        return item[len(_SIGNED) :] or call.id
    return item or call.id


def _entry_signature(entry: Any) -> Any:
    if isinstance(entry, Mapping):
        return entry.get("thought_signature")
    return getattr(entry, "thought_signature", None)


def _mark_signed(blocks: list[Block], signatures: Any) -> None:
    """GoogleGenAI sends ``additional_kwargs["thought_signatures"][k]`` with the part
    it makes of block ``k``: a call block with one is signed."""
    if not isinstance(signatures, list | tuple):
        return
    for k, b in enumerate(blocks[: len(signatures)]):
        if b.kind == "call" and signatures[k]:
            b.item_id = _signed(b.id)


def _mirror(entries: Any, calls: list[Block]) -> list[Any]:
    """The ``additional_kwargs["tool_calls"]`` mirror of ``calls``: the entries that
    still have a call, renamed along with it, in the calls' order."""
    if not isinstance(entries, list | tuple):
        return list(entries) if entries else []
    by_id = {_entry_id(e): e for e in entries}
    out: list[Any] = []
    for call in calls:
        entry = by_id.get(_source_id(call))
        if entry is None:
            continue
        if _entry_id(entry) != call.id:
            if isinstance(entry, Mapping):
                entry = {**entry, "id": call.id}
            elif hasattr(entry, "model_copy"):
                entry = entry.model_copy(update={"id": call.id})
        out.append(entry)
    return out
