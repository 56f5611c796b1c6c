"""Provider fidelity for pydantic-ai: the model id and host read off the real model
classes, and the model reaching the core, judged on the bodies the real model classes
send. (Do no harm is the conformance suite's, through `adapter.PydanticAIAdapter`.)

pydantic-ai has no way to carry an Anthropic-native ``tool_result`` block in a user
prompt (its parts are typed, and its Anthropic mapper builds results from
``ToolReturnPart`` only), so the native-result case has no equivalent here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import direct
from pydantic_ai.messages import ModelMessage, TextPart
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.bedrock import BedrockConverseModel
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers.bedrock import BedrockProvider
from pydantic_ai.providers.deepseek import DeepSeekProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider

import toolpair
from toolpair.integrations.pydantic_ai import model_for, provider_for, repair, validate

from .history import PAI_MAJOR, call, req, res, ret, user
from .wire import WIRE_MODELS, Capture, google_model

# --- the model id and the host ------------------------------------------------------


def test_model_id_is_the_model_name_as_written() -> None:
    """``Agent("anthropic:claude-sonnet-4-5")`` resolves to a model whose ``model_name``
    is the id the request names; a Bedrock id keeps its geo prefix (the core parses
    it); a wrapper answers for what it wraps; a FallbackModel names no one model."""
    capture = Capture()
    claude = WIRE_MODELS["anthropic"](capture)
    assert model_for(claude) == "claude-sonnet-4-5"
    assert model_for(WrapperModel(claude)) == "claude-sonnet-4-5"
    bedrock = BedrockConverseModel(
        "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        provider=BedrockProvider(
            region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
        ),
    )
    assert provider_for(bedrock) == "bedrock"
    assert model_for(bedrock) == "us.anthropic.claude-3-5-haiku-20241022-v1:0"
    fallback = FallbackModel(claude, WIRE_MODELS["openai"](capture))
    assert provider_for(fallback) == "portable"
    assert model_for(fallback) is None


def test_agent_string_model_is_read_in_the_run() -> None:
    """The model a run resolves from ``"anthropic:..."`` reaches the processor as
    ``ctx.model``: its name is what the processor passes on."""
    from pydantic_ai.models import infer_model

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_API_KEY", "x")
        model = infer_model("anthropic:claude-sonnet-4-5")
    assert isinstance(model, AnthropicModel)
    assert (provider_for(model), model_for(model)) == ("anthropic", "claude-sonnet-4-5")


def _google_cloud(model: str) -> GoogleModel:
    if PAI_MAJOR >= 2:
        from pydantic_ai.providers.google_cloud import GoogleCloudProvider

        return GoogleModel(model, provider=GoogleCloudProvider(api_key="x"))
    with pytest.warns(Warning):
        # 1.x: GoogleProvider(vertexai=True), deprecated late in the line.
        return GoogleModel(model, provider=GoogleProvider(api_key="x", vertexai=True))


def test_google_model_on_google_cloud_is_vertex() -> None:
    api = GoogleModel("gemini-2.5-pro", provider=GoogleProvider(api_key="x"))
    assert provider_for(api) == "gemini"
    assert model_for(api) == "gemini-2.5-pro"
    vertex = _google_cloud("gemini-3-pro-preview")
    assert provider_for(vertex) == "vertex"
    assert model_for(vertex) == "gemini-3-pro-preview"


def test_anthropic_on_vertex_stays_anthropic() -> None:
    """Claude on Vertex AI passes Anthropic's own errors through: Anthropic's rules."""
    from anthropic import AsyncAnthropicVertex
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropicVertex(project_id="p", region="us-east5", access_token="t")
    model = AnthropicModel(
        "claude-sonnet-4-5@20250929", provider=AnthropicProvider(anthropic_client=client)
    )
    assert provider_for(model) == "anthropic"
    assert model_for(model) == "claude-sonnet-4-5@20250929"


def test_deepseek_provider_is_deepseek() -> None:
    chat = OpenAIChatModel("deepseek-chat", provider=DeepSeekProvider(api_key="x"))
    assert provider_for(chat) == "deepseek"
    assert model_for(chat) == "deepseek-chat"
    responses = OpenAIResponsesModel("deepseek-chat", provider=DeepSeekProvider(api_key="x"))
    assert provider_for(responses) == "deepseek-responses"
    by_url = OpenAIChatModel(
        "deepseek-reasoner",
        provider=OpenAIProvider(base_url="https://api.deepseek.com/v1", api_key="x"),
    )
    assert provider_for(by_url) == "deepseek"


def test_openai_elsewhere_keeps_openai() -> None:
    other = OpenAIChatModel(
        "gpt-4o", provider=OpenAIProvider(base_url="https://api.deepseek.com.example", api_key="x")
    )
    assert provider_for(other) == "openai"
    assert provider_for(WIRE_MODELS["openai-responses"](Capture())) == "openai-responses"


def _send(model: Any, history: list[ModelMessage]) -> None:
    asyncio.run(direct.model_request(model, history))


def _verdict(provider: str, body: dict[str, Any], model: str | None) -> list[toolpair.Violation]:
    # The requests carry no tools, so Bedrock's toolConfig rule (about the request, not
    # the history) is left out, as in the conformance suite's wire properties.
    return [
        v
        for v in toolpair.validate(body, provider, model=model)
        if v.code != "bedrock.missing_tool_config"
    ]


# --- the model reaches the core ------------------------------------------------------


def _text_beside_call() -> list[ModelMessage]:
    """Text beside a tool call in one response: Claude on Bedrock takes it, Llama and
    Mistral there refuse it (and so does the strict profile of an unknown model)."""
    return [
        req(user("weather?")),
        res(TextPart("let me check"), call("t1")),
        req(ret("t1")),
        res(TextPart("sunny")),
        req(user("thanks")),
    ]


def _converse_turn(body: dict[str, Any]) -> list[str]:
    return [next(iter(block)) for block in body["messages"][1]["content"]]


def test_bedrock_claude_id_keeps_text_beside_its_tool_use() -> None:
    """The guard reads the Bedrock id off the model: Claude's own rules leave the turn
    as it is, and its body passes for that model; an explicit Llama id splits it."""
    from pydantic_ai import Agent

    from toolpair.integrations.pydantic_ai import RepairGuard, model_request_sync

    capture = Capture()
    bedrock = WIRE_MODELS["bedrock"](capture)
    history = _text_beside_call()
    Agent(bedrock, capabilities=[RepairGuard()]).run_sync(
        "and tomorrow?", message_history=history[:-1]
    )
    assert _converse_turn(capture.last) == ["text", "toolUse"]
    assert _verdict("bedrock", capture.last, model_for(bedrock)) == []
    model_request_sync(bedrock, history, model_id="us.meta.llama3-3-70b-instruct-v1:0")
    assert _converse_turn(capture.last) == ["text"]
    llama = "us.meta.llama3-3-70b-instruct-v1:0"
    assert _verdict("bedrock", capture.last, llama) == []


def test_gemini3_calls_are_signed_as_google_model_sends_them() -> None:
    """Gemini 3 refuses a current-turn call without a thought signature, and GoogleModel
    sends the first call of every response with one (its own or Google's bypass value):
    read for that model, this history is accepted and left alone, as its body is."""
    from pydantic_ai.messages import TextPart

    bodies: list[dict[str, Any]] = []
    gemini = google_model("gemini-3-pro-preview", bodies)
    history = [
        req(user("weather?")),
        res(TextPart("checking"), call("t1"), call("t2")),
        req(ret("t1"), ret("t2")),
    ]
    provider, name = provider_for(gemini), model_for(gemini)
    assert (provider, name) == ("gemini", "gemini-3-pro-preview")
    assert validate(history, provider, model=name) == []
    result = repair(history, provider, model=name)
    assert result.fixes == [] and all(a is b for a, b in zip(result.messages, history, strict=True))
    _send(gemini, history)
    assert toolpair.validate(bodies[-1], provider, model=name) == []
