"""Provider fidelity for LlamaIndex: the model id and host read off the real LLM
classes, and Gemini 3's signatures as GoogleGenAI sends them. (Do no harm is the
conformance suite's, through `adapter.LlamaIndexAdapter`: its ``changes`` and the
`GuardedLLM` of its ``send_repaired``.)

A LlamaIndex ChatMessage holds typed blocks only, and the Anthropic LLM builds
``tool_result`` blocks from ``tool`` messages alone, so no Anthropic-native result can
ride in a user message here: that case has no equivalent.
"""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage

import toolpair
from toolpair.integrations.llamaindex import (
    GuardedLLM,
    guard,
    model_for,
    provider_for,
    repair_messages,
    validate_messages,
)

from .history import user
from .wire import FakeAnthropic, FakeOpenAI, accept_all, anthropic_llm, openai_llm

# --- the model id and the host ------------------------------------------------------


def read_as(model: Any) -> tuple[str, str | None]:
    """The rules and the model id toolpair reads off a framework's model object."""
    return provider_for(model), model_for(model)


def test_model_id_is_the_llm_model_field() -> None:
    llm = anthropic_llm(FakeAnthropic([], check=accept_all))
    assert read_as(llm) == ("anthropic", "claude-sonnet-4-5")
    guarded = GuardedLLM(llm=llm)
    assert (guarded.provider, guarded.model) == ("anthropic", "claude-sonnet-4-5")
    # A GuardedLLM answers for what it wraps, and an explicit model wins.
    assert (provider_for(guarded), model_for(guarded)) == ("anthropic", "claude-sonnet-4-5")
    assert guard(llm, model="claude-opus-4-1").model == "claude-opus-4-1"
    assert model_for(openai_llm(FakeOpenAI([], check=accept_all))) == "gpt-4o"


def test_openai_at_deepseek_api_base_is_deepseek() -> None:
    from llama_index.llms.openai import OpenAI, OpenAIResponses

    base = "https://api.deepseek.com/v1"
    assert provider_for(OpenAI(model="deepseek-chat", api_key="k", api_base=base)) == "deepseek"
    responses = OpenAIResponses(model="deepseek-chat", api_key="k", api_base=base)
    assert provider_for(responses) == "deepseek-responses"
    assert provider_for(OpenAI(model="gpt-4o", api_key="k")) == "openai"


def test_deepseek_llm_is_deepseek() -> None:
    deepseek = pytest.importorskip("llama_index.llms.deepseek")
    llm = deepseek.DeepSeek(model="deepseek-reasoner", api_key="k")
    assert read_as(llm) == ("deepseek", "deepseek-reasoner")


def _credentials() -> Any:
    oauth = pytest.importorskip("google.oauth2.credentials")
    return oauth.Credentials(token="test")


def test_google_genai_is_vertex_only_with_a_vertex_client(monkeypatch: Any) -> None:
    genai = pytest.importorskip("llama_index.llms.google_genai")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    # max_tokens and context_window given: the LLM asks no server for model metadata.
    sizes = {"max_tokens": 100, "context_window": 1000}
    api = genai.GoogleGenAI(model="gemini-2.5-pro", api_key="k", **sizes)
    assert read_as(api) == ("gemini", "gemini-2.5-pro")
    config = {"project": "p", "location": "us-central1", "credentials": _credentials()}
    vertex = genai.GoogleGenAI(model="gemini-3-pro-preview", vertexai_config=config, **sizes)
    assert read_as(vertex) == ("vertex", "gemini-3-pro-preview")


def test_vertex_llm_is_vertex() -> None:
    vertex = pytest.importorskip("llama_index.llms.vertex")
    with pytest.warns(Warning):  # the class is deprecated in favour of GoogleGenAI
        llm = vertex.Vertex(
            model="gemini-2.5-pro", project="p", location="us-central1", credentials=_credentials()
        )
    assert read_as(llm) == ("vertex", "gemini-2.5-pro")


_GEMINI_REPLY = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
}


def _gemini_history(signature: bytes | None) -> list[ChatMessage]:
    from llama_index.core.base.llms.types import MessageRole, TextBlock, ToolCallBlock

    call = ToolCallBlock(tool_call_id="c1", tool_name="get_weather", tool_kwargs={"city": "P"})
    kwargs = {"thought_signatures": [None, signature]} if signature else {}
    return [
        user("weather?"),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[TextBlock(text="checking"), call],
            additional_kwargs=kwargs,
        ),
        ChatMessage(
            role=MessageRole.TOOL,
            content="sunny",
            additional_kwargs={"tool_call_id": "c1", "name": "get_weather"},
        ),
    ]


def test_gemini3_signatures_read_as_google_genai_sends_them() -> None:
    """Gemini 3 refuses a current-turn call without a thought signature. GoogleGenAI
    sends the one a message keeps for that block; the GuardedLLM reads the model off
    the LLM and agrees with the verdict on the body it sends, both ways."""
    import json

    import httpx

    genai_llm = pytest.importorskip("llama_index.llms.google_genai")
    from google import genai
    from google.genai import types

    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=_GEMINI_REPLY)

    transport = httpx.MockTransport(handler)
    llm = genai_llm.GoogleGenAI(
        model="gemini-3-pro-preview", api_key="x", max_tokens=100, context_window=1000
    )
    options = types.HttpOptions(
        httpx_client=httpx.Client(transport=transport),
        httpx_async_client=httpx.AsyncClient(transport=transport),
    )
    llm._client = genai.Client(api_key="x", http_options=options)
    guarded = GuardedLLM(llm=llm)
    assert (guarded.provider, guarded.model) == ("gemini", "gemini-3-pro-preview")
    for signature in (b"sig", None):
        history = _gemini_history(signature)
        framework = validate_messages(history, "gemini", model=guarded.model)
        guarded.chat(history)
        wire = toolpair.validate(bodies[-1], "gemini", model=guarded.model)
        assert bool(framework) == bool(wire) == (signature is None)
    signed = _gemini_history(b"sig")
    repaired = repair_messages(signed, "gemini", model=guarded.model)
    assert repaired.fixes == [] and all(
        a is b for a, b in zip(repaired.messages, signed, strict=True)
    )
