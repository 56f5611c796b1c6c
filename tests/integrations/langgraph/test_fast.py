"""The no-op path for threads never says "valid" where the full rules would object, and
does say it for the plain shape a sound LangGraph thread has."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import toolpair
from toolpair.integrations.langchain import LangChainCodec
from toolpair.integrations.langgraph._fast import openai_certainly_valid

IDS = ["a", "b", "c", "call_" + "x" * 36, "call_" + "y" * 40, ""]


def _call(i: str) -> dict[str, Any]:
    return {"name": "weather", "args": {}, "id": i, "type": "tool_call"}


messages = st.one_of(
    st.builds(lambda t: HumanMessage(t), st.sampled_from(["q", "", " "])),
    st.just(SystemMessage("be brief")),
    st.builds(lambda t: AIMessage(t), st.sampled_from(["ok", ""])),
    st.builds(
        lambda ids: AIMessage("", tool_calls=[_call(i) for i in ids]),
        st.lists(st.sampled_from(IDS), min_size=1, max_size=3),
    ),
    st.builds(
        lambda i, s: ToolMessage("r", tool_call_id=i, status=s),
        st.sampled_from(IDS),
        st.sampled_from(["success", "error"]),
    ),
    st.just(AIMessage([{"type": "text", "text": "list content"}])),
    st.just(HumanMessage([{"type": "text", "text": "list content"}])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(messages, max_size=12))
def test_never_valid_where_the_rules_object(history: list[Any]) -> None:
    verdict = openai_certainly_valid(history)
    if verdict is True:
        assert toolpair.validate(history, "openai", format=LangChainCodec("openai")) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), max_size=10))
def test_plain_threads_take_the_no_op_path(turns: list[int]) -> None:
    history: list[Any] = [SystemMessage("s")]
    for n, calls in enumerate(turns):
        history.append(HumanMessage(f"q{n}"))
        ids = [f"c{n}_{k}" for k in range(calls)]
        history.append(AIMessage("", tool_calls=[_call(i) for i in ids]))
        history += [ToolMessage("r", tool_call_id=i) for i in reversed(ids)]
        if calls:
            history.append(AIMessage("done"))
    assert openai_certainly_valid(history) is True
    assert toolpair.validate(history, "openai", format=LangChainCodec("openai")) == []
