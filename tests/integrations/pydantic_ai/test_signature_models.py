"""Gemini G8 through pydantic-ai: each ``ModelResponse`` names the model that produced it,
so a thought signature another model produced is put aside without the user naming
the models. The real GoogleModel sends through a mock transport; the body is what
google-genai puts on the wire."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import toolpair
from toolpair.integrations.pydantic_ai import RepairGuard, repair_history
from toolpair.integrations.pydantic_ai._processors import INTEGRATION, codec_for

from .history import T0, agent_with_processor
from .wire import google_model

pytestmark = pytest.mark.anyio

SKIP = b"skip_thought_signature_validator"
THEIRS = b"signed-by-gemini-3.6-flash"


def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def history(made_by: str, system: str, *, on_thinking: bool = False) -> list[ModelMessage]:
    """A tool loop still open (the current turn), its call made by ``made_by`` with its
    thought signature on the call or, as Gemini streams it, on the thinking before it."""
    sig = base64.b64encode(THEIRS).decode()
    if on_thinking:
        parts: list[Any] = [
            ThinkingPart("hm", signature=sig, provider_name=system),
            ToolCallPart("weather", {"city": "Paris"}, tool_call_id="c1"),
        ]
    else:
        details = {"thought_signature": sig}
        parts = [
            ToolCallPart("weather", {"city": "Paris"}, tool_call_id="c1", provider_details=details)
        ]
    return [
        ModelRequest(parts=[UserPromptPart("weather in Paris?", timestamp=T0)]),
        ModelResponse(parts=parts, model_name=made_by, timestamp=T0, provider_name=system),
        ModelRequest(parts=[ToolReturnPart("weather", "sunny", tool_call_id="c1", timestamp=T0)]),
    ]


def signature_sent(body: dict[str, Any]) -> bytes:
    parts = body["contents"][1]["parts"]
    call = next(p for p in parts if "functionCall" in p)
    return base64.urlsafe_b64decode(call["thoughtSignature"] + "==")


@pytest.mark.parametrize("on_thinking", [False, True])
async def test_a_signature_of_another_model_goes_out_as_the_bypass(on_thinking: bool) -> None:
    bodies: list[dict[str, Any]] = []
    model = google_model("gemini-3.5-flash", bodies)
    h = history("gemini-3.6-flash", model.system, on_thinking=on_thinking)
    # Without toolpair, GoogleModel sends the other model's signature: refused (G8).
    await Agent(model, tools=[weather]).run(message_history=h)
    assert signature_sent(bodies[-1]) == THEIRS
    # The spec's reading names the signature as the wire body carries it and as the
    # framework's codec reads it: the same map judges both.
    made_by = INTEGRATION.signature_models(h)
    g8 = ["gemini.foreign_thought_signature"]
    on_wire = toolpair.validate(
        bodies[-1], "gemini", model="gemini-3.5-flash", signature_models=made_by
    )
    assert [v.code for v in on_wire] == g8
    framework = toolpair.validate(
        h, "gemini", model="gemini-3.5-flash", format=codec_for("gemini"), signature_models=made_by
    )
    assert [v.code for v in framework] == g8
    seen: list[toolpair.RepairEvent] = []
    guarded = Agent(model, tools=[weather], capabilities=[RepairGuard(on_repair=seen.append)])
    await guarded.run(message_history=h)
    assert signature_sent(bodies[-1]) == SKIP
    assert len(seen) == 1 and seen[0].fixes["signature_bypassed"] == 1
    assert seen[0].rules == ("gemini.foreign_thought_signature",)
    # The stored history is untouched: the guard repairs what is sent.
    assert h[1].parts[-1].tool_call_id == "c1"


async def test_the_same_model_s_signature_is_sent_as_it_is() -> None:
    bodies: list[dict[str, Any]] = []
    model = google_model("gemini-3.5-flash", bodies)
    h = history("gemini-3.5-flash", model.system)
    seen: list[toolpair.RepairEvent] = []
    await Agent(model, tools=[weather], capabilities=[RepairGuard(on_repair=seen.append)]).run(
        message_history=h
    )
    assert signature_sent(bodies[-1]) == THEIRS and seen == []


async def test_the_ready_made_processor_reads_the_models_too() -> None:
    bodies: list[dict[str, Any]] = []
    model = google_model("gemini-3.5-flash", bodies)
    h = history("gemini-3.6-flash", model.system)
    await agent_with_processor(model, repair_history, tools=[weather]).run(message_history=h)
    assert signature_sent(bodies[-1]) == SKIP


def test_the_spec_reads_the_producing_model_of_signed_calls_only() -> None:
    h = history("gemini-3.6-flash", "google-gla")
    theirs = base64.b64encode(THEIRS).decode()
    assert INTEGRATION.signature_models(h) == {theirs: "gemini-3.6-flash"}
    on_thinking = history("gemini-3.6-flash", "google-gla", on_thinking=True)
    assert INTEGRATION.signature_models(on_thinking) == {theirs: "gemini-3.6-flash"}
    unsigned = [
        h[0],
        ModelResponse(
            parts=[ToolCallPart("weather", {"city": "Paris"}, tool_call_id="c1")],
            model_name="gemini-3.6-flash",
            timestamp=T0,
        ),
        h[2],
    ]
    assert INTEGRATION.signature_models(unsigned) == {}
