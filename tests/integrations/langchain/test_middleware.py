"""ToolpairMiddleware in a LangChain 1.x create_agent run over a poisoned state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain.agents.middleware", reason="create_agent needs langchain 1.x")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool as lc_tool
from pydantic import Field

import toolpair
from toolpair.integrations.langchain import ToolpairMiddleware, validate_messages

from .wire import Wire, ai, human, tool


@lc_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class RecordingFake(FakeMessagesListChatModel):
    """A tool-calling fake that records exactly what it was given."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingFake:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


POISONED = [
    human("weather in SF?"),
    ai("call_1"),  # interrupted: its result was never written
    human("never mind, what about NYC?"),
]


def _dump(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(exclude={"id"}) for m in messages]


def test_model_sees_a_valid_history_and_the_state_is_unchanged() -> None:
    model = RecordingFake(responses=[AIMessage("It is sunny in NYC.")])
    snapshot = _dump(POISONED)
    agent = create_agent(model, tools=[weather], middleware=[ToolpairMiddleware("anthropic")])
    assert validate_messages(POISONED, "anthropic")

    state = agent.invoke({"messages": list(POISONED)})

    (seen,) = model.seen
    assert validate_messages(seen, "anthropic") == []
    synthetic = [m for m in seen if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in synthetic] == [("call_1", "error")]
    # The graph state holds the history as it was, plus the reply: nothing written back.
    stored = state["messages"]
    assert _dump(stored[: len(POISONED)]) == snapshot
    assert not any(isinstance(m, ToolMessage) for m in stored)
    assert stored[-1].content == "It is sunny in NYC."
    assert _dump(POISONED) == snapshot


def test_valid_state_is_passed_through_untouched() -> None:
    model = RecordingFake(responses=[AIMessage("done")])
    history = [human(), ai("call_1"), tool("call_1"), human("thanks")]
    agent = create_agent(model, tools=[weather], middleware=[ToolpairMiddleware("anthropic")])
    agent.invoke({"messages": history})
    (seen,) = model.seen
    assert _dump(seen) == _dump(history)


def test_real_anthropic_model_gets_a_valid_body(wire: Wire) -> None:
    model = wire.anthropic()
    middleware = ToolpairMiddleware(trim={"max_tokens": 3, "token_counter": len})
    agent = create_agent(model, tools=[weather], system_prompt="be brief", middleware=[middleware])
    history = [
        human("weather in SF and NYC?"),
        ai("call_1", "call_2"),
        tool("call_1"),
        tool("call_2", "rainy"),
        AIMessage("SF sunny, NYC rainy"),
        human("and tomorrow?"),
        ai("call_3"),
        human("hurry up"),
    ]
    agent.invoke({"messages": history})
    body = wire.bodies[-1]
    assert body["system"] == "be brief" or body["system"][0]["text"] == "be brief"
    assert toolpair.validate(body, "anthropic") == []
    # Two messages fit beside the system prompt: the trimmer kept the unanswered call
    # with the message after it, and the repair answered call_3 ahead of that text.
    assert [m["role"] for m in body["messages"]] == ["assistant", "user"]
    first, second = body["messages"][1]["content"]
    assert (first["type"], first["tool_use_id"], first["is_error"]) == (
        "tool_result",
        "call_3",
        True,
    )
    assert second == {"type": "text", "text": "hurry up"}


def test_async_path_repairs_too() -> None:
    model = RecordingFake(responses=[AIMessage("ok")])
    agent = create_agent(model, tools=[weather], middleware=[ToolpairMiddleware("openai")])
    asyncio.run(agent.ainvoke({"messages": list(POISONED)}))
    (seen,) = model.seen
    assert validate_messages(seen, "openai") == []
