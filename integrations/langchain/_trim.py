"""A pair-safe drop-in for ``langchain_core.messages.trim_messages``.

Same signature, defaults, errors and results as LangChain's on histories without tool
calls. The difference: it keeps or drops whole units (an assistant message with all its
tool results; toolpair.units decides), so its output never holds a tool call without its
results or a result without its call unless the input already did. Units are counted one
at a time in the order they are taken (newest first for the "last" strategy), each once,
and counting stops at the first that does not fit, instead of counting the whole history
and then re-counting prefixes in a binary search.

A plain history (human, system and AI messages, each run of tool results answering the AI
message right before it) is cut into units natively; anything else goes through the
codec and toolpair.units, which the fast path is tested to agree with.

Counting a unit on its own assumes what LangChain's own partial-message search already
assumes: a list counter is additive over messages, up to a constant per-list overhead
(``token_counter([])``), which is subtracted once per unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

import toolpair

from .._langchain_messages import list_counter
from ._codec import _CALL_BLOCKS, _CHAT_ROLES, LangChainCodec

__all__ = ["trim_messages"]

TypeSpec = str | type[BaseMessage] | Sequence[str | type[BaseMessage]]
Unit = list[BaseMessage]


def _is_type(message: BaseMessage, spec: TypeSpec) -> bool:
    types = [spec] if isinstance(spec, str | type) else list(spec)
    names = [t for t in types if isinstance(t, str)]
    classes = tuple(t for t in types if isinstance(t, type))
    return message.type in names or isinstance(message, classes)


def _default_text_splitter(text: str) -> list[str]:
    splits = text.split("\n")
    return [s + "\n" for s in splits[:-1]] + splits[-1:]


def _text_splitter(text_splitter: Any) -> Callable[[str], list[str]]:
    if text_splitter is None:
        return _default_text_splitter
    split_text = getattr(text_splitter, "split_text", None)
    if callable(split_text) and type(text_splitter).__module__.startswith(
        "langchain_text_splitters"
    ):
        return cast(Callable[[str], list[str]], split_text)
    return cast(Callable[[str], list[str]], text_splitter)


def _call_ids(message: AIMessage) -> set[str] | None:
    """The ids of every call the codec reads in ``message`` (``tool_calls``, invalid
    calls with an id, content-resident call blocks), or None when one has no string id
    (the general path pairs those by name, or rejects them)."""
    ids: set[str] = set()
    for call in message.tool_calls:
        call_id = call.get("id")
        if not isinstance(call_id, str):
            return None
        ids.add(call_id)
    for invalid in message.invalid_tool_calls:
        call_id = invalid.get("id")
        if call_id:
            if not isinstance(call_id, str):
                return None
            ids.add(call_id)
    content = message.content
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping):
                key = _CALL_BLOCKS.get(part.get("type"))  # type: ignore[arg-type]
                if key is not None:
                    call_id = part.get(key)
                    if not isinstance(call_id, str):
                        return None
                    ids.add(call_id)
    return ids


def _plain_units(messages: list[BaseMessage]) -> list[Unit] | None:
    """`_units` for a plain history, without decoding it: an AI message with calls and
    the tool messages right after it form a unit, every other message stands alone.
    None when the history is not plain: a message of another class, a tool message that
    does not answer the AI message it follows, a call id used twice or not a string."""
    out: list[Unit] = []
    seen: set[str] = set()
    open_ids: set[str] | None = None
    unit: Unit = []
    for m in messages:
        cls = type(m)
        if cls is ToolMessage:
            answers = cast(ToolMessage, m).tool_call_id
            if open_ids is None or not isinstance(answers, str) or answers not in open_ids:
                return None
            unit.append(m)
            continue
        open_ids = None
        if cls is AIMessage:
            ids = _call_ids(cast(AIMessage, m))
            if ids is None or not seen.isdisjoint(ids):
                return None
            if ids:
                seen |= ids
                open_ids = ids
                unit = [m]
                out.append(unit)
                continue
        elif cls is not HumanMessage and cls is not SystemMessage:
            return None
        out.append([m])
    return out


def _units(messages: list[BaseMessage]) -> list[Unit]:
    plain = _plain_units(messages)
    return plain if plain is not None else _general_units(messages)


def _general_units(messages: list[BaseMessage]) -> list[Unit]:
    """The history cut into the pieces trimming may not split: a message with tool
    calls together with its results (a core ``tool`` unit, which also spans whatever
    sits between them). Every other message stands alone, as LangChain cuts between
    any two messages that hold no pair."""
    out: list[Unit] = []
    at = 0
    # A ChatMessage whose role the codec does not know holds no pair (only AI and tool
    # messages do): it is cut like any message, as LangChain's trimmer cuts it, so it
    # stands in as an empty human message rather than failing the trim.
    placed = [
        HumanMessage(content="") if isinstance(m, ChatMessage) and m.role not in _CHAT_ROLES else m
        for m in messages
    ]
    for unit in toolpair.units(placed, format=LangChainCodec()):
        start, stop = max(unit.start, at), unit.stop
        out.extend([m] for m in messages[at:start])
        if stop <= start:
            continue
        if unit.kind == "tool":
            out.append(messages[start:stop])
        else:
            out.extend([m] for m in messages[start:stop])
        at = stop
    out.extend([m] for m in messages[at:])
    return out


class _Trimmer:
    def __init__(
        self,
        counter: Callable[[Sequence[BaseMessage]], int],
        splitter: Callable[[str], list[str]],
    ) -> None:
        self.count = counter
        self.split = splitter
        self.codec = LangChainCodec()
        try:
            self.overhead = counter([])
        except Exception:
            self.overhead = 0

    def _cost(self, unit: Unit) -> int:
        return self.count(unit) - self.overhead

    def _pairs(self, message: BaseMessage) -> bool:
        return any(
            b.kind in ("call", "result") for m in self.codec.decode([message]) for b in m.blocks
        )

    def select(
        self,
        units: list[Unit],
        budget: int,
        partial_strategy: Literal["first", "last"] | None,
        end_on: TypeSpec | None,
        *,
        backwards: bool,
    ) -> list[Unit]:
        """LangChain's ``_first_max_tokens`` over units: ``units`` are in the order
        they are taken (reversed for the "last" strategy), each in chronological order
        inside; the returned units are in the same order."""
        if not units:
            return []
        # The message at the far end of what is kept: its chronologically first one
        # when the units are taken from the end of the history.
        edge = 0 if backwards else -1
        # LangChain first counts the whole list; with costs that add up, a unit that
        # does not fit ends the kept part just the same, and what lies beyond it is
        # never counted.
        kept: list[Unit] = []
        running = self.overhead
        nxt: Unit | None = None
        for unit in units:
            cost = self._cost(unit)
            if running + cost > budget:
                nxt = unit
                break
            running += cost
            kept.append(unit)
        if partial_strategy and nxt is not None and len(nxt) == 1 and not self._pairs(nxt[0]):
            piece = self._partial(nxt[0], running, budget, partial_strategy)
            if piece is not None:
                kept.append([piece])
        if end_on:
            while kept and not _is_type(kept[-1][edge], end_on):
                kept.pop()
        return kept

    def _partial(
        self,
        message: BaseMessage,
        prefix: int,
        budget: int,
        strategy: Literal["first", "last"],
    ) -> BaseMessage | None:
        """LangChain's partial-message step, with ``prefix`` the cost of what is kept."""
        excluded = message.model_copy(deep=True)
        if isinstance(excluded.content, list):
            num_block = len(excluded.content)
            if strategy == "last":
                excluded.content = list(reversed(excluded.content))
            for _ in range(1, num_block):
                excluded.content = excluded.content[:-1]
                if prefix + self._cost([excluded]) <= budget:
                    if strategy == "last":
                        excluded.content = list(reversed(excluded.content))
                    return excluded
        text: str | None = None
        if isinstance(excluded.content, str):
            text = excluded.content
        elif isinstance(excluded.content, list):
            for block in excluded.content:
                if isinstance(block, str):
                    text = block
                    break
                if isinstance(block, dict) and block.get("type") == "text":
                    text = block.get("text")
                    break
        if not text:
            return None
        splits = self.split(text)
        if strategy == "last":
            splits = list(reversed(splits))
        left, right = 0, len(splits)
        for _ in range(len(splits).bit_length()):
            if left >= right:
                break
            mid = (left + right + 1) // 2
            excluded.content = "".join(splits[:mid])
            # LangChain adds the whole prefix count to the partial message's count here.
            if prefix + self.count([excluded]) <= budget:
                left = mid
            else:
                right = mid - 1
        if left == 0:
            return None
        chosen = splits[:left]
        if strategy == "last":
            chosen = list(reversed(chosen))
        excluded.content = "".join(chosen)
        return excluded


