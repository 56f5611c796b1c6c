"""The codec for agno ``Message`` lists.

agno keeps one OpenAI-shaped history for every provider: assistant messages carry their
calls in ``tool_calls`` and each result is its own ``role="tool"`` message, so this is a
``chat``-shape codec. Every provider formatter reads these same objects, which is why a
repair done here reaches every model class.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from agno.models.message import Message as AgnoMessage

from toolpair import Block, Codec, InvalidHistory, Message
from toolpair._model import synthetic_result
from toolpair.engine.skeleton import Bone, Skeleton
from toolpair.formats import ORPHAN_TEXT, content_is_empty, stringify
from toolpair.integrations._base import lone_result_home, native_result

Role = Literal["system", "user", "assistant", "tool"]

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "tool": "tool",
}

#: Stands in for a result whose call is gone, under the orphans="text" policy.


@dataclass(frozen=True, slots=True)
class Reasoning:
    """The native of a thinking block: agno keeps reasoning in message fields, not in
    the content, so the block only marks that those fields must be replayed as they are."""

    reasoning_content: str | None
    redacted_reasoning_content: str | None


def _content_blocks(content: Any, index: int, blank: list[int]) -> list[Block]:
    """The blocks of ``content``; ``index`` joins ``blank`` for each blank text."""
    if content is None:
        return []
    if isinstance(content, str):
        if not content:
            return []
        block = Block("text", content, text=content)
        if content.isspace():
            blank.append(index)
        return [block]
    if isinstance(content, list | tuple):
        blocks = []
        for part in content:
            if isinstance(part, str):
                block = Block("text", part, text=part)
                if not part or part.isspace():
                    blank.append(index)
                blocks.append(block)
                continue
            t = part.get("type") if isinstance(part, Mapping) else None
            if t == "text":
                text = part.get("text")
                text = text if isinstance(text, str) else None
                block = Block("text", part, text=text)
                if text is not None and (not text or text.isspace()):
                    blank.append(index)
                blocks.append(block)
            elif t in ("image", "image_url", "input_image"):
                blocks.append(Block("image", part, sub=t))
            elif t in ("thinking", "redacted_thinking"):
                blocks.append(Block("thinking", part, sub=t))
            else:
                # Anthropic tool_use blocks kept in list content are not agno's calls:
                # only ``tool_calls`` is, so they pass through as unknown content.
                blocks.append(Block("other", part, sub=str(t) if t is not None else None))
        return blocks
    raise InvalidHistory(f"content must be a string or a list, got {type(content).__name__}", index)


#: A block the skeleton checkers do not model.
_OTHER: Bone = ("other", None, None)


def _media_lists(m: Any) -> bool:
    """Whether every media field of ``m`` is a list (decode iterates them)."""
    return all(not media or type(media) is list for media in (m.images, m.audio, m.videos, m.files))


def _media_blocks(msg: Any) -> list[Block]:
    blocks = [Block("image", img, sub="images") for img in getattr(msg, "images", None) or []]
    for field in ("audio", "videos", "files"):
        blocks.extend(Block("other", m, sub=field) for m in getattr(msg, field, None) or [])
    return blocks


#: The profiles whose rules read Gemini thought signatures, and the `Block.item_id` of
#: a call agno's Gemini formatter sends with one (``tool_call["thought_signature"]``).
_GEMINI = frozenset({"gemini", "vertex"})
SIGNED = "thought_signature"


def _call_block(tc: Any, index: int, gemini: bool = False) -> Block:
    if not isinstance(tc, Mapping):
        raise InvalidHistory(f"tool_calls entry must be a dict, got {type(tc).__name__}", index)
    call_id = tc.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidHistory("tool_calls[].id is missing", index)
    fn = tc.get("function")
    name = fn.get("name") if isinstance(fn, Mapping) else None
    secondary = tc.get("call_id")
    return Block(
        "call",
        tc,
        id=call_id,
        name=name if isinstance(name, str) else None,
        item_id=_secondary(tc, secondary, gemini),
    )


def _secondary(tc: Mapping[str, Any], call_id: Any, gemini: bool) -> str | None:
    # Gemini's rules read the secondary id as the call's thought signature; the others
    # as its Responses call_id.
    if gemini:
        return SIGNED if tc.get("thought_signature") else None
    return call_id if isinstance(call_id, str) else None


#: Bedrock's alternation rule (B4) kept for every model: see `AgnoCodec.keeps`.
_KEEPS_BEDROCK = frozenset({"bedrock.roles_not_alternating"})


class AgnoCodec(Codec):
    """Reads and writes lists of ``agno.models.message.Message``.

    Calls are keyed by their ``id``, which is what agno itself puts in a result's
    ``tool_call_id``; a result naming an OpenAI Responses ``call_id`` instead is mapped
    back to its call, the way agno's Responses formatter does.

    For Anthropic (and where no provider is named), Anthropic-native blocks in list
    content are read as what agno's Claude formatter makes of them: a ``tool_result``
    in a user message is a result, and a ``tool_use`` in an assistant message without
    ``tool_calls`` is a call where the formatter sends list content. A native result
    that repair moves travels as a user message holding it.
    """

    name = "agno"
    shape = "chat"

    def __init__(self, provider: str | None = None) -> None:
        # new id -> id the call had, so `build` can rename the matching replayed
        # Anthropic content block instead of letting agno drop it as unknown.
        self._renamed: dict[str, str] = {}
        #: For Gemini and Vertex a call's secondary id is its thought signature.
        self._gemini = provider in _GEMINI
        #: DeepSeek's Responses endpoint wants outputs right after their calls, and agno
        #: sends an empty assistant message as an item between them: it is read as one.
        self._empty_items = provider == "deepseek-responses"
        #: Whether Anthropic-native tool_use/tool_result blocks reach the provider as
        #: a call and a result (agno passes them to other providers as unknown parts).
        self._native = provider in (None, "anthropic", "portable")

    splits = True
    #: The checkers whose pieces its tests hold to the full path's answer: agno's full
    #: path rewrites more than other providers' rules ask for.
    pieces = frozenset({"anthropic", "openai"})

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """What `decode` makes of the messages agno keeps (string or text-part content,
        calls in ``tool_calls``, media), read in one pass; None for anything else."""
        out: Skeleton = []
        add = out.append
        gemini = self._gemini
        for m in messages:
            if type(m) is not AgnoMessage:
                return None
            role = _ROLES.get(m.role)
            if role is None:
                return None
            if role == "tool":
                i = m.tool_call_id
                if type(i) is not str or not i:
                    return None
                if m.tool_calls:
                    return None  # calls on a result: the full path judges them
                bad = bool(m.tool_call_error) and content_is_empty(m.content)
                add(("tool", [("result", i, bad)]))
                continue
            bones: list[Bone] = []
            if role == "assistant" and (m.reasoning_content or m.redacted_reasoning_content):
                bones.append(("thinking", None, True))
            content = m.content
            if type(content) is str:
                if content:
                    bones.append(("text", None, content))
            elif type(content) is list:
                for part in content:
                    if type(part) is str:
                        bones.append(("text", None, part))
                    elif type(part) is dict and part.get("type") == "text":
                        text = part.get("text")
                        bones.append(("text", None, text) if type(text) is str else _OTHER)
                    elif type(part) is dict and part.get("type") == "redacted_thinking":
                        bones.append(("thinking", None, True))
                    elif type(part) is dict and part.get("type") == "thinking":
                        sig = part.get("signature")
                        bones.append(("thinking", None, type(sig) is str and bool(sig)))
                    else:
                        return None  # images, native blocks: decode reads them
            elif content is not None:
                return None
            if m.images or m.audio or m.videos or m.files:
                if not _media_lists(m):
                    return None
                bones.extend(("image", None, "images") for _ in m.images or ())
                for field in (m.audio, m.videos, m.files):
                    bones.extend(("other", None, None) for _ in field or ())
            tcs = m.tool_calls
            if tcs:
                if role != "assistant" or type(tcs) is not list:
                    return None
                for tc in tcs:
                    i = tc.get("id") if type(tc) is dict else None
                    if type(i) is not str or not i or "call_id" in tc:
                        return None  # a Responses call_id: results may name it instead
                    fn = tc.get("function")
                    name = fn.get("name") if isinstance(fn, Mapping) else None
                    # A thought signature is the call's secondary id (`_secondary`).
                    kind = "item_call" if gemini and tc.get("thought_signature") else "call"
                    bones.append((kind, i, name if isinstance(name, str) else None))
            if not bones and role == "assistant" and self._empty_items:
                return None
            add((role, bones))
        return out

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        call_id_to_id: dict[str, str | None] = {}
        for m in messages:
            for tc in getattr(m, "tool_calls", None) or []:
                if isinstance(tc, Mapping) and isinstance(tc.get("call_id"), str):
                    call_id_to_id.setdefault(tc["call_id"], tc.get("id"))
        out: list[Message] = []
        blank: list[int] = []
        for i, msg in enumerate(messages):
            out.append(self._decode_one(msg, i, call_id_to_id, blank))
        if blank:
            _judge_blank(out, blank)
        return out

    def keeps(self, provider: str) -> frozenset[str]:
        # agno's Converse formatter merges a user message into the tool results before
        # it: two user turns in a row reach Bedrock as text beside results.
        return _KEEPS_BEDROCK if provider == "bedrock" else frozenset()

    def sends_blank_text(self, block: Block, provider: str) -> bool:
        """Whether agno's Claude formatter sends this blank text where Anthropic judges
        it (`decode` settled it: see `_judge_blank`). Anthropic's rules ask it for
        "anthropic" and "portable" alike; no other provider's rules read blank text."""
        return block.sub == _SENT

    def _decode_one(
        self, msg: Any, i: int, call_id_to_id: Mapping[str, str | None], blank: list[int]
    ) -> Message:
        if not isinstance(msg, AgnoMessage):
            raise InvalidHistory(f"expected an agno Message, got {type(msg).__name__}", i)
        role = _ROLES.get(msg.role)
        if role is None:
            raise InvalidHistory(f"unknown role {msg.role!r}", i)
        if role == "tool":
            result_id = msg.tool_call_id
            if not isinstance(result_id, str) or not result_id:
                raise InvalidHistory("tool message without tool_call_id", i)
            mapped = call_id_to_id.get(result_id)
            if isinstance(mapped, str):
                result_id = mapped
            block = Block(
                "result",
                msg,
                id=result_id,
                name=msg.tool_name,
                is_error=bool(msg.tool_call_error),
                empty=content_is_empty(msg.content),
            )
            return Message("tool", [block], msg, i)
        blocks: list[Block] = []
        if role == "assistant" and (msg.reasoning_content or msg.redacted_reasoning_content):
            native = Reasoning(msg.reasoning_content, msg.redacted_reasoning_content)
            blocks.append(Block("thinking", native, sub="reasoning_content"))
        blocks.extend(_content_blocks(msg.content, i, blank))
        if self._native and isinstance(msg.content, list):
            _read_native(blocks, msg, role, i)
        blocks.extend(_media_blocks(msg))
        if role == "assistant" and msg.tool_calls:
            if not isinstance(msg.tool_calls, list | tuple):
                raise InvalidHistory("tool_calls must be a list", i)
            blocks.extend(_call_block(tc, i, self._gemini) for tc in msg.tool_calls)
        if not blocks and role == "assistant" and self._empty_items:
            # agno's Responses formatter sends it as an item of its own.
            blocks.append(Block("other", None, sub=_EMPTY))
        return Message(role, blocks, msg, i)

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        if role == "tool":
            native = blocks[0].native
            if not isinstance(native, Mapping):
                return native
            tpl = template.native if template is not None else None
            home = lone_result_home(tpl, AgnoMessage, native)
            if home is not None:
                return home
            return AgnoMessage(
                role="user", content=[native], add_to_agent_memory=False, toolpair_synthetic=True
            )
        calls = [b.native for b in blocks if b.kind == "call" and b.sub != _NATIVE]
        content = [
            b
            for b in blocks
            if (b.kind in ("text", "other", "image", "thinking") and b.sub != _EMPTY)
            or (b.kind in ("call", "result") and isinstance(b.native, Mapping) and b.sub == _NATIVE)
        ]
        content = [b for b in content if not isinstance(b.native, Reasoning)]
        content = [b for b in content if b.sub not in ("images", "audio", "videos", "files")]
        if template is None or template.native.role not in _roles_for(role):
            return AgnoMessage(
                role=role,
                content=_content_value(content, None),
                tool_calls=calls or None,
                add_to_agent_memory=False,
                toolpair_synthetic=True,
            )
        kept: AgnoMessage = template.native
        old_content = [
            b
            for b in template.blocks
            if b.kind != "call"
            and b.sub != _EMPTY
            and not isinstance(b.native, Reasoning)
            and b.sub not in ("images", "audio", "videos", "files")
        ]
        update: dict[str, Any] = {}
        if [id(b.native) for b in content] != [id(b.native) for b in old_content]:
            update["content"] = _content_value(content, kept.content)
        if role == "assistant":
            update["tool_calls"] = calls or None
            kept_thinking = any(isinstance(b.native, Reasoning) for b in blocks)
            if not kept_thinking:
                update["reasoning_content"] = None
                update["redacted_reasoning_content"] = None
            provider_data = self._provider_data(kept.provider_data, calls, kept_thinking)
            if provider_data is not kept.provider_data:
                update["provider_data"] = provider_data
        return kept.model_copy(update=update)

    def _provider_data(self, data: Any, calls: list[Any], kept_thinking: bool) -> Any:
        """Claude replays ``provider_data["content_blocks"]`` verbatim: keep its
        tool_use ids in step with the calls, and drop its thinking with the thinking."""
        if not isinstance(data, Mapping) or not isinstance(data.get("content_blocks"), list):
            return data
        renames = {
            self._renamed[tc["id"]]: tc["id"]
            for tc in calls
            if isinstance(tc, Mapping) and tc.get("id") in self._renamed
        }
        if not renames and kept_thinking:
            return data
        new_blocks = []
        for cb in data["content_blocks"]:
            t = cb.get("type") if isinstance(cb, Mapping) else None
            if not kept_thinking and t in ("thinking", "redacted_thinking"):
                continue
            if t == "tool_use" and cb.get("id") in renames:
                cb = {**cb, "id": renames[cb["id"]]}
            new_blocks.append(cb)
        return {**data, "content_blocks": new_blocks}

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        native = AgnoMessage(
            role="tool",
            content=text,
            tool_call_id=call.id,
            tool_name=call.name,
            tool_call_error=is_error or None,
            add_to_agent_memory=False,
            toolpair_synthetic=True,
        )
        return synthetic_result(native, call, is_error=is_error, empty=not text)

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", text, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        if block.kind == "call":
            tc = dict(block.native)
            old = tc.get("id")
            tc["id"] = new_id
            if "call_id" in tc:
                tc["call_id"] = new_id
            if isinstance(old, str):
                self._renamed[new_id] = self._renamed.get(old, old)
            item_id = _secondary(tc, tc.get("call_id"), self._gemini)
            return replace(block, native=tc, id=new_id, item_id=item_id)
        if isinstance(block.native, Mapping):
            return replace(block, native={**block.native, _RESULT_ID: new_id}, id=new_id)
        native = block.native.model_copy(update={"tool_call_id": new_id})
        return replace(block, native=native, id=new_id)

    def with_signature(self, block: Block, signature: str) -> Block:
        """A copy of a call carrying ``signature`` as its thought signature, where agno
        keeps one: base64 in ``tool_call["thought_signature"]``, which its Gemini
        formatter decodes into the part's bytes."""
        encoded = base64.b64encode(signature.encode("utf-8")).decode("ascii")
        return replace(block, native={**block.native, "thought_signature": encoded}, item_id=SIGNED)

    def content_of(self, block: Block) -> Any:
        """A result's content as agno stores it (compaction reads it)."""
        if isinstance(block.native, Mapping):
            return block.native.get("content")
        return block.native.content

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is ``text`` (error filling, clearing)."""
        if isinstance(block.native, Mapping):
            return replace(block, native={**block.native, "content": text}, empty=not text.strip())
        native = block.native.model_copy(update={"content": text})
        return replace(block, native=native, empty=not text.strip())

    def result_as_text(self, block: Block) -> Block:
        text = ORPHAN_TEXT.format(id=block.id, content=stringify(self.content_of(block)))
        return self.make_text(text, "user")


#: The sub-type of the block standing for an empty assistant message sent as an item.
_EMPTY = "empty_message"
#: Anthropic-native blocks in list content read as a call or a result (`_read_native`).
_NATIVE = "native"
_RESULT_BLOCK = "tool_result"
_RESULT_ID = "tool_use_id"


def _read_native(blocks: list[Block], msg: AgnoMessage, role: Role, index: int) -> None:
    """Turns the Anthropic-native blocks of ``msg``'s list content that agno's Claude
    formatter sends as a call or a result into call and result blocks, in place."""
    if role == "assistant":
        claude = _claude()
        if msg.tool_calls or not claude.lists or (claude.replays and _stored(msg)):
            return  # the formatter drops them, or sends stored blocks instead
        kind, key = "tool_use", "id"
    elif role == "user":
        kind, key = _RESULT_BLOCK, _RESULT_ID
    else:
        return
    for k, b in enumerate(blocks):
        part = b.native
        if b.kind != "other" or b.sub != kind or not isinstance(part, Mapping):
            continue
        block_id = part.get(key)
        if block_id is not None and not isinstance(block_id, str):
            raise InvalidHistory(f"{kind} {key} must be a string", index)
        if role == "assistant":
            name = part.get("name")
            blocks[k] = Block(
                "call", part, id=block_id, name=name if isinstance(name, str) else None, sub=_NATIVE
            )
        else:
            blocks[k] = native_result(part, index, sub=_NATIVE, empty=content_is_empty)


def _roles_for(role: Role) -> tuple[str, ...]:
    return tuple(k for k, v in _ROLES.items() if v == role)


def _content_value(blocks: Sequence[Block], original: Any) -> Any:
    if not blocks:
        return None
    if isinstance(original, list) or any(not isinstance(b.native, str) for b in blocks):
        return [
            {"type": "text", "text": b.native} if isinstance(b.native, str) else b.native
            for b in blocks
        ]
    return "\n\n".join(b.native for b in blocks)


# --- blank text: what agno's Claude formatter sends ------------------------------------

#: ``sub`` of a blank text block that agno's Claude formatter sends where Anthropic judges
#: it (what `AgnoCodec.sends_blank_text` reads).
_SENT = "blank_text_sent"


@dataclass(frozen=True, slots=True)
class _Claude:
    """What the installed ``agno.utils.models.claude.format_messages`` does where agno
    releases differ (2.3.8 does none of these, 3.1 all three)."""

    #: Consecutive request messages of one role become one (system messages and the
    #: assistant messages it drops for being empty do not separate them).
    merges: bool
    #: An assistant's list content is sent: its block dicts as they are.
    lists: bool
    #: A non-empty ``provider_data["content_blocks"]`` is sent instead of the content.
    replays: bool


def _text_of(block: Any) -> Any:
    return block.get("text") if isinstance(block, dict) else getattr(block, "text", None)


@functools.cache
def _claude() -> _Claude:
    """Asks the installed formatter itself, once: which release brought each of these is
    not recorded anywhere this package can read, and behaviour cannot be mistaken."""
    try:
        from agno.utils.models.claude import format_messages

        merged, _ = format_messages(
            [AgnoMessage(role="user", content="a"), AgnoMessage(role="user", content="b")]
        )
        listed, _ = format_messages(
            [AgnoMessage(role="assistant", content=[{"type": "text", "text": "a"}])]
        )
        stored, _ = format_messages(
            [
                AgnoMessage(
                    role="assistant",
                    content="a",
                    provider_data={"content_blocks": [{"type": "text", "text": "b"}]},
                )
            ]
        )
        return _Claude(
            merges=len(merged) == 1,
            lists=len(listed) == 1,
            replays=_text_of(stored[0]["content"][0]) == "b",
        )
    except Exception:
        # No formatter to ask (agno's Claude support needs the anthropic SDK): judge
        # every blank text some release sends as sent, and on its own.
        return _Claude(merges=False, lists=True, replays=False)


def _stored(m: AgnoMessage) -> bool:
    data = m.provider_data
    blocks = data.get("content_blocks") if isinstance(data, dict) else None
    return isinstance(blocks, list) and bool(blocks)


def _sent(m: AgnoMessage, block: Block, claude: _Claude) -> bool:
    """Whether the formatter puts this blank text of ``m`` into the request as it is."""
    if m.role == "user":
        # String content becomes one text block; list content goes as it is, where only
        # a dict is a block (a bare string is refused whatever it holds, not as text).
        return isinstance(m.content, str) or isinstance(block.native, dict)
    if m.role in ("assistant", "model"):
        # String content is sent only if it holds non-blank text; a list's block dicts
        # are, by the releases that send list content, unless stored blocks replace it.
        return (
            claude.lists and isinstance(block.native, dict) and not (claude.replays and _stored(m))
        )
    return False


def _settles(m: AgnoMessage, claude: _Claude) -> bool:
    """Whether ``m`` sends non-blank text, or an empty text block toolpair reports: in a
    request message holding either, a whitespace-only text from another agno message
    adds no error of its own (Anthropic takes it beside text, and refuses the message
    for its empty block anyway)."""
    content = m.content
    if m.role in ("assistant", "model"):
        if claude.replays and _stored(m):
            texts = [_text_of(b) for b in (m.provider_data or {})["content_blocks"]]
            return any(isinstance(t, str) and t.strip() for t in texts)
        if isinstance(content, list):
            return claude.lists and _list_settles(content)
        return isinstance(content, str) and bool(content.strip())
    if m.role != "user":
        return False
    if isinstance(content, list):
        return _list_settles(content)
    return isinstance(content, str) and bool(content.strip())


def _list_settles(content: list[Any]) -> bool:
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str) and (not text or text.strip()):
                return True
    return False


def _emits(m: AgnoMessage, claude: _Claude) -> bool:
    """Whether the formatter keeps assistant message ``m`` (it drops one left with no
    content); True where unsure, which only keeps request messages apart."""
    if m.tool_calls or m.redacted_reasoning_content is not None:
        return True
    data = m.provider_data
    if data is not None and (m.reasoning_content is not None or not isinstance(data, dict)):
        return True
    if isinstance(data, dict) and (
        data.get("server_tool_blocks") or (claude.replays and _stored(m))
    ):
        return True
    content = m.content
    if isinstance(content, str):
        return bool(content.strip())
    return (
        claude.lists
        and isinstance(content, list)
        and any(not isinstance(part, str) for part in content)
    )


def _judge_blank(out: list[Message], holders: list[int]) -> None:
    """Marks the blank text blocks of ``out[i]`` (``i`` in ``holders``) that agno's
    Claude formatter sends where Anthropic judges them.

    Where the formatter merges messages, a whitespace-only text beside another agno
    message's text is not marked: Anthropic's rules read each agno message apart, and
    would refuse what the request takes. Given only a piece of a history, a request
    message reaching past it is judged on the piece's part of it, which can only report
    more, never less."""
    claude = _claude()
    group: list[int] = []  # out position -> request message, -1 for none
    if claude.merges:
        g, last = -1, ""
        for m in out:
            role = "user" if m.role in ("user", "tool") else m.role
            if role == "system" or (role == "assistant" and not _emits(m.native, claude)):
                group.append(-1)
                continue
            if role != last:
                g, last = g + 1, role
            group.append(g)
    for i in dict.fromkeys(holders):
        m = out[i]
        settled: bool | None = None  # found only once a whitespace-only text is sent
        for b in m.blocks:
            if b.kind != "text" or b.text is None or b.text.strip():
                continue
            if not _sent(m.native, b, claude):
                continue
            if b.text and claude.merges:
                if settled is None:
                    settled = _settled_beside(out, group, i, claude)
                if settled:
                    continue
            b.sub = _SENT


def _settled_beside(out: list[Message], group: list[int], i: int, claude: _Claude) -> bool:
    g = group[i]
    j = i - 1
    while j >= 0 and group[j] in (g, -1):
        if group[j] == g and _settles(out[j].native, claude):
            return True
        j -= 1
    j = i + 1
    while j < len(out) and group[j] in (g, -1):
        if group[j] == g and _settles(out[j].native, claude):
            return True
        j += 1
    return False
