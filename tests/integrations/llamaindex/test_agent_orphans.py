"""Orphans LlamaIndex's own agents create (reference: llamaindex.md, "Orphan sources"),
replayed through the real Anthropic LLM: each breaks the next request without toolpair
and goes through with GuardedLLM."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

import toolpair
from toolpair.integrations.llamaindex import GuardedLLM, guard, validate_messages

from .history import calls, result, user
from .wire import FakeAnthropic, anthropic_llm, call
from .wire import say as reply


async def lookup(city: str) -> str:
    """Look up the weather of a city."""
    # Slower than finish, so its result arrives second and FunctionAgent's
    # return_direct `break` skips recording it.
    await asyncio.sleep(0.05)
    return "sunny"


def finish(answer: str) -> str:
    """Give the final answer."""
    return answer


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _tools() -> list[FunctionTool]:
    return [
        FunctionTool.from_defaults(async_fn=lookup),
        FunctionTool.from_defaults(fn=finish, return_direct=True),
    ]


def _run(agent: Any, **kwargs: Any) -> Any:
    """``agent.run(**kwargs)`` to the end (the workflow needs a running loop)."""

    async def go() -> Any:
        return await agent.run(**kwargs)

    return asyncio.run(go())


def _outcome(agent: Any, **kwargs: Any) -> Any:
    try:
        return _run(agent, **kwargs)
    except Exception as exc:
        return exc


def _return_direct_memory() -> Memory:
    """Run 1 of source 1: parallel [lookup, finish]; finish is return_direct."""
    server = FakeAnthropic(
        [
            call(
                ("toolu_lookup", "lookup", {"city": "Oslo"}),
                ("toolu_finish", "finish", {"answer": "done"}),
            )
        ]
    )
    memory = Memory.from_defaults(session_id="return-direct")
    agent = FunctionAgent(tools=_tools(), llm=anthropic_llm(server), streaming=False)
    out = _run(agent, user_msg="Weather in Oslo, then finish.", memory=memory)
    assert str(out) == "done"
    return memory


def test_source_1_return_direct_among_parallel_calls() -> None:
    memory = _return_direct_memory()
    stored = asyncio.run(memory.aget())
    # The orphan LlamaIndex leaves behind: lookup's call has no result. Cores before
    # FunctionAgent passed allow_parallel_tool_calls kept only the first call.
    if not validate_messages(stored, "anthropic"):
        pytest.skip("this llama-index-core's FunctionAgent makes no parallel calls here")

    server = FakeAnthropic([reply("ok")])
    agent = FunctionAgent(tools=_tools(), llm=anthropic_llm(server), streaming=False)
    out = _outcome(agent, user_msg="And tomorrow?", memory=memory)
    assert type(out).__name__ == "BadRequestError"
    assert toolpair.validate(server.bodies[0], "anthropic")

    memory = _return_direct_memory()
    server = FakeAnthropic([reply("ok")])
    agent = FunctionAgent(
        tools=_tools(), llm=GuardedLLM(llm=anthropic_llm(server)), streaming=False
    )
    assert str(_run(agent, user_msg="And tomorrow?", memory=memory)) == "ok"
    assert server.rejected == []
    assert toolpair.validate(server.bodies[0], "anthropic") == []


def _call(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except Exception as exc:
        return exc


def _always_calls(n: int) -> list[Any]:
    return [call((f"toolu_{i}", "add", {"a": i, "b": 1})) for i in range(n)]


@pytest.mark.parametrize("guarded", [False, True])
def test_source_2_stale_scratchpad_after_max_iterations(guarded: bool) -> None:
    # Run 1 hits max_iterations: the last call never runs, and the scratchpad that
    # holds it survives in the reused Context and is replayed after run 2's message.
    server = FakeAnthropic([*_always_calls(2), reply("3")])
    llm: Any = anthropic_llm(server)
    if guarded:
        llm = GuardedLLM(llm=llm)
    agent = FunctionAgent(tools=[add], llm=llm, streaming=False)
    ctx = Context(agent)
    memory = Memory.from_defaults(session_id="stale")
    first = _outcome(agent, user_msg="count", ctx=ctx, memory=memory, max_iterations=2)
    assert isinstance(first, Exception)
    assert "Max iterations" in str(first)

    second = _outcome(agent, user_msg="1+2?", ctx=ctx, memory=memory, max_iterations=20)
    body = server.bodies[2]
    if guarded:
        assert str(second) == "3"
        assert toolpair.validate(body, "anthropic") == []
        assert server.rejected == []
    else:
        assert type(second).__name__ == "BadRequestError"
        assert toolpair.validate(body, "anthropic")


@pytest.mark.parametrize("guarded", [False, True])
def test_source_4_chat_memory_buffer_returns_a_lone_tool_message(guarded: bool) -> None:
    # A long user turn, then a call and its short result: the token window keeps only
    # the result (ChatMemoryBuffer's "message_count > 1" stop).
    history = [user("word " * 400), calls("toolu_1"), result("toolu_1")]
    memory = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=60)
    window = memory.get()
    if not window:
        pytest.skip("this llama-index-core's ChatMemoryBuffer returns nothing instead")
    assert [m.role for m in window] == [MessageRole.TOOL]

    _chat_is_sent_whole_only_when_guarded(window, guarded)


def _chat_is_sent_whole_only_when_guarded(history: list[ChatMessage], guarded: bool) -> None:
    # Unguarded, Anthropic refuses the body the LLM sends; guarded, it is valid.
    server = FakeAnthropic([reply("ok")])
    llm: Any = anthropic_llm(server)
    if guarded:
        llm = GuardedLLM(llm=llm)
    out = _call(llm.achat(history))
    if guarded:
        assert out.message.content == "ok"
        assert toolpair.validate(server.bodies[0], "anthropic") == []
    else:
        assert type(out).__name__ == "BadRequestError"
        assert toolpair.validate(server.bodies[0], "anthropic")


REACT_STEPS = [
    reply('Thought: I need to add.\nAction: add\nAction Input: {"a": 1, "b": 2}'),
    reply("Thought: I can answer.\nAnswer: 3"),
]


@pytest.mark.parametrize("guarded", [False, True])
def test_source_5_react_observations_as_id_less_tool_messages(guarded: bool) -> None:
    from llama_index.core.agent.react import ReActChatFormatter

    server = FakeAnthropic(list(REACT_STEPS))
    llm: Any = anthropic_llm(server)
    if guarded:
        # Keep the observation as text: dropping it would hide the tool's output.
        llm = guard(llm, orphans="text")
    agent = ReActAgent(
        tools=[add],
        llm=llm,
        formatter=ReActChatFormatter.from_defaults(observation_role=MessageRole.TOOL),
        streaming=False,
    )
    out = _outcome(agent, user_msg="What is 1+2?")
    if guarded:
        assert str(out).strip() == "3"
        observation = server.bodies[1]["messages"][-1]
        assert "Observation: 3" in str(observation["content"])
        assert toolpair.validate(server.bodies[1], "anthropic") == []
    else:
        # The Anthropic converter indexes additional_kwargs["tool_call_id"].
        assert isinstance(out, KeyError)
        assert len(server.bodies) == 1


def test_source_6_chat_history_goes_to_memory_unvalidated() -> None:
    server = FakeAnthropic([reply("ok")])
    agent = FunctionAgent(tools=[add], llm=GuardedLLM(llm=anthropic_llm(server)), streaming=False)
    history = [user("q"), result("toolu_gone"), calls("toolu_L")]
    out = _run(agent, user_msg="hello", chat_history=history)
    assert str(out) == "ok"
    assert toolpair.validate(server.bodies[0], "anthropic") == []


@pytest.mark.parametrize("guarded", [False, True])
def test_source_3_codeact_handoff_shape(guarded: bool) -> None:
    # What CodeActAgent stores after a handoff (reference e10): its assistant message
    # lost the ToolCallBlock, but the handoff's result was kept.
    history = [
        user("Hand this to agent b."),
        ChatMessage(role=MessageRole.ASSISTANT, content=""),
        result("call_handoff", "Agent b is now handling the request."),
    ]
    _chat_is_sent_whole_only_when_guarded(history, guarded)
