"""The codec for pydantic-ai ``ModelMessage`` lists (1.x and 2.x).

Parts are told apart by ``part_kind`` rather than by class, because the classes were
renamed between versions (``BuiltinToolCallPart`` became ``NativeToolCallPart``) while
the serialized kinds stayed put, and typed subclasses (tool search, capability loading)
keep their base kind.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)

from toolpair import Block, InvalidHistory, Message
from toolpair._model import Bone, Codec, Role, Shape, Skeleton, synthetic_result
from toolpair.integrations._base import as_text

#: pydantic-ai's own marker for a return it synthesized; set on ours too so its repair
#: (and anything keyed on it downstream) treats them alike.
PYDANTIC_AI_SYNTHETIC_KEY = "pydantic_ai_synthesized_tool_return"
TOOLPAIR_SYNTHETIC_KEY = "toolpair_synthetic"

#: Outcomes pydantic-ai sends on the provider's error channel (``ERROR_OUTCOMES``).
_ERROR_OUTCOMES = frozenset({"failed", "retried"})

_ORPHAN_TEXT = "[tool result for call {id} (its call is not in this history)]: {content}"

_RETURN_FIELDS = frozenset(f.name for f in dataclasses.fields(ToolReturnPart))


def _same(part: Any) -> Any:
    return part


def _content_is_empty(content: Any) -> bool:
    """Whether a return's content is empty (a `Block`'s ``empty``)."""
    if content is None:
        return True
    if isinstance(content, str):
        return not content or content.isspace()
    if isinstance(content, list | tuple | dict):
        return len(content) == 0
    return False


def _item_text(item: Any) -> str | None:
    """The text of a user prompt's list item (a string or a ``TextContent``), else None."""
    if isinstance(item, str):
        return item
    if isinstance(item, TextContent):
        return item.content
    return None


def _user_prompt_text(content: Any) -> str | None:
    """The text `_user_prompt_block` decodes a user prompt's content to (None: media)."""
    if isinstance(content, str):
        return content
    items = list(content) if isinstance(content, Sequence) else [content]
    texts = [t for t in map(_item_text, items) if t is not None]
    return "\n".join(texts) if texts else None


def _user_prompt_block(part: Any) -> Block:
    text = _user_prompt_text(part.content)
    if text is None:
        return Block("image", part, sub="user-prompt")
    return Block("text", part, text=text)


#: Part kinds decode refuses where they stand.
_MISPLACED_IN_REQUEST = frozenset({"tool-call", "builtin-tool-call", "builtin-tool-return"})
_MISPLACED_IN_RESPONSE = frozenset({"tool-return", "retry-prompt", "user-prompt", "system-prompt"})


def _request_block(part: Any, index: int) -> Block:
    kind = getattr(part, "part_kind", None)
    if kind == "tool-return":
        return Block(
            "result",
            part,
            id=part.tool_call_id,
            name=part.tool_name,
            is_error=getattr(part, "outcome", "success") in _ERROR_OUTCOMES,
            empty=_content_is_empty(part.content),
        )
    if kind == "retry-prompt":
        if part.tool_name is not None:
            # A tool-bound retry prompt is the result of that call (sent as is_error).
            return Block(
                "result",
                part,
                id=part.tool_call_id,
                name=part.tool_name,
                is_error=True,
                empty=_content_is_empty(part.content),
            )
        return Block("text", part, text=part.model_response())
    if kind == "user-prompt":
        return _user_prompt_block(part)
    if kind is None or kind in _MISPLACED_IN_REQUEST:
        raise _misplaced(part, index, "ModelRequest", "ModelResponse")
    # System prompts, retry feedback, compaction summaries and bookkeeping parts: not
    # part of pairing, kept where they are.
    return Block("other", part, sub=str(kind))


def _response_block(part: Any, index: int) -> Block:
    kind = getattr(part, "part_kind", None)
    if kind == "tool-call":
        return Block("call", part, id=part.tool_call_id, name=part.tool_name)
    if kind == "text":
        return Block("text", part, text=part.content)
    if kind == "thinking":
        return Block("thinking", part)
    if kind == "builtin-tool-call":
        return Block("server_call", part, id=part.tool_call_id, name=part.tool_name, sub=kind)
    if kind == "builtin-tool-return":
        return Block("server_result", part, id=part.tool_call_id, name=part.tool_name, sub=kind)
    if kind is None or kind in _MISPLACED_IN_RESPONSE:
        raise _misplaced(part, index, "ModelResponse", "ModelRequest")
    return Block("other", part, sub=str(kind))


def _misplaced(part: Any, index: int, held_in: str, belongs_in: str) -> InvalidHistory:
    """The error for a part of the other message kind, or for no pydantic-ai part."""
    name = type(part).__name__
    if getattr(part, "part_kind", None) is None:
        return InvalidHistory(f"{name} is not a pydantic-ai message part", index)
    return InvalidHistory(f"a {held_in} holds a {name}, which belongs in a {belongs_in}", index)


