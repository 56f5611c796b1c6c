"""The pair-safe trim_messages: LangChain's results on tool-free histories, whole units
otherwise, and each message counted once."""

from __future__ import annotations

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
from lc_wire import ai, human, tool

import toolpair
from toolpair.integrations.langchain import trim_messages, validate_messages

pytestmark = pytest.mark.skipif(
    not hasattr(toolpair, "units"), reason="needs toolpair.units (core compaction, issue 4)"
)

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


def test_each_message_is_counted_once_in_order() -> None:
    seen: list[list[str]] = []

    def counter(messages: list[BaseMessage]) -> int:
        seen.append([str(m.content) for m in messages])
        return len(messages)

    history = [HumanMessage(f"m{i}") for i in range(50)]
    trim_messages(history, max_tokens=10, token_counter=counter)
    counted = [c for batch in seen for c in batch]
    assert sorted(counted) == sorted(f"m{i}" for i in range(50))


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
