"""Gemini G8 through LangGraph's ``pre_model_hook``: each ``AIMessage`` in the thread keeps
its thought signatures by call id and names the model that answered, so a signature of
another model is sent as Google's bypass value, and the thread itself is never written.
(This env has no Google chat package: the hook is given the provider and model by name,
and what it hands the model is checked; the LangChain env drives ChatGoogleGenerativeAI.)"""

from __future__ import annotations

import base64
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import toolpair
from toolpair.integrations.langgraph import repair_hook

KEY = "__gemini_function_call_thought_signatures__"
THEIRS = base64.b64encode(b"signed-by-gemini-3.6-flash").decode()
SKIP = base64.b64encode(b"skip_thought_signature_validator").decode()


def thread(made_by: str) -> list[Any]:
    answer = AIMessage(
        "",
        tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}],
        additional_kwargs={KEY: {"c1": THEIRS}},
        response_metadata={"model_name": made_by},
    )
    return [HumanMessage("weather in Paris?"), answer, ToolMessage("sunny", tool_call_id="c1")]


def test_the_hook_sends_the_bypass_for_another_model_s_signature() -> None:
    seen: list[toolpair.RepairEvent] = []
    hook = repair_hook("gemini", model="gemini-3.5-flash", on_repair=seen.append)
    messages = thread("gemini-3.6-flash")
    sent = hook({"messages": messages})["llm_input_messages"]
    assert sent[1].additional_kwargs[KEY] == {"c1": SKIP}
    assert sent[1].tool_calls == messages[1].tool_calls
    assert sent[0] is messages[0] and sent[2] is messages[2]
    assert messages[1].additional_kwargs[KEY] == {"c1": THEIRS}  # the thread is untouched
    assert [dict(e.fixes) for e in seen] == [{"signature_bypassed": 1}]


def test_the_same_model_s_signature_goes_as_it_is() -> None:
    seen: list[toolpair.RepairEvent] = []
    hook = repair_hook("gemini", model="gemini-3.5-flash", on_repair=seen.append)
    messages = thread("gemini-3.5-flash")
    sent = hook({"messages": messages})["llm_input_messages"]
    assert all(a is b for a, b in zip(sent, messages, strict=True)) and seen == []