@dataclass(frozen=True)
class _Options:
    """`trim_messages`' arguments (in its order), held until a ``RunnableLambda`` gets
    its messages."""

    max_tokens: int
    token_counter: Any
    strategy: Literal["first", "last"]
    allow_partial: bool
    end_on: TypeSpec | None
    start_on: TypeSpec | None
    include_system: bool
    text_splitter: Any


def _trim(messages: Iterable[Any] | Any, options: _Options) -> list[BaseMessage]:
    strategy = options.strategy
    if options.start_on and strategy == "first":
        raise ValueError("start_on parameter is only valid with strategy='last'")
    if options.include_system and strategy == "first":
        raise ValueError("include_system parameter is only valid with strategy='last'")
    history = convert_to_messages(messages)
    trimmer = _Trimmer(list_counter(options.token_counter), _text_splitter(options.text_splitter))
    if strategy == "first":
        kept = trimmer.select(
            _units(history),
            options.max_tokens,
            "first" if options.allow_partial else None,
            options.end_on,
            backwards=False,
        )
        return [m for unit in kept for m in unit]
    if strategy != "last":
        msg = f"Unrecognized {strategy=}. Supported strategies are 'last' and 'first'."
        raise ValueError(msg)

    units = _units(history)
    if options.end_on:
        while units and not _is_type(units[-1][-1], options.end_on):
            units.pop()
    system: BaseMessage | None = None
    if options.include_system and units and isinstance(units[0][0], SystemMessage):
        system = units[0][0]
        units = [units[0][1:], *units[1:]] if len(units[0]) > 1 else units[1:]
    budget = options.max_tokens
    if system is not None:
        budget = max(0, options.max_tokens - trimmer.count([system]))
    kept = trimmer.select(
        units[::-1],
        budget,
        "last" if options.allow_partial else None,
        options.start_on,
        backwards=True,
    )
    out = [m for unit in kept[::-1] for m in unit]
    return [system, *out] if system is not None else out


def trim_messages(
    messages: Iterable[Any] | Any | None = None,
    *,
    max_tokens: int,
    token_counter: Any,
    strategy: Literal["first", "last"] = "last",
    allow_partial: bool = False,
    end_on: TypeSpec | None = None,
    start_on: TypeSpec | None = None,
    include_system: bool = False,
    text_splitter: Any = None,
) -> Any:
    """Trim ``messages`` to ``max_tokens`` like ``langchain_core.messages.trim_messages``,
    never splitting an assistant message from its tool results.

    Without ``messages`` it returns a ``RunnableLambda`` named "trim_messages" that
    validates its arguments when invoked, as LangChain's does.
    """
    options = _Options(
        max_tokens,
        token_counter,
        strategy,
        allow_partial,
        end_on,
        start_on,
        include_system,
        text_splitter,
    )
    if messages is not None:
        return _trim(messages, options)
    from langchain_core.runnables import RunnableLambda

    return RunnableLambda(partial(_trim, options=options), name="trim_messages")
