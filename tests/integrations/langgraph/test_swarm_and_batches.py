"""Two thread shapes the single-agent tests do not cover: a langgraph-swarm parent (the
agents are subgraph nodes, the state names the active one) stuck on a call without its
result; and a tool step cancelled while its ToolNode ran the calls, one finished and one
still running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.prebuilt import ToolNode, create_react_agent

from toolpair.integrations.langgraph import (
    PENDING_TOOL_CALLS,
    NoToolNode,
    UnknownActiveAgent,
    acheck_thread,
    arepair_thread,
    check_thread,
    repair_thread,
)

from .graphs import (
    INVALID_CHAT_HISTORY,
    Ledger,
    ScriptedModel,
    ai_calls,
    call,
    cfg,
    loop_graph,
    messages_of,
    model,
    results,
)

swarm = pytest.importorskip("langgraph_swarm")


# ----------------------------------------------------------------------------- swarm


def _swarm(
    alice_llm: Any, bob_llm: Any, ledger: Ledger, checkpointer: Any, bob: str = "bob"
) -> Any:
    """create_swarm's own parent over two create_react_agent agents with its handoff
    tools. Alice runs each call as its own task (v2), so her handoff lands in the parent
    beside a sibling call that never gets its result there."""
    tools = ledger.tools()
    alice = create_react_agent(
        alice_llm,
        [*tools, swarm.create_handoff_tool(agent_name=bob)],
        version="v2",
        name="alice",
    )
    other = create_react_agent(
        bob_llm, [*tools, swarm.create_handoff_tool(agent_name="alice")], name=bob
    )
    return swarm.create_swarm([alice, other], default_active_agent="alice").compile(
        checkpointer=checkpointer
    )


def _stuck_swarm(checkpointer: Any) -> tuple[Any, ScriptedModel, ScriptedModel, Ledger]:
    ledger = Ledger()
    alice_llm = model(ai_calls(call("w"), call("t", "transfer_to_bob")), "Alice again")
    bob_llm = model("Bob here")
    graph = _swarm(alice_llm, bob_llm, ledger, checkpointer)
    config = cfg()
    for attempt in ({"messages": [HumanMessage("weather, then Bob")]}, None):
        with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
            graph.invoke(attempt, config)
    return graph, alice_llm, bob_llm, ledger


def test_a_swarm_thread_is_repaired_as_its_active_agent(checkpointer: Any) -> None:
    """Alice checks the weather and hands off in one turn: the parent's messages (where
    the swarm keeps the conversation: its agents have no checkpointer of their own) hold
    both calls and only the handoff's result, active_agent is Bob, and Bob fails on every
    run. The parent has no ToolNode; repair_thread makes the update as Bob's node, named
    by the state, and the next message runs."""
    graph, _, bob_llm, ledger = _stuck_swarm(checkpointer)
    config = cfg()
    state = graph.get_state(config)
    assert state.values["active_agent"] == "bob"
    assert set(results(state.values["messages"])) == {"t"}
    [missing] = check_thread(graph, config)
    assert missing.ids == ("w",) and missing.index == 1

    report = repair_thread(graph, config)

    assert report.as_node == "bob"
    assert [f.ids for f in report.fixes if f.kind == "synthetic_result"] == [("w",)]
    assert check_thread(graph, config) == []
    assert not repair_thread(graph, config).changed
    graph.invoke({"messages": [HumanMessage("hello?")]}, config)
    sent = bob_llm.seen[-1]
    assert results(sent)["t"].content.startswith("Successfully transferred to bob")
    assert results(sent)["w"].status == "error"
    assert messages_of(graph, config)[-1].content == "Bob here"
    assert check_thread(graph, config) == []
    assert ledger.runs == {"weather:Paris": 1}


def test_an_explicit_as_node_wins_over_the_active_agent(checkpointer: Any) -> None:
    """as_node= is still the caller's choice: the update is made as Alice's node, and the
    next message still goes to Bob (the router reads active_agent)."""
    graph, _, bob_llm, _ = _stuck_swarm(checkpointer)
    config = cfg()

    report = repair_thread(graph, config, as_node="alice")

    assert report.as_node == "alice" and report.checkpoint_id is not None
    graph.invoke({"messages": [HumanMessage("hello?")]}, config)
    assert results(bob_llm.seen[-1])["w"].status == "error"


def test_an_active_agent_that_names_no_node(checkpointer: Any) -> None:
    """The thread was stuck under Bob, and the swarm is redeployed with Bob renamed:
    active_agent names no node, so nothing is written and the error says which name and
    which nodes; as_node= still repairs it."""
    _stuck_swarm(checkpointer)
    config = cfg()
    renamed = _swarm(model("Alice"), model("Robert"), Ledger(), checkpointer, bob="robert")
    head = renamed.get_state(config).config

    with pytest.raises(UnknownActiveAgent, match=r"active_agent='bob' names no node") as err:
        repair_thread(renamed, config)

    assert isinstance(err.value, NoToolNode)
    assert (err.value.agent, err.value.nodes) == ("bob", ["alice", "robert"])
    assert renamed.get_state(config).config == head
    assert repair_thread(renamed, config, as_node="robert").as_node == "robert"
    assert check_thread(renamed, config) == []


# ----------------------------------------------------------------------------- batches


class Batch:
    """Two async tools: ``fast`` returns at once, ``slow`` waits until released, so a
    run can be cancelled with one call finished and the other still running."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.release = asyncio.Event()

    def tools(self) -> list[BaseTool]:
        runs, release = self.runs, self.release

        @tool
        async def fast(x: str) -> str:
            """Answers at once."""
            runs.append("fast")
            return f"fast {x}"

        @tool
        async def slow(x: str) -> str:
            """Answers when its backend does."""
            runs.append("slow")
            await release.wait()
            return f"slow {x}"

        return [fast, slow]


