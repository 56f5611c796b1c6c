"""The codec between LangChain ``BaseMessage`` lists and toolpair's neutral view.

LangChain keeps a call in up to three places at once: ``AIMessage.tool_calls``,
``AIMessage.invalid_tool_calls`` (both provider converters send these as calls too) and
the content list (an Anthropic ``tool_use``, a Responses ``function_call`` or a v1
``tool_call`` block). The converters treat the ``tool_calls`` entry as the truth and
rebuild a content block carrying the same id from it, so a content block whose id is
also in ``tool_calls``/``invalid_tool_calls`` is a duplicate, not a second call: it is
decoded as an ``other`` block that `build` keeps in step with its call (renamed with
it, dropped with it).

A result is a ``ToolMessage``, or an Anthropic-native ``tool_result`` block in a user
message's content (histories replayed from Anthropic's own format), which ChatAnthropic
sends as it stands: it answers a call exactly as a ToolMessage does. Such a block that
repair moves travels as a ``HumanMessage`` holding it, which ChatAnthropic merges into
the user turn around it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from toolpair import Block, InvalidHistory, Message
from toolpair._model import Bone, Codec, Role, Shape, Skeleton, synthetic_result

from .._base import lone_result_home, native_result
from .._langchain_messages import content_text

__all__ = ["LangChainCodec"]

#: Content block types that are client tool calls, and the key holding their id.
_CALL_BLOCKS = {"tool_use": "id", "function_call": "call_id", "tool_call": "id"}
#: Replay-sensitive assistant blocks: signed thinking, encrypted reasoning.
_THINKING_BLOCKS = {"thinking", "redacted_thinking", "reasoning", "reasoning_content"}
_IMAGE_BLOCKS = {"image", "image_url", "file", "audio", "input_audio", "video", "document"}
_CHAT_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
}
#: Which content-resident call blocks each provider package puts on the wire. The
#: others are dropped by its converter (langchain-openai drops ``tool_use`` blocks, and
#: every content call on Chat Completions; langchain-anthropic drops ``function_call``),
#: so for that provider they are not calls and need no result. Providers not listed
#: here are assumed to send them all.
_SENT_CALL_BLOCKS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"tool_use", "tool_call"}),
    "openai": frozenset(),
    "openai-responses": frozenset({"function_call", "tool_call"}),
    # DeepSeek's endpoints are reached through langchain-openai's converter.
    "deepseek": frozenset(),
    "deepseek-responses": frozenset({"function_call", "tool_call"}),
}
#: Providers whose LangChain package sends a ``tool_result`` block in a user message as
#: a tool result (langchain-anthropic passes it through; langchain-openai passes it to
#: OpenAI as an unknown content part, which pairs with nothing). None: every provider.
_RESULT_BLOCK_PROVIDERS = frozenset({"", "anthropic", "bedrock", "portable"})
#: The content block type of an Anthropic-native tool result, and its id key.
_RESULT_BLOCK = "tool_result"
_RESULT_ID = "tool_use_id"
#: The profiles whose rules read Gemini thought signatures, where both Google chat
#: models keep them (call id -> signature), and the `Block.item_id` of a signed call.
_GEMINI = frozenset({"gemini", "vertex"})
_SIGNATURES = "__gemini_function_call_thought_signatures__"
SIGNED = "thought_signature"
#: Sub-type of the ``other`` block standing for a content-resident copy of a call.
_DUP = "call_copy"
#: Sub-type of blank text: as an ``other`` block, text no formatter is held to (or not
#: yet judged); as a ``text`` block, text ChatAnthropic's formatter sends as it stands.
_BLANK = "blank_text"
_SENT = "blank_text_sent"

ORPHAN_TEXT = "[tool result for call {id} (its call is not in this history)]: {content}"


class _RenamedCall(dict):  # type: ignore[type-arg]
    """A ``tool_calls`` entry `with_id` renamed, remembering the id it had so `build`
    can rename the content-resident copy of the same call. Turned back into a plain
    dict before it reaches a message."""

    original: str | None = None


def _is_empty(content: Any) -> bool:
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return len(content) == 0
    return content is None


def _text_block(part: Any, text: str, index: int, blank: list[int]) -> Block:
    # Blank text is kept (byte-identical) as an opaque block; where Anthropic's rules
    # apply, `_judge_blank` turns the pieces its formatter sends into text blocks.
    if not text.strip():
        blank.append(index)
        return Block("other", part, sub=_BLANK)
    return Block("text", part, text=text)


def _role(msg: BaseMessage, index: int) -> Role:
    if isinstance(msg, ToolMessage):
        return "tool"
    if isinstance(msg, AIMessage):
        return "assistant"
    if isinstance(msg, HumanMessage):
        return "user"
    if isinstance(msg, SystemMessage):
        return "system"
    if isinstance(msg, ChatMessage):
        role = _CHAT_ROLES.get(msg.role)
        if role is None:
            raise InvalidHistory(f"ChatMessage role {msg.role!r} is not supported", index)
        return role
    if msg.type == "remove":
        # A graph-state instruction, never sent to a model; the entry points set these
        # aside before decoding. Seen alone it is an opaque system-side marker.
        return "system"
    # FunctionMessage and unknown subclasses: a user-side message toolpair cannot pair.
    return "user"


def _call_id(value: Any, index: int) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidHistory(f"tool call id must be a string, got {type(value).__name__}", index)


class LangChainCodec(Codec):
    """Reads and writes lists of LangChain ``BaseMessage``; never mutates them.

    ``provider`` (a toolpair provider name) tells which content-resident call blocks
    that provider's LangChain package sends; without it every one counts as a call.
    ``invalid_calls_sent=False`` leaves ``invalid_tool_calls`` out (an older converter
    that does not send them); `codec_for` works both out from a chat model.
    """

    name = "langchain"
    shape: Shape = "chat"

    def __init__(
        self,
        provider: str | None = None,
        *,
        invalid_calls_sent: bool = True,
        signs_first_call: bool = False,
    ) -> None:
        self.provider = provider
        #: Gemini's rules read thought signatures: a call is signed where the message
        #: keeps a signature for its id (both Google chat models replay those), or,
        #: with ``signs_first_call`` (ChatGoogleGenerativeAI, which sends Google's
        #: bypass value on a first call that has none), where it is a message's first.
        self._gemini = provider in _GEMINI
        self.signs_first_call = signs_first_call
        #: Whether the converter sends ``invalid_tool_calls`` as calls (langchain-anthropic
        #: before 1.7.x dropped them, so they needed no result).
        self.invalid_calls_sent = invalid_calls_sent
        self._sent = _SENT_CALL_BLOCKS.get(provider or "", frozenset(_CALL_BLOCKS))
        #: Whether a ``tool_result`` block in a user message reaches the provider as a
        #: result (else it stays opaque content, as before).
        self._native_results = (provider or "") in _RESULT_BLOCK_PROVIDERS
        #: Only Anthropic's rules read blank text as text: for other providers it stays
        #: opaque, as their LangChain converters drop it or their rules ignore it.
        self._judges_blank = provider in (None, "anthropic", "portable")

    # -- the no-op path ---------------------------------------------------------------

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """What `decode` makes of the plain messages a LangChain history mostly holds
        (string content; calls in ``tool_calls``), read in one pass; None for anything
        else (list content, blank text, invalid calls, other message classes)."""
        out: Skeleton = []
        add = out.append
        gemini = self._gemini
        for msg in messages:
            cls = type(msg)
            content = msg.content
            if type(content) is not str or (content and content.isspace()):
                return None  # list content and blank text: decode reads them apart
            if cls is ToolMessage:
                i = msg.tool_call_id
                if type(i) is not str:
                    return None
                add(("tool", [("result", i, msg.status == "error" and not content.strip())]))
                continue
            text: list[Bone] = [("text", None, content)] if content else []
            if cls is HumanMessage:
                add(("user", text))
            elif cls is SystemMessage:
                add(("system", text))
            elif cls is AIMessage:
                if msg.invalid_tool_calls:
                    return None
                signed: Any = ()
                if gemini:
                    kept = msg.additional_kwargs.get(_SIGNATURES)
                    signed = kept if isinstance(kept, Mapping) else ()
                first = True
                for call in msg.tool_calls:
                    i = call.get("id")
                    if i is None:
                        text.append(("other", None, None))
                        continue
                    if type(i) is not str:
                        return None
                    name = call.get("name")
                    sign = gemini and ((first and self.signs_first_call) or i in signed)
                    first = False
                    kind = "item_call" if sign else "call"
                    text.append((kind, i, name if isinstance(name, str) else None))
                add(("assistant", text))
            else:
                return None
        return out

    # -- decode ---------------------------------------------------------------------

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        blank: list[int] = []  # the messages holding blank text, once per piece
        out = self._decode(messages, blank)
        if blank and self._judges_blank:
            _judge_blank(out, blank)
        return out

    def sends_blank_text(self, block: Block, provider: str) -> bool:
        """Whether ChatAnthropic's formatter sends this blank text where Anthropic judges
        it (`decode` settled it: see `_judge_blank`). Only Anthropic's rules ask, for
        "anthropic" and "portable" alike."""
        return block.sub == _SENT

    def _decode(self, messages: Sequence[Any], blank: list[int]) -> list[Message]:
        out: list[Message] = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, BaseMessage):
                raise InvalidHistory(
                    f"expected a LangChain BaseMessage, got {type(msg).__name__}", i
                )
            role = _role(msg, i)
            if role == "tool":
                out.append(Message("tool", [self._result(msg, i)], msg, i))
            elif role == "assistant" and isinstance(msg, AIMessage):
                out.append(Message("assistant", self._assistant(msg, i, blank), msg, i))
            elif msg.type == "remove":
                out.append(Message(role, [Block("other", msg, sub="remove")], msg, i))
            else:
                out.append(Message(role, self._content(msg.content, i, role, blank), msg, i))
        return out

    def _result(self, msg: BaseMessage, index: int) -> Block:
        assert isinstance(msg, ToolMessage)
        tool_call_id = msg.tool_call_id
        if not isinstance(tool_call_id, str):
            raise InvalidHistory("ToolMessage.tool_call_id must be a string", index)
        return Block(
            "result",
            msg,
            id=tool_call_id,
            name=msg.name,
            is_error=msg.status == "error",
            empty=_is_empty(msg.content),
        )

    def _content(
        self,
        content: Any,
        index: int,
        role: Role,
        blank: list[int],
        skip_ids: frozenset[str] = frozenset(),
    ) -> list[Block]:
        if isinstance(content, str):
            return [_text_block(content, content, index, blank)] if content else []
        if not isinstance(content, list):
            raise InvalidHistory(
                f"content must be a string or a list, got {type(content).__name__}", index
            )
        blocks: list[Block] = []
        for part in content:
            if isinstance(part, str):
                # Even an empty one: a list's strings reach Anthropic as text blocks.
                blocks.append(_text_block(part, part, index, blank))
                continue
            if not isinstance(part, Mapping):
                blocks.append(Block("other", part))
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(_text_block(part, part["text"], index, blank))
            elif kind in _THINKING_BLOCKS:
                blocks.append(Block("thinking", part, sub=str(kind)))
            elif kind in _IMAGE_BLOCKS:
                blocks.append(Block("image", part, sub=str(kind)))
            elif role == "user" and kind == _RESULT_BLOCK and self._native_results:
                blocks.append(native_result(part, index, sub=_RESULT_BLOCK, empty=_is_empty))
            elif role == "assistant" and kind in _CALL_BLOCKS and kind not in self._sent:
                blocks.append(Block("other", part, sub="unsent_call"))
            elif role == "assistant" and kind in _CALL_BLOCKS:
                call_id = _call_id(part.get(_CALL_BLOCKS[str(kind)]), index)
                name = part.get("name")
                name = name if isinstance(name, str) else None
                toolset = part.get("toolset_name")
                toolset = toolset if isinstance(toolset, str) else None
                if call_id is not None and call_id in skip_ids:
                    blocks.append(Block("other", part, id=call_id, name=name, sub=_DUP))
                else:
                    blocks.append(
                        Block("call", part, id=call_id, name=name, toolset=toolset, sub=str(kind))
                    )
            else:
                # Server tools (server_tool_use, *_tool_result, mcp_*), tool_result blocks
                # in a user message, citations...: opaque, passed through untouched.
                blocks.append(Block("other", part, sub=str(kind)))
        return blocks

    def _assistant(self, msg: AIMessage, index: int, blank: list[int]) -> list[Block]:
        calls = [("tool_call", c) for c in msg.tool_calls]
        # Converters only send an invalid call that has an id (Anthropic also needs a
        # name); one without an id reaches no provider as a call.
        if self.invalid_calls_sent:
            calls += [("invalid_tool_call", c) for c in msg.invalid_tool_calls if c.get("id")]
        ids = frozenset(c["id"] for _, c in calls if isinstance(c.get("id"), str))
        blocks = self._content(msg.content, index, "assistant", blank, ids)
        toolsets = {
            b.id: b.native.get("toolset_name")
            for b in blocks
            if b.sub == _DUP and isinstance(b.native, Mapping)
        }
        signed: Any = ()
        if self._gemini:
            kept = msg.additional_kwargs.get(_SIGNATURES)
            signed = kept if isinstance(kept, Mapping) else ()
        first = True
        for sub, call in calls:
            call_id = _call_id(call.get("id"), index)
            name = call.get("name")
            toolset = toolsets.get(call_id)
            sign = self._gemini and ((first and self.signs_first_call) or call_id in signed)
            first = False
            blocks.append(
                Block(
                    "call",
                    call,
                    id=call_id,
                    name=name if isinstance(name, str) else None,
                    toolset=toolset if isinstance(toolset, str) else None,
                    sub=sub,
                    item_id=SIGNED if sign else None,
                )
            )
        return blocks

    # -- build ----------------------------------------------------------------------

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        if role == "tool":
            native = blocks[0].native
            if isinstance(native, BaseMessage):
                return native
            tpl = template.native if template is not None else None
            home = lone_result_home(tpl, HumanMessage, native)
            return home if home is not None else HumanMessage(content=[native])
        if role == "assistant":
            return self._build_assistant(blocks, template)
        content = self._content_value([b.native for b in blocks], template)
        if (
            template is not None
            and template.role == role
            and isinstance(template.native, BaseMessage)
        ):
            return template.native.model_copy(update={"content": content})
        if role == "system":
            return SystemMessage(content=content)
        return HumanMessage(content=content)

    @staticmethod
    def _content_value(parts: list[Any], template: Message | None) -> Any:
        if not parts:
            return ""
        if len(parts) == 1 and isinstance(parts[0], str):
            return parts[0]
        return list(parts)

    def _build_assistant(self, blocks: list[Block], template: Message | None) -> AIMessage:
        tool_calls: list[Any] = []
        invalid: list[Any] = []
        renamed: dict[str | None, str | None] = {}
        for b in blocks:
            if b.kind == "call" and b.sub in ("tool_call", "invalid_tool_call"):
                native = b.native
                if isinstance(native, _RenamedCall):
                    renamed[native.original] = b.id
                    native = dict(native)
                else:
                    renamed[b.id] = b.id
                (tool_calls if b.sub == "tool_call" else invalid).append(native)
        content: list[Any] = []
        for b in blocks:
            if b.kind == "call" and b.sub in ("tool_call", "invalid_tool_call"):
                continue
            if b.sub == _DUP:
                if b.id not in renamed:
                    continue  # its call is gone: so is its copy
                new_id = renamed[b.id]
                if new_id != b.id:
                    key = _CALL_BLOCKS.get(str(b.native.get("type")), "id")
                    content.append({**b.native, key: new_id})
                    continue
            content.append(b.native)
        value = self._content_value(content, template)
        if (
            template is not None
            and template.role == "assistant"
            and isinstance(template.native, AIMessage)
        ):
            return template.native.model_copy(
                update={"content": value, "tool_calls": tool_calls, "invalid_tool_calls": invalid}
            )
        return AIMessage(content=value, tool_calls=tool_calls, invalid_tool_calls=invalid)

    # -- blocks toolpair creates ----------------------------------------------------

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        if call.id is None:
            raise InvalidHistory("cannot answer a tool call that has no id")
        native = ToolMessage(
            content=text,
            tool_call_id=call.id,
            name=call.name,
            status="error" if is_error else "success",
        )
        return synthetic_result(native, call, is_error=is_error, empty=not text.strip())

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", text, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        native = block.native
        if block.kind == "result" and isinstance(native, ToolMessage):
            return replace(
                block, native=native.model_copy(update={"tool_call_id": new_id}), id=new_id
            )
        if block.kind == "call" and block.sub in ("tool_call", "invalid_tool_call"):
            new = _RenamedCall({**native, "id": new_id})
            new.original = getattr(native, "original", native.get("id"))
            return replace(block, native=new, id=new_id)
        if isinstance(native, Mapping):
            kind = native.get("type")
            key = _RESULT_ID if kind == _RESULT_BLOCK else _CALL_BLOCKS.get(str(kind), "id")
            return replace(block, native={**native, key: new_id}, id=new_id)
        raise InvalidHistory(f"cannot rename a {block.kind} block of type {type(native).__name__}")

    def content_of(self, block: Block) -> Any:
        """A result's content as LangChain stores it (compaction reads it)."""
        if isinstance(block.native, BaseMessage):
            return block.native.content
        if isinstance(block.native, Mapping):
            return block.native.get("content")
        return None

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is ``text`` (error filling, clearing)."""
        native = block.native
        if isinstance(native, Mapping) and native.get("type") == _RESULT_BLOCK:
            return replace(block, native={**native, "content": text}, empty=not text.strip())
        if not isinstance(native, ToolMessage):
            raise InvalidHistory("only a ToolMessage or tool_result block can take new content")
        native = native.model_copy(update={"content": text})
        return replace(block, native=native, empty=not text.strip())

    def result_as_text(self, block: Block) -> Block:
        content = self.content_of(block) if block.kind == "result" else block.native
        return self.make_text(
            ORPHAN_TEXT.format(id=block.id, content=content_text(content)), "user"
        )


# --- blank text: what ChatAnthropic's formatter sends -----------------------------------

#: `_trim_lands`: the final message's string content stays a string (stripped empty,
#: which Anthropic takes for a final assistant message).
_STRING = -1


@functools.cache
def _trims_final() -> bool:
    """Whether the installed ChatAnthropic strips trailing whitespace off the final
    assistant message (1.x does, 0.3.x does not). Asked of the formatter itself, once:
    the release that brought it is not recorded anywhere this package can read. Without
    langchain-anthropic, judged as the releases that send the text as it is."""
    try:
        from langchain_anthropic import ChatAnthropic

        model: Any = ChatAnthropic(model="claude-3-5-haiku-latest", api_key="probe")
        body = model._get_request_payload([HumanMessage("q"), AIMessage("a ")])
        return body["messages"][-1]["content"] == "a"
    except Exception:
        return False


def _user_side(native: Any) -> bool:
    # The messages the formatter merges into one user message, runs of them at a time.
    return isinstance(native, HumanMessage | ToolMessage)


def _settles(native: Any) -> bool:
    """Whether a HumanMessage sends non-blank text, or an empty text block (reported for
    itself): in a merged user message holding either, another message's whitespace-only
    text adds no error (Anthropic takes it beside text, and refuses the message for the
    empty block anyway)."""
    if not isinstance(native, HumanMessage):
        return False
    content = native.content
    if isinstance(content, str):
        return bool(content.strip())
    for part in content:
        if isinstance(part, str):
            if not part or part.strip():
                return True
        elif isinstance(part, Mapping) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str) and text.strip():
                return True
    return False


def _trim_lands(msg: AIMessage) -> int | None:
    """Where the formatter's strip of the final assistant message meets blank text:
    `_STRING` where string content stays a string, else the content position of a
    string part that ends the request message (the strip empties it); None where the
    message ends in anything else."""
    content = msg.content
    invalid = [c for c in msg.invalid_tool_calls if c.get("id") and c.get("name")]
    if isinstance(content, str):
        if not msg.tool_calls and not msg.invalid_tool_calls:
            return _STRING
        # It becomes a text block, followed by a tool_use block for every call.
        return 0 if not msg.tool_calls and not invalid else None
    ids: set[Any] = set()
    last: int | None = None
    for j, part in enumerate(content):
        if isinstance(part, str):
            last = j
            continue
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and not str(part.get("text") or "").strip():
            continue  # dropped
        if kind == "refusal" or (
            kind in ("reasoning", "function_call")
            and msg.response_metadata.get("model_provider") != "anthropic"
        ):
            continue  # dropped
        if kind == "tool_use" and isinstance(part, Mapping):
            ids.add(part.get("id"))
        last = None
    # A call without a tool_use block of its own gets one appended after the content.
    if any(c.get("id") not in ids for c in [*msg.tool_calls, *invalid]):
        return None
    return last


def _judge_blank(out: list[Message], holders: list[int]) -> None:
    """Turns the blank text ChatAnthropic's formatter sends as it stands into text
    blocks marked `_SENT`, the rest staying opaque. Sent: a list's string parts (empty
    ones too), string content of an assistant message and of a HumanMessage standing
    alone. Dropped: text block dicts, and a HumanMessage's string content where it is
    merged with the user-side messages beside it. Releases that strip the final
    assistant message empty a string part ending it (which Anthropic then refuses as
    empty) and leave blank string content as an empty string (which it takes).

    Where messages merge, a whitespace-only text is not marked if another message of the
    merged request message settles it (`_settles`): Anthropic's rules read each
    LangChain message apart and would refuse what the request takes."""
    final = -1
    for m in reversed(out):
        if m.role != "system":
            final = m.index if isinstance(m.native, AIMessage) else -1
            break
    for i in dict.fromkeys(holders):
        m = out[i]
        native = m.native
        if m.role == "system":
            continue  # the system prompt, not a message Anthropic's rules read
        group: range | None = None
        if isinstance(native, HumanMessage):
            start, end = i, i + 1
            while start > 0 and _user_side(out[start - 1].native):
                start -= 1
            while end < len(out) and _user_side(out[end].native):
                end += 1
            if end - start > 1:
                group = range(start, end)
        lands = _trim_lands(native) if i == final and _trims_final() else None
        settled: bool | None = None
        for j, b in enumerate(m.blocks):
            if b.sub != _BLANK or isinstance(b.native, Mapping):
                continue
            if isinstance(native.content, str) and (group is not None or lands == _STRING):
                continue
            text = "" if lands == j else str(b.native)
            if text and group is not None:
                if settled is None:
                    settled = any(_settles(out[k].native) for k in group if k != i)
                if settled:
                    continue
            b.kind = "text"
            b.sub = _SENT
            b.text = text
