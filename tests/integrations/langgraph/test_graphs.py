"""Stuck threads in the other graph shapes: ``create_agent`` and a hand-built graph on
the real ChatAnthropic (the provider's 400 captured on the wire), a subgraph, a handoff
between agents, the async API; and the model id read off the chat model."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, create_react_agent
from langgraph.types import Command

from toolpair import Policy
from toolpair.integrations.langgraph import (
    InterruptPending,
    NoToolNode,
    acheck_thread,
    arepair_thread,
    check_thread,
    host_for,
    model_id,
    repair_thread,
    rules_for,
)

from .graphs import (
    INVALID_CHAT_HISTORY,
    AnthropicWire,
    Ledger,
    ai_calls,
    call,
    cfg,
    hand_built,
    messages_of,
    model,
    parent_with_subgraph,
    react_agent,
    results,
)

anthropic = pytest.importorskip("anthropic")
use = AnthropicWire.tool_use


def _tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


def test_create_agent_thread_rejected_by_anthropic(checkpointer: Any) -> None:
    """create_agent never validates: new input during an approval sends the dangling
    calls to Anthropic, which answers 400 on every retry. repair_thread (given the chat
    model: Anthropic's rules, its model id) keeps the finished sibling's result, answers
    the abandoned call, and the next request is accepted."""
    pytest.importorskip("langchain.agents")
    from .graphs import langchain_agent

    ledger = Ledger()
    wire = AnthropicWire([use("a", "approve", action="deploy"), use("w")], "skipped it")
    llm = wire.model()
    graph = langchain_agent(llm, ledger.tools(), checkpointer)
    config = cfg()
    graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, config)
    paused = results(messages_of(graph, config))
    assert set(paused) == {"w"}
    for attempt in ({"messages": [HumanMessage("never mind")]}, None):
        with pytest.raises(anthropic.BadRequestError, match="without `tool_result` blocks"):
            graph.invoke(attempt, config)
    assert wire.rejected[-1].startswith("messages.1: `tool_use` ids were found")
    assert wire.bodies[-1] == wire.bodies[-2]  # every retry sends the same body

    report = repair_thread(graph, config, llm)

    assert (report.provider, report.model) == ("anthropic", "claude-sonnet-4-5")
    assert report.recovered == ("w",) and report.as_node == "tools"
    graph.invoke(None, config)
    body = wire.bodies[-1]
    assert AnthropicWire.pairing_error(body["messages"]) is None
    sent = _tool_results(body)
    assert sent["w"]["content"] == "sunny in Paris" and not sent["w"].get("is_error")
    assert sent["a"]["is_error"] is True
    assert ledger.runs == {"approve:deploy": 1, "weather:Paris": 1}
    assert not repair_thread(graph, config, llm).changed


def test_create_agent_middleware_serves_the_stuck_thread(checkpointer: Any) -> None:
    """The same stuck thread served by create_agent with ToolpairMiddleware: accepted
    without any write to the thread."""
    pytest.importorskip("langchain.agents")
    from toolpair.integrations.langchain import ToolpairMiddleware

    from .graphs import langchain_agent

    wire = AnthropicWire([use("a", "approve", action="deploy"), use("w")], "ok")
    llm = wire.model()
    ledger = Ledger()
    graph = langchain_agent(llm, ledger.tools(), checkpointer)
    config = cfg()
    graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, config)
    with pytest.raises(anthropic.BadRequestError):
        graph.invoke({"messages": [HumanMessage("never mind")]}, config)
    stuck = messages_of(graph, config)
    fixed = langchain_agent(llm, ledger.tools(), checkpointer, middleware=[ToolpairMiddleware()])
    fixed.invoke(None, config)
    assert AnthropicWire.pairing_error(wire.bodies[-1]["messages"]) is None
    assert [m.id for m in messages_of(graph, config)[: len(stuck)]] == [m.id for m in stuck]
    assert ledger.runs == {"approve:deploy": 1, "weather:Paris": 1}


def test_abandoned_approval_in_create_agent(checkpointer: Any) -> None:
    """HumanInTheLoopMiddleware waits for an approval of one of two calls; the user writes
    something else instead. No tool ran, Anthropic rejects the thread on every run, and
    the repair is refused while the approval is pending, then made without running a
    tool."""
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from .graphs import langchain_agent

    ledger = Ledger()
    wire = AnthropicWire([use("w1"), use("w2", city="Oslo")], "nothing ran")
    llm = wire.model()
    hitl = HumanInTheLoopMiddleware(interrupt_on={"weather": True})
    graph = langchain_agent(llm, ledger.tools(), checkpointer, middleware=[hitl])
    config = cfg()
    graph.invoke({"messages": [HumanMessage("weather in Paris and Oslo?")]}, config)
    with pytest.raises(InterruptPending):
        repair_thread(graph, config, llm)
    for attempt in ({"messages": [HumanMessage("forget it")]}, None):
        with pytest.raises(anthropic.BadRequestError, match="without `tool_result` blocks"):
            graph.invoke(attempt, config)

    report = repair_thread(graph, config, llm)

    assert [f.ids for f in report.fixes if f.kind == "synthetic_result"] == [("w1",), ("w2",)]
    graph.invoke(None, config)
    assert AnthropicWire.pairing_error(wire.bodies[-1]["messages"]) is None
    assert ledger.runs == {}


def test_deleting_old_messages_orphans_a_result(checkpointer: Any) -> None:
    """The documented "delete the first N messages" recipe cuts a call from its result:
    Anthropic rejects the orphan on every run. Repaired with orphans="text", the result's
    content stays in the history as text and the thread runs."""
    ledger = Ledger()
    wire = AnthropicWire([use("w")], "It is sunny.", "Tomorrow too.")
    llm = wire.model()
    graph = hand_built(llm, ledger.tools(), checkpointer)
    config = cfg()
    graph.invoke({"messages": [HumanMessage("weather?")]}, config)
    first_two = messages_of(graph, config)[:2]
    graph.update_state(config, {"messages": [RemoveMessage(id=m.id) for m in first_two]})
    for attempt in ({"messages": [HumanMessage("and tomorrow?")]}, None):
        with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id`"):
            graph.invoke(attempt, config)
    assert check_thread(graph, config, llm)

    report = repair_thread(graph, config, llm, policy=Policy(orphans="text"))

    assert [f.kind for f in report.fixes][:1] == ["orphan_result_text"] or any(
        f.kind.startswith("orphan") for f in report.fixes
    )
    assert report.mode == "rewrite"
    graph.invoke(None, config)
    body = wire.bodies[-1]
    assert AnthropicWire.pairing_error(body["messages"]) is None
    assert "sunny in Paris" in str(body["messages"])
    assert check_thread(graph, config, llm) == []
    assert ledger.runs == {"weather:Paris": 1}


def test_hand_built_graph_on_a_sqlite_file(tmp_path: Any) -> None:
    """A hand-built StateGraph with ToolNode whose tool raised: every retry runs the
    tool and raises again. Repaired through a SQLite file, then reopened in a new
    saver (as a new process would): it runs, and no tool runs again."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = str(tmp_path / "threads.sqlite")
    ledger = Ledger()
    llm = model(ai_calls(call("f", "flaky", x="1"), call("w")), "partly done")
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = hand_built(llm, ledger.tools(), SqliteSaver(conn))
        with pytest.raises(RuntimeError):
            graph.invoke({"messages": [HumanMessage("go")]}, cfg())
        with pytest.raises(RuntimeError):
            graph.invoke(None, cfg())  # retried: the tool raises again
        assert ledger.runs["flaky:1"] == 2
        ran = dict(ledger.runs)
        report = repair_thread(graph, cfg())
        assert report.checkpoint_id
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = hand_built(llm, ledger.tools(), SqliteSaver(conn))
        assert graph.get_state(cfg()).next == ("agent",)
        graph.invoke(None, cfg())
    sent = results(llm.seen[-1])
    assert sorted(sent) == ["f", "w"] and sent["f"].status == "error"
    assert ledger.runs == ran  # nothing ran after the repair


def test_subgraph_state_is_repaired(checkpointer: Any) -> None:
    """A tool raises inside a subgraph: the child's checkpoint holds the dangling call.
    repair_thread repairs the child's state (its own namespace), and the parent's
    invoke(None) resumes the child at its model."""
    ledger = Ledger()
    llm = model(ai_calls(call("f", "flaky", x="1"), call("w")), "partly done")
    graph, _ = parent_with_subgraph(llm, ledger.tools(), checkpointer)
    config = cfg()
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    ran = dict(ledger.runs)

    report = repair_thread(graph, config)

    assert report.mode == "none" and len(report.subgraphs) == 1
    sub = report.subgraphs[0]
    assert sub.changed and sub.as_node == "tools"
    assert sub.config["configurable"]["checkpoint_ns"].startswith("worker")
    graph.invoke(None, config)
    final = messages_of(graph, config)
    assert sorted(results(final)) == ["f", "w"] and results(final)["f"].status == "error"
    assert final[-1].content == "partly done"
    assert ledger.runs == ran


def _handoff_graph(alice_llm: Any, bob_llm: Any, ledger: Ledger, checkpointer: Any) -> Any:
    """Two agents; Alice's handoff tool moves the conversation to Bob the way
    langgraph-swarm does: Command(graph=PARENT) with the messages Alice saw plus its own
    result."""

    @tool
    def transfer_to_bob(
        state: Annotated[dict, InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Command:
        """Hand the conversation to Bob."""
        done = ToolMessage("Transferred to Bob", tool_call_id=tool_call_id, name="transfer_to_bob")
        return Command(
            goto="bob", graph=Command.PARENT, update={"messages": [*state["messages"], done]}
        )

    tools = ledger.tools()
    alice = create_react_agent(alice_llm, [*tools, transfer_to_bob], version="v2", name="alice")
    bob = create_react_agent(bob_llm, tools, name="bob")
    g = StateGraph(MessagesState)
    g.add_node("alice", alice)
    g.add_node("bob", bob)
    g.add_edge(START, "alice")
    g.add_edge("bob", END)
    return g.compile(checkpointer=checkpointer)


def test_parallel_handoff_leaves_a_call_without_result(checkpointer: Any) -> None:
    """Alice calls a tool and hands off in the same turn: the parent keeps her calls with
    only the handoff's result, and Bob fails on every run. The parent graph has no
    ToolNode, so the repair is made as Alice's node (named by the caller); the next
    message then runs."""
    ledger = Ledger()
    alice_llm = model(ai_calls(call("w"), call("t", "transfer_to_bob")), "Alice again")
    bob_llm = model("Bob here")
    graph = _handoff_graph(alice_llm, bob_llm, ledger, checkpointer)
    config = cfg()
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("weather, then Bob")]}, config)
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke(None, config)
    assert set(results(messages_of(graph, config))) == {"t"}
    head = graph.get_state(config).config
    with pytest.raises(NoToolNode, match="no ToolNode"):
        repair_thread(graph, config)
    assert graph.get_state(config).config == head

    report = repair_thread(graph, config, as_node="alice")

    assert report.as_node == "alice"
    assert [f.ids for f in report.fixes if f.kind == "synthetic_result"] == [("w",)]
    # Bob's own paused state is repaired as his ToolNode, when the retry left one.
    assert all(sub.as_node == "tools" for sub in report.subgraphs if sub.changed)
    assert not repair_thread(graph, config, as_node="alice").changed
    graph.invoke({"messages": [HumanMessage("hello?")]}, config)
    sent = alice_llm.seen[-1]
    assert results(sent)["t"].content == "Transferred to Bob"
    assert results(sent)["w"].status == "error"
    assert check_thread(graph, config) == []
    assert ledger.runs == {"weather:Paris": 1}


