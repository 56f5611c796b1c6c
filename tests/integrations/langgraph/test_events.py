"""What a repaired request reports through LangGraph's ``pre_model_hook``: one
`RepairEvent` per repaired model call (source "langgraph"), the same event to
``on_repair``; none for a valid history."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from toolpair import RepairEvent
from toolpair.integrations.langgraph import repair_hook


def _call() -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}]
    )


def test_one_event_per_repaired_request(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    hook = repair_hook("anthropic", model="claude-sonnet-4-6", on_repair=seen.append)
    sent = hook({"messages": [HumanMessage("weather?"), _call(), HumanMessage("still there?")]})
    assert any(isinstance(m, ToolMessage) for m in sent["llm_input_messages"])
    assert len(seen) == 1 and seen == subscribed
    assert (seen[0].source, seen[0].provider) == ("langgraph", "anthropic")
    assert seen[0].fixes.get("synthetic_result") == 1


def test_a_valid_history_reports_nothing(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    hook = repair_hook("anthropic", model="claude-sonnet-4-6", on_repair=seen.append)
    answer = ToolMessage("18C", tool_call_id="c1")
    hook({"messages": [HumanMessage("weather?"), _call(), answer, AIMessage("18C")]})
    assert seen == [] and subscribed == []
