"""The no-op path for threads says "valid" for the plain shape a sound LangGraph thread
has. (That it never says it where the full rules object is the conformance suite's fast
path property, run on the codec the integration picks by `adapter`.)"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import toolpair
from toolpair.engine.fast import certainly_valid
from toolpair.integrations.langchain import LangChainCodec
from toolpair.integrations.langgraph._common import codec
from toolpair.providers import Context


def openai_certainly_valid(history: list[Any]) -> bool:
    """The no-op verdict for the "openai" rules: the core's checker on the skeleton of
    the codec the integration picks."""
    c = codec("openai")
    return certainly_valid(c, "openai", history, Context(shape=c.shape, format=c.name))


def _call(i: str) -> dict[str, Any]:
    return {"name": "weather", "args": {}, "id": i, "type": "tool_call"}


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