def test_async_api_on_the_async_sqlite_saver(tmp_path: Any) -> None:
    """arepair_thread and acheck_thread through aget_state / aupdate_state on
    AsyncSqliteSaver."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def scenario() -> None:
        ledger = Ledger()
        llm = model(ai_calls(call("f", "flaky", x="1"), call("w")), "partly done")
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
            graph = react_agent(llm, ledger.tools(), saver, version="v2")
            config = cfg()
            with pytest.raises(RuntimeError):
                await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
            assert [v.ids for v in await acheck_thread(graph, config)] == [("f",)]
            report = await arepair_thread(graph, config)
            assert report.checkpoint_id and report.mode == "rewrite"
            assert await acheck_thread(graph, config) == []
            await graph.ainvoke(None, config)
            assert results(llm.seen[-1])["w"].content == "sunny in Paris"
            assert not (await arepair_thread(graph, config)).changed
        assert ledger.runs == {"flaky:1": 1, "weather:Paris": 1}

    asyncio.run(scenario())


def test_model_id_is_read_off_the_chat_model() -> None:
    """The model id passed to the core comes from the framework's own model object,
    through bind_tools chains; a provider name carries none."""
    from langchain_openai import ChatOpenAI

    claude = AnthropicWire().model()
    gpt = ChatOpenAI(model="gpt-4o-mini", api_key="x")
    assert model_id(claude) == "claude-sonnet-4-5"
    assert model_id(gpt) == "gpt-4o-mini"
    assert model_id(gpt.bind_tools([Ledger().tools()[0]])) == "gpt-4o-mini"
    assert model_id("anthropic") is None and model_id(None) is None


def test_the_host_is_read_off_the_chat_model() -> None:
    """A ChatOpenAI pointed at DeepSeek is held to DeepSeek's host rules (with its model
    id); Anthropic and OpenAI themselves keep their API's rules."""
    from langchain_openai import ChatOpenAI

    deepseek = ChatOpenAI(model="deepseek-chat", api_key="x", base_url="https://api.deepseek.com")
    assert (host_for(deepseek), rules_for(deepseek)) == ("deepseek", "deepseek")
    assert model_id(deepseek) == "deepseek-chat"
    gpt = ChatOpenAI(model="gpt-4o-mini", api_key="x")
    assert (host_for(gpt), rules_for(gpt)) == (None, "openai")
    assert rules_for(AnthropicWire().model()) == "anthropic"
    assert rules_for(None) == "portable" and rules_for("vertex") == "vertex"
