"""FunctionAgent runs over poisoned memory, through the real Anthropic and OpenAI LLMs,
with the request bodies captured at the HTTP transport.

Without toolpair the fake server rejects the request the way the provider does (and
toolpair.validate names the same problem in the captured body); with GuardedLLM the
same run succeeds and every captured body validates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer, Memory

import toolpair
from toolpair.integrations.llamaindex import GuardedLLM, validate_messages

from .history import ToolCallBlock, calls, legacy_calls, needs_blocks, result, say, snapshot, user
from .wire import (
    FakeAnthropic,
    FakeOpenAI,
    FakeServer,
    anthropic_llm,
    call,
    openai_llm,
)
from .wire import say as reply


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


POISONS: dict[str, Callable[[], list[ChatMessage]]] = {
    # A crash between writing the call and its result.
    "dangling_call": lambda: [user("hi"), calls("toolu_L")],
    # A trimmer kept the result and evicted its call.
    "orphan_result": lambda: [user("hi"), result("toolu_X"), say("ok")],
    # A user message stored between a call and its result.
    "user_between": lambda: [
        user("q"),
        calls("toolu_A"),
        user("wait"),
        result("toolu_A"),
        say("done"),
    ],
    # One result of a parallel batch stored after the next assistant turn.
    "split_batch": lambda: [
        user("q"),
        calls("toolu_A", "toolu_B"),
        result("toolu_B"),
        say("partial"),
        result("toolu_A"),
    ],
}

PROVIDERS: dict[str, tuple[Callable[[list[Any]], FakeServer], Callable[[Any], Any]]] = {
    "anthropic": (FakeAnthropic, anthropic_llm),
    "openai": (FakeOpenAI, openai_llm),
}


def _run(
    provider: str, history: list[ChatMessage], *, guarded: bool, streaming: bool, memory: str
) -> tuple[FakeServer, Any]:
    make_server, make_llm = PROVIDERS[provider]
    # The model calls add once, then answers.
    cid = "toolu_new" if provider == "anthropic" else "call_new"
    server = make_server([call((cid, "add", {"a": 1, "b": 2})), reply("3")])
    llm = make_llm(server)
    if guarded:
        llm = GuardedLLM(llm=llm)
    if memory == "Memory":
        mem: Any = Memory.from_defaults(session_id="poisoned", chat_history=list(history))
    else:
        mem = ChatMemoryBuffer.from_defaults(chat_history=list(history))
    agent = FunctionAgent(tools=[add], llm=llm, streaming=streaming)

    async def go() -> Any:
        return await agent.run(user_msg="What is 1+2?", memory=mem)

    try:
        outcome: Any = asyncio.run(go())
    except Exception as exc:  # the provider SDK's 400, surfaced by the agent
        outcome = exc
    return server, outcome


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("poison", sorted(POISONS))
def test_unguarded_run_is_rejected_and_toolpair_says_why(
    poison: str, provider: str, streaming: bool
) -> None:
    server, outcome = _run(
        provider, POISONS[poison](), guarded=False, streaming=streaming, memory="Memory"
    )
    assert isinstance(outcome, Exception)
    assert type(outcome).__name__ == "BadRequestError"
    assert server.rejected
    assert toolpair.validate(server.bodies[0], provider)


@pytest.mark.parametrize("memory", ["Memory", "ChatMemoryBuffer"])
@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("poison", sorted(POISONS))
def test_guarded_run_sends_valid_bodies(
    poison: str, provider: str, streaming: bool, memory: str
) -> None:
    history = POISONS[poison]()
    before = snapshot(history)
    server, outcome = _run(provider, history, guarded=True, streaming=streaming, memory=memory)
    assert not isinstance(outcome, Exception), outcome
    assert str(outcome) == "3"
    assert server.rejected == []
    # Call add, then answer: both requests went out and both are valid.
    assert len(server.bodies) == 2
    for body in server.bodies:
        assert toolpair.validate(body, provider) == []
    # The stored history is untouched: repair happens on the request only.
    assert snapshot(history) == before


def _result_ids(body: dict[str, Any], provider: str) -> list[str]:
    if provider == "anthropic":
        return [
            b["tool_use_id"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
    return [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_real_results_survive_and_the_dangling_call_is_answered(provider: str) -> None:
    history = [*POISONS["split_batch"](), user("and now?"), calls("toolu_L")]
    server, outcome = _run(provider, history, guarded=True, streaming=False, memory="Memory")
    assert str(outcome) == "3"
    first = server.bodies[0]
    ids = _result_ids(first, provider)
    # Both real results of the split batch, and an answer for the dangling call.
    assert sorted(ids) == ["toolu_A", "toolu_B", "toolu_L"]
    # The split batch's results come back together, right after their calls.
    assert ids.index("toolu_A") < ids.index("toolu_L")


def test_guarded_llm_detects_providers() -> None:
    server = FakeAnthropic([])
    assert GuardedLLM(llm=anthropic_llm(server)).provider == "anthropic"
    assert GuardedLLM(llm=openai_llm(FakeOpenAI([]))).provider == "openai"
    from llama_index.core.llms import MockLLM

    assert GuardedLLM(llm=MockLLM()).provider == "portable"
    assert GuardedLLM(llm=MockLLM(), provider="mistral").provider == "mistral"


def test_plain_chat_and_tool_free_calls_are_repaired_too() -> None:
    # The early-stopping path sends memory through plain chat, without tools.
    server = FakeOpenAI([reply("fine")])
    llm = GuardedLLM(llm=openai_llm(server))
    history = [user("hi"), calls("toolu_L"), user("still there?")]
    response = llm.chat(history)
    assert response.message.content == "fine"
    assert server.rejected == []
    assert toolpair.validate(server.bodies[0], "openai") == []
    assert llm.last_repair is not None
    assert llm.last_repair.changed


def _tool_uses(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]


def test_openai_legacy_history_sent_to_anthropic() -> None:
    # Source 7: calls stored by the OpenAI LLM of older cores, replayed on Anthropic,
    # whose converter drops OpenAI-shaped calls and so orphans their results.
    history = [user("q"), legacy_calls("call_1"), result("call_1"), user("next")]
    assert any(
        v.code == "llamaindex.call_not_sent" for v in validate_messages(history, "anthropic")
    )

    plain = FakeAnthropic([reply("ok")])
    with pytest.raises(Exception, match="unexpected tool_use_id"):
        anthropic_llm(plain).chat(history)
    assert toolpair.validate(plain.bodies[0], "anthropic")

    server = FakeAnthropic([reply("ok")])
    guarded = GuardedLLM(llm=anthropic_llm(server))
    assert guarded.chat(history).message.content == "ok"
    assert toolpair.validate(server.bodies[0], "anthropic") == []
    assert [(u["id"], u["input"]) for u in _tool_uses(server.bodies[0])] == [
        ("call_1", {"a": 1, "b": 2})
    ]
    assert guarded.last_repair is not None
    assert [f.kind for f in guarded.last_repair.fixes] == ["call_lowered"]


@needs_blocks
def test_string_arguments_from_openai_reach_anthropic_as_an_object() -> None:
    call_block = ToolCallBlock(tool_call_id="call_1", tool_name="add", tool_kwargs='{"a": 1}')
    history = [
        user("q"),
        ChatMessage(role="assistant", blocks=[call_block]),
        result("call_1"),
    ]
    plain = FakeAnthropic([reply("ok")])
    anthropic_llm(plain).chat(history)
    assert _tool_uses(plain.bodies[0])[0]["input"] == '{"a": 1}'

    server = FakeAnthropic([reply("ok")])
    GuardedLLM(llm=anthropic_llm(server)).chat(history)
    assert _tool_uses(server.bodies[0])[0]["input"] == {"a": 1}
    assert call_block.tool_kwargs == '{"a": 1}'


def test_agent_workflow_with_a_guarded_llm() -> None:
    from llama_index.core.agent.workflow import AgentWorkflow

    server = FakeAnthropic([call(("toolu_new", "add", {"a": 1, "b": 2})), reply("3")])
    agent = FunctionAgent(
        name="adder",
        description="Adds numbers.",
        tools=[add],
        llm=GuardedLLM(llm=anthropic_llm(server)),
        streaming=False,
    )
    workflow = AgentWorkflow(agents=[agent], root_agent="adder")
    memory = Memory.from_defaults(session_id="wf", chat_history=POISONS["split_batch"]())

    async def go() -> Any:
        return await workflow.run(user_msg="What is 1+2?", memory=memory)

    assert str(asyncio.run(go())) == "3"
    assert server.rejected == []
    assert all(toolpair.validate(body, "anthropic") == [] for body in server.bodies)