def _batch_model() -> ScriptedModel:
    return model(
        ai_calls(call("f", "fast", x="1"), call("s", "slow", x="2")), "after the tools", "again"
    )


def _hand_built(llm: Any, tools: list[BaseTool], checkpointer: Any) -> Any:
    """The textbook graph with the prebuilt ToolNode fed the state (not Send): it runs
    the calls of a turn concurrently inside one task, whose writes are stored only when
    the last call returns."""

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    return loop_graph(agent, ToolNode(tools), checkpointer)


def _react_v2(llm: Any, tools: list[BaseTool], checkpointer: Any) -> Any:
    """create_react_agent with one task per call: a call that finished is stored as its
    task's pending write."""
    return create_react_agent(llm, tools, version="v2", checkpointer=checkpointer)


@asynccontextmanager
async def _saver(kind: str, tmp_path: Any) -> AsyncIterator[Any]:
    if kind == "memory":
        yield InMemorySaver()
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as s:
        yield s


@asynccontextmanager
async def _cancelled_mid_batch(
    saver: str, tmp_path: Any, build: Build, stored: bool
) -> AsyncIterator[tuple[Any, Batch, Any]]:
    """A graph of ``build`` on a fresh checkpointer, its first run (thread ``cfg()``)
    cancelled mid-batch; the graph, the batch and the model."""
    batch, llm = Batch(), _batch_model()
    async with _saver(saver, tmp_path) as checkpointer:
        graph = build(llm, batch.tools(), checkpointer)
        await _cancel_mid_batch(graph, cfg(), batch, stored)
        yield graph, batch, llm


async def _cancel_mid_batch(graph: Any, config: Any, batch: Batch, stored: bool) -> None:
    """Start a run and cancel it while ``slow`` runs and ``fast`` has returned (and,
    when ``stored``, once the checkpoint holds fast's result as a pending write)."""
    run = asyncio.ensure_future(graph.ainvoke({"messages": [HumanMessage("both?")]}, config))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if "fast" in batch.runs and "slow" in batch.runs:
            tasks = (await graph.aget_state(config)).tasks
            if not stored or any(t.result for t in tasks):
                break
    else:
        raise AssertionError("the batch never got under way")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert (await graph.aget_state(config)).next[0] == "tools"


Build = Callable[[Any, list[BaseTool], Any], Any]
SHAPES = [pytest.param(_hand_built, False, id="one-task"), pytest.param(_react_v2, True, id="send")]


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize(("build", "stored"), SHAPES)
def test_a_cancelled_batch_is_run_again_by_default(
    saver: str, build: Build, stored: bool, tmp_path: Any
) -> None:
    """LangGraph's own resume, which toolpair leaves as the default: the step is still
    to run, check_thread says so (and that a finished call would run again), repair
    writes nothing, and the next invoke runs the pending calls again; in the one-task
    shape that includes ``fast``, which had finished."""

    async def scenario() -> None:
        async with _cancelled_mid_batch(saver, tmp_path, build, stored) as (graph, batch, llm):
            config = cfg()
            [pending] = await acheck_thread(graph, config)
            assert pending.code == PENDING_TOOL_CALLS and pending.index == 1
            assert pending.ids == (("s",) if stored else ("f", "s"))
            assert not (await arepair_thread(graph, config)).changed

            batch.release.set()
            await graph.ainvoke(None, config)

            assert batch.runs == ["fast", "slow", "slow"] if stored else ["fast", "slow"] * 2
            assert results(llm.seen[-1])["f"].content == "fast 1"
            assert await acheck_thread(graph, config) == []

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("saver", "api"), [("memory", "sync"), ("memory", "async"), ("sqlite", "async")]
)
@pytest.mark.parametrize(("build", "stored"), SHAPES)
def test_cancel_pending_tools_answers_the_interrupted_batch(
    saver: str, api: str, build: Build, stored: bool, tmp_path: Any
) -> None:
    """cancel_pending_tools=True: the calls of the interrupted step get the error
    result, a result the checkpoint holds is kept, and the next invoke goes to the model
    without running any tool again."""

    async def scenario() -> None:
        async with _cancelled_mid_batch(saver, tmp_path, build, stored) as (graph, batch, llm):
            config = cfg()

            if api == "sync":
                report = repair_thread(graph, config, cancel_pending_tools=True)
            else:
                report = await arepair_thread(graph, config, cancel_pending_tools=True)

            answered = [i for f in report.fixes if f.kind == "synthetic_result" for i in f.ids]
            assert answered == (["s"] if stored else ["f", "s"])
            assert report.as_node == "tools" and report.checkpoint_id is not None
            assert report.cancelled_interrupts == 0
            assert await acheck_thread(graph, config) == []
            assert (await graph.aget_state(config)).next[0] == "agent"
            await graph.ainvoke(None, config)

            sent: list[BaseMessage] = llm.seen[-1]
            assert results(sent)["s"].status == "error"
            if stored:
                assert results(sent)["f"].content == "fast 1"
            else:
                assert results(sent)["f"].status == "error"
            assert batch.runs == ["fast", "slow"]  # nothing ran twice
            final = (await graph.aget_state(config)).values["messages"]
            assert final[-1].content == "after the tools"
            again = await arepair_thread(graph, config, cancel_pending_tools=True)
            assert not again.changed

    asyncio.run(scenario())
