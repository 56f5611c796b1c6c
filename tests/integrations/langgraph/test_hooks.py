"""Read-time repair, trimming and summarising inside real graphs: what the model is sent,
what the checkpoint keeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import trim_messages as lc_trim_messages

from toolpair.integrations.langchain import repair_messages
from toolpair.integrations.langgraph import (
    check_thread,
    repair_hook,
    repair_node,
    summarize_hook,
    summary_split,
)

from . import graphs as lg


def paired(messages: Sequence[BaseMessage]) -> bool:
    """Every call is answered right after its AIMessage, and every result answers a call
    of the AIMessage right before its run of results (checked here by hand)."""
    i = 0
    while i < len(messages):
        m = messages[i]
        if isinstance(m, ToolMessage):
            return False  # a result not preceded by its AIMessage's run
        i += 1
        if isinstance(m, AIMessage) and m.tool_calls:
            run: list[str] = []
            while i < len(messages) and isinstance(messages[i], ToolMessage):
                run.append(messages[i].tool_call_id)
                i += 1
            if sorted(run) != sorted(c["id"] for c in m.tool_calls):
                return False
    return True


def _stuck_react(checkpointer: Any, **kw: Any) -> tuple[Any, Any, lg.Ledger, Any]:
    """A create_react_agent thread stuck after new input arrived during an interrupt."""
    ledger = lg.Ledger()
    llm = lg.model(
        lg.ai_calls(lg.call("a", "approve", action="deploy"), lg.call("w")), "first", "second"
    )
    graph = lg.react_agent(llm, ledger.tools(), checkpointer, version="v2")
    config = lg.cfg()
    graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, config)
    with pytest.raises(ValueError, match=lg.INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("never mind")]}, config)
    return graph, llm, ledger, config


def test_repair_hook_runs_a_stuck_thread_without_writing_it(checkpointer: Any) -> None:
    """The same thread, served by an agent with repair_hook: the model gets a repaired
    list, the checkpointed messages keep their (broken) history untouched."""
    _, llm, ledger, config = _stuck_react(checkpointer)
    graph = lg.react_agent(llm, ledger.tools(), checkpointer, pre_model_hook=repair_hook())
    before = lg.messages_of(graph, config)
    graph.invoke({"messages": [HumanMessage("are you there?")]}, config)
    sent = llm.seen[-1]
    assert paired(sent)
    # Read-time repair has only the checkpointed history: both calls get the error result
    # (repair_thread would also find the weather result in the earlier checkpoint).
    assert [m.status for m in sent if isinstance(m, ToolMessage)] == ["error", "error"]
    after = lg.messages_of(graph, config)
    # The state holds the old messages as they were, plus this turn's input and answer.
    assert [m.id for m in after[: len(before)]] == [m.id for m in before]
    assert not paired(after)
    assert ledger.runs == {"approve:deploy": 1, "weather:Paris": 1}


def test_repair_hook_always_sets_the_model_input(checkpointer: Any) -> None:
    """llm_input_messages is a checkpointed channel: a user hook that sets it only on
    some runs makes the model read an old turn's list. Wrapped in repair_hook, the model
    gets the current history on every run."""

    def first_turn_only(state: Any) -> dict[str, Any]:
        if len(state["messages"]) == 1:
            return {"llm_input_messages": state["messages"][-1:]}
        return {}

    def run(hook: Any) -> list[list[BaseMessage]]:
        llm = lg.model("one", "two")
        graph = lg.react_agent(llm, lg.Ledger().tools(), checkpointer, pre_model_hook=hook)
        config = lg.cfg(f"t-{id(hook)}")
        graph.invoke({"messages": [HumanMessage("hi")]}, config)
        graph.invoke({"messages": [HumanMessage("and now?")]}, config)
        return llm.seen

    stale = run(first_turn_only)
    assert [m.content for m in stale[1]] == ["hi"]  # the previous turn's input, again
    fresh = run(repair_hook(inner=first_turn_only))
    assert [m.content for m in fresh[1]] == ["hi", "one", "and now?"]


def _long_thread(llm_replies: int = 3) -> list[Any]:
    replies: list[Any] = []
    for n in range(llm_replies):
        replies += [lg.ai_calls(lg.call(f"x{n}"), lg.call(f"y{n}", city=f"C{n}")), f"answer {n}"]
    return replies


def test_langchain_trim_cuts_pairs_and_repair_hook_trim_does_not(checkpointer: Any) -> None:
    """The documented trimming hook (LangChain's trim_messages) cuts a parallel batch in
    half and the agent fails; repair_hook(trim=...) trims by whole units."""
    ledger = lg.Ledger()

    def lc_hook(state: Any) -> dict[str, Any]:
        trimmed = lc_trim_messages(
            state["messages"], strategy="first", max_tokens=3, token_counter=len
        )
        return {"llm_input_messages": trimmed}

    llm = lg.model(*_long_thread(1), "more")
    graph = lg.react_agent(llm, ledger.tools(), checkpointer, pre_model_hook=lc_hook)
    with pytest.raises(ValueError, match=lg.INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("weather twice")]}, lg.cfg("lc"))

    llm = lg.model(*_long_thread(3))
    hook = repair_hook("openai", trim={"max_tokens": 5, "token_counter": len})
    graph = lg.react_agent(llm, ledger.tools(), checkpointer, pre_model_hook=hook)
    config = lg.cfg("tp")
    for n in range(3):
        graph.invoke({"messages": [HumanMessage(f"weather {n}")]}, config)
    assert len(lg.messages_of(graph, config)) == 15
    for sent in llm.seen:
        assert sent and paired(sent) and len(sent) <= 5
    # Even a budget under the newest unit sends that unit, never an empty list.
    tiny = repair_hook("openai", trim={"max_tokens": 1, "token_counter": len})
    sent = tiny({"messages": lg.messages_of(graph, config)[:-1]})["llm_input_messages"]
    assert sent and paired(sent)


def test_summarize_hook_never_splits_a_pair(checkpointer: Any) -> None:
    """A summary cut that would fall between two parallel results moves to a unit
    boundary: the summariser gets whole pairs, the kept history starts with no orphan,
    and the persisted thread stays sound."""
    summarised: list[list[BaseMessage]] = []

    def summarizer(older: list[BaseMessage]) -> str:
        summarised.append(older)
        return f"{len(older)} earlier messages about the weather"

    llm = lg.model(*_long_thread(3))
    hook = summarize_hook(
        summarizer, max_tokens=8, keep_tokens=4, token_counter=len, provider="openai"
    )
    graph = lg.react_agent(llm, lg.Ledger().tools(), checkpointer, pre_model_hook=hook)
    config = lg.cfg()
    for n in range(3):
        graph.invoke({"messages": [HumanMessage(f"weather {n}")]}, config)
    assert summarised
    for older in summarised:
        assert paired(older)
    for sent in llm.seen:
        assert paired(sent)
    state = lg.messages_of(graph, config)
    assert state[0].content.startswith("Summary of the earlier conversation")
    assert paired(state)
    assert check_thread(graph, config) == []


def test_summary_split_moves_the_cut_to_a_unit_boundary() -> None:
    """keep_tokens that would keep only the second of two results keeps neither."""
    history: list[BaseMessage] = [
        HumanMessage("q"),
        lg.ai_calls(lg.call("a"), lg.call("b")),
        ToolMessage("ra", tool_call_id="a"),
        ToolMessage("rb", tool_call_id="b"),
        HumanMessage("next"),
    ]
    older, kept = summary_split(history, keep_tokens=2, token_counter=len)
    assert [m.content for m in kept] == ["next"]
    assert older == history[:4] and all(a is b for a, b in zip(older, history[:4], strict=True))


def test_hand_built_graph_with_repair_messages_in_front_of_the_model(
    checkpointer: Any,
) -> None:
    """The one-liner for a hand-built graph: repair_messages() in front of the model. A
    thread whose tool raised keeps running on new input, and the state is not written."""
    ledger = lg.Ledger()
    llm = lg.model(lg.ai_calls(lg.call("f", "flaky", x="1")), "backend down, sorry", "still here")
    graph = lg.hand_built(llm, ledger.tools(), checkpointer, before_model=repair_messages())
    config = lg.cfg()
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    graph.invoke({"messages": [HumanMessage("what happened?")]}, config)
    sent = llm.seen[-1]
    assert paired(sent)
    assert [m.status for m in sent if isinstance(m, ToolMessage)] == ["error"]
    assert "f" not in lg.results(lg.messages_of(graph, config))
    assert ledger.runs == {"flaky:1": 1}


def test_repair_node_persists_the_repair(checkpointer: Any) -> None:
    """repair_node writes the repaired history (a REMOVE_ALL rewrite) before the model
    runs, and returns nothing for a sound history."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    ledger = lg.Ledger()
    llm = lg.model(lg.ai_calls(lg.call("f", "flaky", x="1")), "sorry")

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("repair", repair_node())
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(ledger.tools(), handle_tool_errors=False))
    g.add_edge(START, "repair")
    g.add_edge("repair", "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "repair")
    graph = g.compile(checkpointer=checkpointer)
    config = lg.cfg()
    with pytest.raises(RuntimeError):
        graph.invoke({"messages": [HumanMessage("go")]}, config)
    assert repair_node()({"messages": [HumanMessage("fine")]}) == {}
    graph.invoke({"messages": [HumanMessage("again")]}, config)
    assert paired(lg.messages_of(graph, config))
    assert lg.results(lg.messages_of(graph, config))["f"].status == "error"


def test_repair_hook_repairs_what_an_inner_hook_persists() -> None:
    """An inner hook that rewrites the state (REMOVE_ALL plus the newest messages, the
    documented deletion recipe) keeps its update; the model input is that new history,
    repaired: the orphan result the cut left is gone."""
    from langchain_core.messages import RemoveMessage

    history: list[BaseMessage] = [
        HumanMessage("q", id="h1"),
        lg.ai_calls(lg.call("a")).model_copy(update={"id": "ai1"}),
        ToolMessage("ra", tool_call_id="a", id="t1"),
        HumanMessage("next", id="h2"),
    ]

    def keep_last_two(state: Any) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id="__remove_all__"), *state["messages"][-2:]]}

    out = repair_hook("openai", inner=keep_last_two)({"messages": history})
    assert out["messages"][0].id == "__remove_all__"
    assert [m.content for m in out["llm_input_messages"]] == ["next"]
    assert [m.id for m in history] == ["h1", "ai1", "t1", "h2"]
