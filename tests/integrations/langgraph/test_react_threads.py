"""Threads of ``create_react_agent`` stuck on INVALID_CHAT_HISTORY, each the way it
happens in the field, on a real checkpointer; then unstuck by `repair_thread` with every
result a tool returned kept and no tool run again."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.types import Command

from toolpair.integrations.langgraph import (
    PENDING_TOOL_CALLS,
    InterruptPending,
    check_thread,
    repair_thread,
)

from .graphs import (
    INVALID_CHAT_HISTORY,
    Ledger,
    ai_calls,
    call,
    cfg,
    messages_of,
    model,
    react_agent,
    results,
)

VERSIONS = ["v1", "v2"]


def _assert_stuck(graph: Any, config: Any) -> None:
    """Every retry fails the same way: the broken history is in the checkpoint."""
    for _ in range(2):
        with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
            graph.invoke(None, config)


def _assert_runs_after_repair(
    graph: Any, config: Any, llm: Any, kept: dict[str, ToolMessage], report: Any
) -> None:
    """After the repair the model gets a sound history holding every result the thread
    had, each call answered exactly once, and a second repair writes nothing."""
    assert report.changed and report.checkpoint_id is not None
    assert report.checkpoint_id != report.previous_checkpoint_id
    assert graph.get_state(config).next[0] in ("agent", "pre_model_hook")
    calls_before = len(llm.seen)
    graph.invoke(None, config)
    assert len(llm.seen) == calls_before + 1
    sent = llm.seen[-1]
    answered = results(sent)
    for call_id, real in kept.items():
        assert answered[call_id].content == real.content
        assert answered[call_id].status != "error"
    call_ids = [c["id"] for m in sent for c in getattr(m, "tool_calls", [])]
    assert sorted(answered) == sorted(call_ids)
    assert len([m for m in sent if isinstance(m, ToolMessage)]) == len(call_ids)
    assert check_thread(graph, config) == []
    again = repair_thread(graph, config)
    assert not again.changed and again.checkpoint_id is None


@pytest.mark.parametrize("version", VERSIONS)
def test_new_input_while_an_interrupt_is_pending(checkpointer: Any, version: str) -> None:
    """A tool paused on interrupt() beside a fast tool, then a new user message: the
    pending results are discarded and the agent fails on every run. repair_thread keeps
    the fast tool's result (found in the paused checkpoint) and answers the abandoned call
    with an error result."""
    ledger = Ledger()
    llm = model(ai_calls(call("a", "approve", action="deploy"), call("w")), "ok, dropped it")
    graph = react_agent(llm, ledger.tools(), checkpointer, version=version)
    config = cfg()
    graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, config)
    paused = results(messages_of(graph, config))
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("never mind, just answer")]}, config)
    _assert_stuck(graph, config)
    stale = graph.get_state(config).config

    report = repair_thread(graph, config)

    assert report.mode == "rewrite"
    assert {f.kind for f in report.fixes} >= {"synthetic_result"}
    assert set(report.recovered) == set(paused)
    _assert_runs_after_repair(graph, config, llm, paused, report)
    answered = results(llm.seen[-1])
    assert answered["a"].status == "error"
    if version == "v2":
        # A Send per call: the fast tool's result was a pending write when the run paused.
        assert answered["w"].content == "sunny in Paris"
        assert ledger.runs == {"approve:deploy": 1, "weather:Paris": 1}
    # v1 runs the batch as one task: the interrupt discarded the whole batch. Either way
    # no tool ran twice.
    assert ledger.runs["approve:deploy"] == 1 and max(ledger.runs.values()) == 1
    # The stuck checkpoint is still there for time travel.
    assert [m.type for m in graph.get_state(stale).values["messages"]][-1] == "human"


def test_a_tool_that_raises_repaired_in_place(checkpointer: Any) -> None:
    """A tool raises (ToolNode re-raises by default since prebuilt 1.0.2): the run stops
    at the tool step and invoke(None) raises again. repair_thread writes the error result
    for the failed call and keeps the sibling's result, held only as a pending write."""
    ledger = Ledger()
    llm = model(ai_calls(call("f", "flaky", x="1"), call("w")), "the backend is down")
    graph = react_agent(llm, ledger.tools(), checkpointer, version="v2")
    config = cfg()
    with pytest.raises(RuntimeError, match="backend down"):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    pending = results(messages_of(graph, config))
    assert graph.get_state(config).next == ("tools",)

    report = repair_thread(graph, config)

    assert report.as_node == "tools"
    assert report.recovered == ()
    _assert_runs_after_repair(graph, config, llm, pending, report)
    assert results(llm.seen[-1])["f"].status == "error"
    assert ledger.runs == {"flaky:1": 1, "weather:Paris": 1}


def test_a_tool_that_raised_then_new_input(checkpointer: Any) -> None:
    """The same failure, then the user writes again: now INVALID_CHAT_HISTORY on every
    run, and the sibling's result exists only in the earlier checkpoint."""
    ledger = Ledger()
    llm = model(ai_calls(call("f", "flaky", x="1"), call("w")), "the backend is down")
    graph = react_agent(llm, ledger.tools(), checkpointer, version="v2")
    config = cfg()
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    pending = results(messages_of(graph, config))
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("any news?")]}, config)
    _assert_stuck(graph, config)

    report = repair_thread(graph, config)

    assert set(report.recovered) == set(pending)
    _assert_runs_after_repair(graph, config, llm, pending, report)
    assert ledger.runs == {"flaky:1": 1, "weather:Paris": 1}


