"""Gemini G8 through LangChain: each ``AIMessage`` keeps its thought signatures by call id
and names the model that answered (``response_metadata["model_name"]``), so a signature
another model produced is put aside without the user naming the models. The real
ChatGoogleGenerativeAI sends through a mock transport; the body is what google-genai
puts on the wire."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage

import toolpair
from tests.support.replies import gemini_response
from toolpair.integrations.langchain import repair_messages
from toolpair.integrations.langchain._repair import INTEGRATION, codec_for

from .wire import human, tool

genai = pytest.importorskip("langchain_google_genai")

KEY = "__gemini_function_call_thought_signatures__"
THEIRS = b"signed-by-gemini-3.6-flash"
SKIP = b"skip_thought_signature_validator"


def chat(model: str, bodies: list[dict[str, Any]]) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=gemini_response())

    return genai.ChatGoogleGenerativeAI(
        model=model, api_key="x", client_args={"transport": httpx.MockTransport(handler)}
    )


def history(made_by: str) -> list[BaseMessage]:
    """A tool loop still open (the current turn), its call signed by ``made_by``."""
    answer = AIMessage(
        "",
        tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}],
        additional_kwargs={KEY: {"c1": base64.b64encode(THEIRS).decode()}},
        response_metadata={"model_name": made_by},
    )
    return [human("weather in Paris?"), answer, tool("c1")]


def signature_sent(body: dict[str, Any]) -> bytes:
    parts = body["contents"][1]["parts"]
    call = next(p for p in parts if "functionCall" in p)
    return base64.urlsafe_b64decode(call["thoughtSignature"] + "==")


def test_a_signature_of_another_model_goes_out_as_the_bypass() -> None:
    bodies: list[dict[str, Any]] = []
    model = chat("gemini-3.5-flash", bodies)
    h = history("gemini-3.6-flash")
    # Without toolpair the other model's signature goes out: refused (G8).
    model.invoke(h)
    assert signature_sent(bodies[-1]) == THEIRS
    made_by = INTEGRATION.signature_models(h)
    assert made_by == {base64.b64encode(THEIRS).decode(): "gemini-3.6-flash"}
    g8 = ["gemini.foreign_thought_signature"]
    on_wire = toolpair.validate(
        bodies[-1], "gemini", model="gemini-3.5-flash", signature_models=made_by
    )
    assert [v.code for v in on_wire] == g8
    framework = toolpair.validate(
        h, "gemini", model="gemini-3.5-flash", format=codec_for(model), signature_models=made_by
    )
    assert [v.code for v in framework] == g8
    # Through the guarded LCEL step the models are read off the history.
    seen: list[toolpair.RepairEvent] = []
    step = repair_messages(provider=model, on_repair=seen.append)
    (step | model).invoke(h)
    assert signature_sent(bodies[-1]) == SKIP
    assert len(seen) == 1 and dict(seen[0].fixes) == {"signature_bypassed": 1}
    # The history itself is untouched.
    assert h[1].additional_kwargs[KEY] == {"c1": base64.b64encode(THEIRS).decode()}


def test_the_same_model_s_signature_is_sent_as_it_is() -> None:
    bodies: list[dict[str, Any]] = []
    model = chat("gemini-3.5-flash", bodies)
    h = history("gemini-3.5-flash")
    seen: list[toolpair.RepairEvent] = []
    (repair_messages(provider=model, on_repair=seen.append) | model).invoke(h)
    assert signature_sent(bodies[-1]) == THEIRS and seen == []