#: The `Block.item_id` of a call GoogleModel sends with a thought signature.
SIGNED = "thought_signature"

#: Skeleton blocks (`PydanticAICodec.skeleton`) as `toolpair.engine.skeleton.from_view`
#: reads the blocks `decode` makes.
_OTHER: Bone = ("other", None, None)
_THOUGHT: Bone = ("thinking", None, True)  # no signature is asked of a ThinkingPart
_SERVER_CALL: Bone = ("server_call", None, None)
_SERVER_RESULT: Bone = ("server_result", None, None)


class PydanticAICodec(Codec):
    """Reads and writes ``list[ModelMessage]``.

    One instance may serve any number of histories; `decode` also remembers each call
    part's response timestamp so a synthesized return can reuse it, as pydantic-ai's own
    repair does, which keeps repeated repairs byte-identical (prompt caches stay warm).
    A history repaired in pieces is decoded a piece at a time before any piece is
    repaired, so what a decode remembers outlives the next decode; it is held weakly,
    and goes when the call part does.
    """

    name = "pydantic-ai"
    shape: Shape = "blocks"

    def __init__(self, *, signs_first_call: bool = False) -> None:
        self._call_times: dict[int, tuple[Callable[[], Any], datetime]] = {}
        #: GoogleModel sends the first call of every response with a thought signature,
        #: its own or Google's documented bypass value: with this set (for Gemini and
        #: Vertex), that call is read as signed, as it will be on the wire.
        self.signs_first_call = signs_first_call

    def _remember(self, part: Any, when: datetime) -> None:
        key = id(part)
        times = self._call_times
        try:
            # Keyed by id, as parts do not hash; the entry dies with the part, before
            # its id can be given to another object.
            ref: Callable[[], Any] = weakref.ref(part, functools.partial(times.pop, key))
        except TypeError:  # a part type without weak references: kept alive instead
            ref = functools.partial(_same, part)
        times[key] = (ref, when)

    def _time_of(self, part: Any) -> datetime | None:
        entry = self._call_times.get(id(part))
        return entry[1] if entry is not None and entry[0]() is part else None

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
            raise InvalidHistory(
                f"a pydantic-ai history is a list of ModelMessage, got {type(messages).__name__}"
            )
        out: list[Message] = []
        for i, msg in enumerate(messages):
            parts = getattr(msg, "parts", None)
            if not isinstance(parts, Sequence) or isinstance(parts, str):
                raise InvalidHistory(
                    f"expected a ModelRequest or ModelResponse, got {type(msg).__name__}", i
                )
            if isinstance(msg, ModelRequest):
                out.append(Message("user", [_request_block(p, i) for p in parts], msg, i))
            elif isinstance(msg, ModelResponse):
                blocks = [_response_block(p, i) for p in parts]
                signed = not self.signs_first_call
                for b in blocks:
                    if b.kind == "call":
                        self._remember(b.native, msg.timestamp)
                        if not signed:
                            b.item_id = SIGNED
                            signed = True
                out.append(Message("assistant", blocks, msg, i))
            else:
                raise InvalidHistory(
                    f"expected a ModelRequest or ModelResponse, got {type(msg).__name__}", i
                )
        return out

    splits = True

    def side(self, native: Any) -> str:
        """Which side of the conversation a message is on ("a" for the model's), so
        that the core can repair a long history in pieces (`toolpair.engine.chunked`)."""
        return "a" if isinstance(native, ModelResponse) else "u"

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """What `decode` makes of the messages, read in one pass (every provider's no-op
        path reads it); None where decode would refuse one.

        It runs on every request: the common parts (returns, calls, texts) are read
        inline, as a call per part would cost most of the pass."""
        out: Skeleton = []
        add = out.append
        request, response = ModelRequest, ModelResponse
        errors, sign = _ERROR_OUTCOMES, self.signs_first_call
        for msg in messages:
            cls = type(msg)
            parts = msg.parts
            if type(parts) is not list and (
                isinstance(parts, str) or not isinstance(parts, Sequence)
            ):
                return None
            bones: list[Bone] = []
            if cls is request or (cls is not response and isinstance(msg, request)):
                for p in parts:
                    k = p.part_kind
                    if k == "tool-return":
                        i = p.tool_call_id
                        bad = getattr(p, "outcome", "success") in errors and _content_is_empty(
                            p.content
                        )
                        bones.append(_OTHER if i is None else ("result", i, bad))
                    elif k == "user-prompt":
                        text = _user_prompt_text(p.content)
                        bones.append(
                            ("image", None, "user-prompt") if text is None else ("text", None, text)
                        )
                    elif k == "retry-prompt":
                        if p.tool_name is None:
                            bones.append(("text", None, p.model_response()))
                        else:
                            i = p.tool_call_id
                            bad = _content_is_empty(p.content)
                            bones.append(_OTHER if i is None else ("result", i, bad))
                    elif k in _MISPLACED_IN_REQUEST or not isinstance(k, str):
                        return None  # decode refuses it
                    else:
                        bones.append(_OTHER)
                add(("user", bones))
            elif cls is response or isinstance(msg, response):
                signed = not sign
                for p in parts:
                    k = p.part_kind
                    if k == "tool-call":
                        i = p.tool_call_id
                        kind = "call" if signed else "item_call"
                        signed = True
                        bones.append(_OTHER if i is None else (kind, i, p.tool_name))
                    elif k == "text":
                        text = p.content
                        bones.append(_OTHER if text is None else ("text", None, text))
                    elif k == "thinking":
                        bones.append(_THOUGHT)
                    elif k == "builtin-tool-call":
                        bones.append(_SERVER_CALL)
                    elif k == "builtin-tool-return":
                        bones.append(_SERVER_RESULT)
                    elif k in _MISPLACED_IN_RESPONSE or not isinstance(k, str):
                        return None  # decode refuses it
                    else:
                        bones.append(_OTHER)
                add(("assistant", bones))
            else:
                return None
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        parts = [b.native for b in blocks]
        native = template.native if template is not None else None
        if role == "assistant":
            if isinstance(native, ModelResponse):
                return dataclasses.replace(native, parts=parts)
            return ModelResponse(parts=parts)
        if isinstance(native, ModelRequest):
            return dataclasses.replace(native, parts=parts)
        return ModelRequest(parts=parts)

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        kwargs: dict[str, Any] = {
            "tool_name": call.name or "",
            "content": text,
            "tool_call_id": call.id or "",
        }
        tool_kind = getattr(call.native, "tool_kind", None)
        if "tool_kind" in _RETURN_FIELDS and tool_kind is not None:
            kwargs["tool_kind"] = tool_kind
        if "metadata" in _RETURN_FIELDS:
            kwargs["metadata"] = {PYDANTIC_AI_SYNTHETIC_KEY: True, TOOLPAIR_SYNTHETIC_KEY: True}
        if "outcome" in _RETURN_FIELDS:
            # "failed" is on pydantic-ai's error channel (is_error on the wire);
            # "interrupted" is its word for a call that never produced a result.
            kwargs["outcome"] = "failed" if is_error else "interrupted"
        when = self._time_of(call.native)
        if when is not None:
            kwargs["timestamp"] = when
        native = ToolReturnPart(**kwargs)
        # Pre-outcome 1.x versions have no error channel for a ToolReturnPart.
        return synthetic_result(native, call, is_error=is_error and "outcome" in _RETURN_FIELDS)

    def make_text(self, text: str, role: Role) -> Block:
        if role == "assistant":
            return Block("text", TextPart(content=text), text=text)
        return Block("text", UserPromptPart(content=text), text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        native = dataclasses.replace(block.native, tool_call_id=new_id)
        if block.kind == "call":
            when = self._time_of(block.native)
            if when is not None:
                self._remember(native, when)
        return dataclasses.replace(block, native=native, id=new_id)

    def result_as_text(self, block: Block) -> Block:
        part = block.native
        render = getattr(part, "model_response_str", None)
        content = render() if callable(render) else as_text(getattr(part, "content", None))
        return self.make_text(_ORPHAN_TEXT.format(id=block.id, content=content), "user")

    def sends_blank_text(self, block: Block, provider: str) -> bool:
        """Whether pydantic-ai's Anthropic formatter (``AnthropicModel._map_message``, the
        same in 1.x and 2.x) sends this blank text block: it drops an empty ``TextPart``
        or user prompt string, and each empty string or ``TextContent`` in a user
        prompt's list, and sends whitespace as it stands. A list's text is decoded as its
        items joined, so it is sent when any item is non-empty. Other text blocks (a
        tool-less retry prompt's ``model_response()``) are never blank."""
        content = getattr(block.native, "content", None)
        if isinstance(content, str):
            return content != ""
        if isinstance(content, Sequence):
            return any(_item_text(c) for c in content)
        return False

    # Optional editing methods the core's compaction (clear_tool_results) uses.

    def content_of(self, block: Block) -> Any:
        """A result's content as pydantic-ai stores it."""
        return getattr(block.native, "content", None)

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is the plain text ``text``."""
        native = dataclasses.replace(block.native, content=text)
        return dataclasses.replace(block, native=native, empty=not text.strip())

    def without_input(self, block: Block) -> Block:
        """A copy of a call with empty arguments (the same block if already empty)."""
        if block.native.args in (None, {}, "", "{}"):
            return block
        return dataclasses.replace(block, native=dataclasses.replace(block.native, args={}))