def test_cancelled_right_after_the_model_step(checkpointer: Any) -> None:
    """The run is cancelled (the stream closed) after the model asked for tools: the
    thread is not stuck yet (invoke(None) would run them), so repair_thread leaves it
    alone and check_thread reports only the pending step (not a provider rule); a new
    user message makes it stuck, and the repair answers both calls."""
    ledger = Ledger()
    llm = model(ai_calls(call("w1"), call("w2", city="Oslo")), "sorry, cancelled")
    graph = react_agent(llm, ledger.tools(), checkpointer)
    config = cfg()
    for update in graph.stream({"messages": [HumanMessage("weather?")]}, config):
        if "agent" in update:
            break
    assert set(graph.get_state(config).next) == {"tools"}
    [pending] = check_thread(graph, config)
    assert (pending.code, pending.index, pending.ids) == (PENDING_TOOL_CALLS, 1, ("w1", "w2"))
    assert "next invoke runs all of them again" in pending.message
    assert not repair_thread(graph, config).changed
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("hello?")]}, config)
    _assert_stuck(graph, config)
    assert {v.code for v in check_thread(graph, config)}

    report = repair_thread(graph, config)

    assert [f.ids for f in report.fixes if f.kind == "synthetic_result"] == [("w1",), ("w2",)]
    _assert_runs_after_repair(graph, config, llm, {}, report)
    assert ledger.runs == {}


def test_new_input_while_paused_before_the_tools(checkpointer: Any) -> None:
    """interrupt_before=["tools"] pauses for a review; a new message instead of a resume
    leaves both calls unanswered. Before that message the thread is sound (nothing to
    write); after it, the repair answers both calls and no tool runs."""
    ledger = Ledger()
    llm = model(ai_calls(call("w1"), call("w2", city="Oslo")), "skipped")
    graph = react_agent(llm, ledger.tools(), checkpointer, interrupt_before=["tools"])
    config = cfg()
    graph.invoke({"messages": [HumanMessage("weather?")]}, config)
    # The review pause the graph was compiled with is not an interrupted run.
    assert check_thread(graph, config) == []
    assert not repair_thread(graph, config).changed
    with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("no, don't")]}, config)
    _assert_stuck(graph, config)

    report = repair_thread(graph, config)

    assert report.mode == "rewrite"
    _assert_runs_after_repair(graph, config, llm, {}, report)
    assert ledger.runs == {}


def test_several_interrupts_pending(checkpointer: Any) -> None:
    """Two approvals pending at once: a bare resume is refused by LangGraph, and
    repair_thread refuses too (typed error, nothing written) until told to cancel them;
    then both calls get the error result and the thread runs."""
    ledger = Ledger()
    llm = model(
        ai_calls(call("a1", "approve", action="deploy"), call("a2", "approve", action="rollback")),
        "nothing approved",
    )
    graph = react_agent(llm, ledger.tools(), checkpointer, version="v2")
    config = cfg()
    graph.invoke({"messages": [HumanMessage("deploy then roll back")]}, config)
    state = graph.get_state(config)
    interrupts = [i for t in state.tasks for i in t.interrupts]
    assert len(interrupts) == 2
    head = state.config["configurable"]["checkpoint_id"]
    if hasattr(state, "interrupts"):  # langgraph >= 0.4 asks for interrupt ids
        with pytest.raises(Exception, match="multiple pending interrupts"):
            graph.invoke(Command(resume="yes"), config)

    with pytest.raises(InterruptPending, match="2 pending interrupt"):
        repair_thread(graph, config)
    assert graph.get_state(config).config["configurable"]["checkpoint_id"] == head
    with pytest.raises(InterruptPending):
        repair_thread(graph, config, dry_run=True)

    report = repair_thread(graph, config, cancel_interrupts=True)

    assert report.cancelled_interrupts == 2
    assert report.mode == "append"
    assert [m.status for m in report.written] == ["error", "error"]
    _assert_runs_after_repair(graph, config, llm, {}, report)
    assert ledger.runs == {"approve:deploy": 1, "approve:rollback": 1}


def test_healthy_threads_are_never_written(checkpointer: Any) -> None:
    """A finished thread and a thread paused before its tools are left as they are."""
    ledger = Ledger()
    llm = model(ai_calls(call("w")), "sunny", ai_calls(call("w2", city="Rome")))
    graph = react_agent(llm, ledger.tools(), checkpointer, interrupt_before=["tools"])
    config = cfg()
    graph.invoke({"messages": [HumanMessage("weather?")]}, config)
    graph.invoke(None, config)
    head = graph.get_state(config).config
    for dry_run in (True, False):
        report = repair_thread(graph, config, dry_run=dry_run)
        assert not report.changed and report.fixes == [] and report.written == []
    assert graph.get_state(config).config == head
    assert check_thread(graph, config) == []
    assert ledger.runs == {"weather:Paris": 1}


def test_dry_run_reports_and_writes_nothing(checkpointer: Any) -> None:
    """dry_run gives the same fixes and update a real run writes, and writes nothing."""
    ledger = Ledger()
    llm = model(ai_calls(call("w1"), call("f", "flaky", x="2")), "ok")
    graph = react_agent(llm, ledger.tools(), checkpointer, version="v2")
    config = cfg()
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    head = graph.get_state(config).config
    dry = repair_thread(graph, config, dry_run=True)
    assert dry.changed and dry.dry_run and dry.checkpoint_id is None
    assert graph.get_state(config).config == head
    real = repair_thread(graph, config)
    assert [str(f) for f in real.fixes] == [str(f) for f in dry.fixes]
    assert [m.content for m in real.written] == [m.content for m in dry.written]
