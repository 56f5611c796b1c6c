"""The pair-safe trim_messages: LangChain's results on tool-free histories, whole units
otherwise, and each message counted once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages import trim_messages as lc_trim_messages
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableLambda

import toolpair
from toolpair.integrations.langchain import trim_messages, validate_messages

from .wire import ai, human, tool

HIST = [
    SystemMessage("sys"),
    HumanMessage("what's the weather in SF and NYC?"),
    ai("call_1", "call_2"),
    tool("call_1", "sunny"),
    tool("call_2", "rainy"),
    AIMessage("SF sunny, NYC rainy"),
]


def _pairs_ok(messages: Sequence[BaseMessage]) -> bool:
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return calls == results


# -- the orphan shapes of the reference, now whole units -----------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": 2, "token_counter": len, "strategy": "last"},
        {"max_tokens": 3, "token_counter": len, "strategy": "last", "include_system": True},
        {"max_tokens": 3, "token_counter": len, "strategy": "first"},
        {"max_tokens": 4, "token_counter": len, "strategy": "first", "end_on": "tool"},
        {"max_tokens": 20, "token_counter": "approximate", "strategy": "last"},
    ],
)
def test_reference_orphans_come_out_valid(kwargs: dict[str, Any]) -> None:
    upstream = _langchain(HIST, kwargs)
    assert not _pairs_ok(upstream)  # LangChain cuts the pair here
    trimmed = trim_messages(HIST, **kwargs)
    assert _pairs_ok(trimmed)
    assert validate_messages(trimmed, "openai") == []
    assert all(any(m is o for o in HIST) for m in trimmed)


def test_whole_unit_kept_when_it_fits() -> None:
    trimmed = trim_messages(HIST, max_tokens=4, token_counter=len)
    assert trimmed == HIST[2:]
    assert all(a is b for a, b in zip(trimmed, HIST[2:], strict=True))


def test_allow_partial_never_splits_calls_from_their_message() -> None:
    msg = AIMessage(
        [
            {"type": "text", "text": "let me look"},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}},
        ],
        tool_calls=[{"name": "weather", "args": {}, "id": "toolu_1", "type": "tool_call"}],
    )
    history = [human(), msg, tool("toolu_1"), AIMessage("done")]

    def count(messages: list[BaseMessage]) -> int:
        return sum(len(m.content) if isinstance(m.content, list) else 1 for m in messages)

    upstream = lc_trim_messages(
        history, max_tokens=2, token_counter=count, strategy="first", allow_partial=True
    )
    assert upstream[-1].tool_calls and not any(isinstance(m, ToolMessage) for m in upstream)
    trimmed = trim_messages(
        history, max_tokens=2, token_counter=count, strategy="first", allow_partial=True
    )
    assert _pairs_ok(trimmed)


# -- same behaviour as LangChain on tool-free histories -----------------------------

TEXTS = ["a", "hello there", "line one\nline two\nline three", "x" * 40]


@st.composite
def plain_histories(draw: Any) -> list[BaseMessage]:
    out: list[BaseMessage] = (
        [SystemMessage(draw(st.sampled_from(TEXTS)))] if draw(st.booleans()) else []
    )
    for _ in range(draw(st.integers(0, 8))):
        cls = draw(st.sampled_from([HumanMessage, AIMessage]))
        if draw(st.booleans()):
            content: Any = draw(st.sampled_from(TEXTS))
        else:
            content = [
                {"type": "text", "text": t}
                for t in draw(st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3))
            ]
        out.append(cls(content))
    return out


def per_message(message: BaseMessage) -> int:
    return len(str(message.content)) // 4 + 1


# This module's annotations are strings (PEP 563); LangChain recognises a per-message
# counter only by the annotation object itself.
per_message.__annotations__["message"] = BaseMessage


def list_counter(messages: list[BaseMessage]) -> int:
    return sum(per_message(m) for m in messages)


OPTIONS = st.fixed_dictionaries(
    {
        "max_tokens": st.integers(0, 60),
        "token_counter": st.sampled_from([len, per_message, list_counter, "approximate"]),
        "strategy": st.sampled_from(["first", "last"]),
        "allow_partial": st.booleans(),
        "end_on": st.sampled_from([None, "human", "ai", ["ai", HumanMessage]]),
    }
)


def _langchain(history: list[BaseMessage], options: dict[str, Any]) -> list[BaseMessage]:
    if options["token_counter"] == "approximate":
        # the shortcut is newer than the oldest supported langchain-core
        options = {**options, "token_counter": count_tokens_approximately}
    return lc_trim_messages(history, **options)


@settings(max_examples=300, deadline=None)
@given(
    history=plain_histories(),
    options=OPTIONS,
    start_on=st.sampled_from([None, "human", "ai"]),
    include_system=st.booleans(),
)
def test_same_result_as_langchain_without_tool_calls(
    history: list[BaseMessage], options: dict[str, Any], start_on: Any, include_system: bool
) -> None:
    if options["strategy"] == "last":
        options = {**options, "start_on": start_on, "include_system": include_system}
    expected = _langchain(history, options)
    got = trim_messages(history, **options)
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]


@settings(max_examples=200, deadline=None)
@given(history=st.lists(st.sampled_from(["h", "a", "pair", "pair2"]), max_size=8), options=OPTIONS)
def test_output_is_always_pair_safe(history: list[str], options: dict[str, Any]) -> None:
    messages: list[BaseMessage] = []
    for n, kind in enumerate(history):
        if kind == "h":
            messages.append(HumanMessage("question"))
        elif kind == "a":
            messages.append(AIMessage("answer"))
        else:
            ids = [f"c{n}a", f"c{n}b"][: 1 if kind == "pair" else 2]
            messages.append(ai(*ids))
            messages.extend(tool(i, "result text") for i in ids)
    trimmed = trim_messages(messages, **options)
    assert _pairs_ok(trimmed)


# -- the API surface -----------------------------------------------------------------


def test_runnable_form_and_lazy_validation() -> None:
    trimmer = trim_messages(max_tokens=2, token_counter=len)
    assert isinstance(trimmer, RunnableLambda)
    assert trimmer.name == "trim_messages"
    assert trimmer.invoke(HIST) == HIST[-1:]
    bad = trim_messages(max_tokens=2, token_counter=object())
    with pytest.raises(ValueError, match="'token_counter' expected"):
        bad.invoke(HIST)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "first", "start_on": "human"}, "start_on parameter is only valid"),
        ({"strategy": "first", "include_system": True}, "include_system parameter is only valid"),
        ({"strategy": "middle"}, "Unrecognized strategy"),
        ({"token_counter": "exact"}, "Invalid token_counter shortcut"),
    ],
)
def test_errors_match_langchain(kwargs: dict[str, Any], message: str) -> None:
    options = {"max_tokens": 2, "token_counter": len, **kwargs}
    with pytest.raises(ValueError, match=message):
        trim_messages(HIST, **options)


def test_each_message_is_counted_once_newest_first_and_no_further_than_needed() -> None:
    seen: list[list[str]] = []

    def counter(messages: list[BaseMessage]) -> int:
        seen.append([str(m.content) for m in messages])
        return len(messages)

    history = [HumanMessage(f"m{i}") for i in range(50)]
    trimmed = trim_messages(history, max_tokens=10, token_counter=counter)
    assert trimmed == history[-10:]
    counted = [c for batch in seen for c in batch]
    # the ten that fit, then the one that did not: nothing older is ever counted
    assert counted == [f"m{i}" for i in range(49, 38, -1)]


def test_input_is_not_mutated_and_prompt_values_work() -> None:
    from langchain_core.prompt_values import ChatPromptValue

    snapshot = [m.model_dump() for m in HIST]
    trimmed = trim_messages(ChatPromptValue(messages=HIST), max_tokens=3, token_counter=len)
    assert _pairs_ok(trimmed)
    assert [m.model_dump() for m in HIST] == snapshot


def test_string_annotated_per_message_counter_is_per_message() -> None:
    # Under PEP 563 LangChain would hand this counter whole lists (reference 1.2).
    def one(message: BaseMessage) -> int:
        return 1

    one.__annotations__["message"] = "BaseMessage"
    history = [HumanMessage(str(i)) for i in range(5)]
    assert len(trim_messages(history, max_tokens=3, token_counter=one)) == 3


# -- the native unit cut agrees with the codec's ---------------------------------------
#
# A plain history is cut into units without decoding it (_trim._plain_units); anything
# else goes through the codec and toolpair.units (_trim._general_units). The existing
# suite barely reaches the difference, so both are compared here on generated histories
# with tool calls, directly and through every option of trim_messages.

LONG = "first line\nsecond line, a bit longer\nthird"
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


@st.composite
def tool_histories(draw: Any, plain_only: bool = False) -> list[BaseMessage]:
    """Histories of human, system, AI and tool messages, each run of results answering
    (some of) the calls right before it. Unless ``plain_only``, a few unusual shapes are
    mixed in: a reused or missing call id, and messages put anywhere (a result answering
    an older turn or no call at all, a repeated result, messages of other classes)."""
    from langchain_core.messages import AIMessageChunk, ChatMessage

    moves = ["human", "text", "calls", "calls", "calls", "system"]
    if not plain_only:
        moves += ["reuse", "no_id"]
    out: list[BaseMessage] = [SystemMessage("sys")] if draw(st.booleans()) else []
    all_ids: list[str] = []
    serial = 0
    for _ in range(draw(st.integers(0, 9))):
        move = draw(st.sampled_from(moves))
        if move == "human":
            content: Any = draw(st.sampled_from(["q", LONG, [{"type": "text", "text": LONG}]]))
            out.append(HumanMessage(content))
        elif move == "system":
            out.append(SystemMessage("be brief"))
        elif move == "text":
            out.append(AIMessage(draw(st.sampled_from(["ok", LONG, [IMAGE, "see"]]))))
        else:
            n = draw(st.integers(1, 3))
            ids = [f"call_{serial + k}" for k in range(n)]
            serial += n
            if move == "reuse" and all_ids:
                ids[0] = draw(st.sampled_from(all_ids))
            calls: list[Any] = [
                {"name": "weather", "args": {"city": i}, "id": i, "type": "tool_call"} for i in ids
            ]
            if move == "no_id":
                calls[0] = {**calls[0], "id": None}
            style = draw(st.sampled_from(["text", "empty", "anthropic", "invalid"]))
            if style == "anthropic":
                # copies of some of the calls, and maybe one that lives in the content only
                blocks: list[Any] = [
                    {"type": "tool_use", "id": c["id"], "name": "weather", "input": {}}
                    for c in calls
                ][: draw(st.integers(0, n))]
                if draw(st.booleans()):
                    ids.append(f"block_{serial}")
                    blocks.append({"type": "function_call", "call_id": ids[-1], "name": "f"})
                content = [{"type": "text", "text": LONG}, *blocks]
                message = AIMessage(content, tool_calls=calls)
            elif style == "invalid":
                bad = {"name": "weather", "args": "{", "id": f"bad_{serial}", "error": "json"}
                ids.append(bad["id"])
                message = AIMessage("", tool_calls=calls, invalid_tool_calls=[bad])
            else:
                message = AIMessage(LONG if style == "text" else "", tool_calls=calls)
            out.append(message)
            answered = draw(st.lists(st.sampled_from(ids), max_size=len(ids) + 1))
            out.extend(ToolMessage(f"result {i}\n" * 3, tool_call_id=i) for i in answered)
            if not plain_only and draw(st.integers(0, 3)) == 0:
                # a result in this run that answers an older turn, or no call at all
                stale = draw(st.sampled_from([*all_ids, "call_gone"]))
                out.append(ToolMessage("stale", tool_call_id=stale))
            all_ids += ids
    if plain_only:
        return out
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["result", "result", "orphan", "chat", "odd", "chunk"]))
        if kind == "result" and all_ids:
            extra: BaseMessage = ToolMessage("again", tool_call_id=draw(st.sampled_from(all_ids)))
        elif kind == "chat":
            extra = ChatMessage("hello", role="user")
        elif kind == "odd":
            extra = ChatMessage("hello", role="critic")  # a role the codec rejects
        elif kind == "chunk":
            chunk = {"name": "weather", "args": "{}", "id": "chunk_call", "index": 0}
            extra = AIMessageChunk("partial", tool_call_chunks=[chunk])
        else:
            extra = ToolMessage("stray", tool_call_id="call_gone")
        out.insert(draw(st.integers(0, len(out))), extra)
    return out


def _shape(units: list[list[BaseMessage]]) -> list[list[int]]:
    return [[id(m) for m in unit] for unit in units]


def _general_trim(history: list[BaseMessage], options: dict[str, Any]) -> list[BaseMessage]:
    from unittest import mock

    from toolpair.integrations.langchain import _trim

    with mock.patch.object(_trim, "_plain_units", return_value=None):
        return trim_messages(history, **options)


@settings(max_examples=300, deadline=None)
@given(history=tool_histories(plain_only=True))
def test_plain_histories_take_the_native_cut_and_it_matches(history: list[BaseMessage]) -> None:
    from toolpair.integrations.langchain import _trim

    plain = _trim._plain_units(history)
    assert plain is not None
    assert _shape(plain) == _shape(_trim._general_units(history))


@settings(max_examples=300, deadline=None)
@given(history=tool_histories())
def test_native_cut_matches_the_codec_or_steps_aside(history: list[BaseMessage]) -> None:
    from toolpair.integrations.langchain import _trim

    plain = _trim._plain_units(history)
    if plain is not None:
        assert _shape(plain) == _shape(_trim._general_units(history))


TYPES = [None, "human", "ai", "tool", ["ai", ToolMessage], SystemMessage]


@settings(max_examples=400, deadline=None)
@given(
    history=st.one_of(tool_histories(plain_only=True), tool_histories()),
    share=st.floats(0, 1.1),
    token_counter=st.sampled_from(["approximate", "approximate", len, per_message]),
    strategy=st.sampled_from(["first", "last"]),
    allow_partial=st.booleans(),
    end_on=st.sampled_from(TYPES),
    start_on=st.sampled_from(TYPES),
    include_system=st.booleans(),
)
def test_trim_is_the_same_through_either_cut(
    history: list[BaseMessage],
    share: float,
    token_counter: Any,
    strategy: str,
    allow_partial: bool,
    end_on: Any,
    start_on: Any,
    include_system: bool,
) -> None:
    total = count_tokens_approximately(history) if token_counter == "approximate" else 40
    options: dict[str, Any] = {
        "max_tokens": int(total * share),
        "token_counter": token_counter,
        "strategy": strategy,
        "allow_partial": allow_partial,
        "end_on": end_on,
    }
    if strategy == "last":
        options.update(start_on=start_on, include_system=include_system)
    snapshot = [m.model_dump() for m in history]
    try:
        expected = _general_trim(history, options)
    except toolpair.InvalidHistory as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            trim_messages(history, **options)
        return
    got = trim_messages(history, **options)
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]
    # untouched messages come back as the very objects, through either cut
    assert [any(m is o for o in history) for m in got] == [
        any(m is o for o in history) for m in expected
    ]
    assert [m.model_dump() for m in history] == snapshot


@settings(max_examples=200, deadline=None)
@given(history=tool_histories())
def test_approximate_counts_add_up_message_by_message(history: list[BaseMessage]) -> None:
    # Counting unit by unit is only LangChain's count of the list if the count of a list
    # is its per-list overhead plus the counts of its messages, each without it.
    overhead = count_tokens_approximately([])
    each = [count_tokens_approximately([m]) - overhead for m in history]
    assert count_tokens_approximately(history) == overhead + sum(each)


@pytest.mark.parametrize("strategy", ["first", "last"])
def test_chat_messages_of_any_role_are_trimmed_as_langchain_trims_them(strategy: str) -> None:
    # No pair lives in a ChatMessage of a role toolpair does not know; trimming cuts
    # around it exactly as LangChain does instead of refusing the history.
    from langchain_core.messages import ChatMessage

    history = [
        SystemMessage("be brief"),
        HumanMessage("question " * 20),
        ChatMessage(role="critic", content="a remark " * 20),
        AIMessage("answer " * 20),
        ChatMessage(role="critic", content="another " * 20),
        HumanMessage("more " * 20),
    ]
    options: dict[str, Any] = {
        "max_tokens": 60,
        "token_counter": count_tokens_approximately,
        "strategy": strategy,
    }
    expected = lc_trim_messages(history, **options)
    got = trim_messages(history, **options)
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]
    assert len(got) < len(history)
