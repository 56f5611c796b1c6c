"""Real Strands model classes over mock transports that capture every request body.

AnthropicModel and OpenAIModel build their SDK client from ``client_args``, so an
``http_client`` with an ``httpx.MockTransport`` is all it takes (strands caps anthropic
below 1.0, which is on httpx). BedrockModel's boto3 client gets a botocore
``before-send`` handler: it sees the fully serialised Converse request and answers it,
so nothing leaves the process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.capture import Capture
from tests.support.replies import anthropic_events, converse_response, sse

#: The ids each broken history of the wire tests leaves unpaired.
IDS = {"dangling": ("t1",), "orphan": ("t0",), "interrupted_loop": ("t2",)}


def _sse(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    return sse(events, done=done).encode()


def _anthropic_stream() -> bytes:
    return sse(anthropic_events("ok")).encode()


def _chat_stream() -> bytes:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    first = {"index": 0, "delta": {"role": "assistant", "content": "ok"}}
    last = {"index": 0, "delta": {}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return _sse(
        [
            (None, {**base, "choices": [first]}),
            (None, {**base, "choices": [last]}),
            (None, {**base, "choices": [], "usage": usage}),
        ],
        done=True,
    )


def _client(capture: Capture, answer: bytes) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        capture.bodies.append(json.loads(request.content))
        return httpx.Response(200, content=answer, headers={"content-type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def anthropic_model(capture: Capture) -> Any:
    from strands.models.anthropic import AnthropicModel

    client = _client(capture, _anthropic_stream())
    return AnthropicModel(
        client_args={"api_key": "k", "http_client": client},
        model_id="claude-sonnet-4-5",
        max_tokens=64,
    )


def openai_model(capture: Capture) -> Any:
    from strands.models.openai import OpenAIModel

    client = _client(capture, _chat_stream())
    return OpenAIModel(client_args={"api_key": "k", "http_client": client}, model_id="gpt-4o")


def bedrock_model(capture: Capture) -> Any:
    def before_send(request: Any, **_: Any) -> Any:
        capture.bodies.append(json.loads(request.body))
        return converse_response(request.url)

    return bedrock_answering(before_send)


def bedrock_answering(before_send: Callable[..., Any]) -> Any:
    """BedrockModel whose every request goes to ``before_send`` (botocore's before-send
    event: what it returns is the response)."""
    import boto3
    from strands.models.bedrock import BedrockModel

    session = boto3.Session(
        aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    model = BedrockModel(
        boto_session=session,
        model_id="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        streaming=False,
    )
    model.client.meta.events.register("before-send.bedrock-runtime.*", before_send)
    return model


MODELS = {"anthropic": anthropic_model, "openai": openai_model, "bedrock": bedrock_model}


# --- the newest release's other extras (gemini, mistral, litellm) --------------------


def _gemini_stream() -> bytes:
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "gemini-2.5-flash",
    }
    return _sse([(None, chunk)])


def gemini_model(capture: Capture) -> Any:
    """GeminiModel with a google-genai client whose httpx clients are mocked."""
    from google import genai
    from google.genai import types
    from strands.models.gemini import GeminiModel

    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(httpx_async_client=_client(capture, _gemini_stream())),
    )
    return GeminiModel(client=client, model_id="gemini-2.5-flash")


def _mistral_stream() -> bytes:
    """Mistral's stream: every choice carries ``finish_reason`` (null until the last),
    usage rides on the last chunk."""
    base = {"id": "m1", "object": "chat.completion.chunk", "created": 1, "model": "mistral"}
    first = {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
    last = {"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return _sse(
        [(None, {**base, "choices": [first]}), (None, {**base, "choices": [last], "usage": usage})],
        done=True,
    )


def mistral_model(capture: Capture) -> Any:
    """MistralModel: its SDK streams Chat-Completions-shaped chunks; a supplied
    ``async_client`` is used as is and not closed by ``async with Mistral(...)``."""
    from strands.models.mistral import MistralModel

    client = _client(capture, _mistral_stream())
    return MistralModel(
        model_id="mistral-large-latest", client_args={"api_key": "k", "async_client": client}
    )


def litellm_model(capture: Capture) -> Any:
    """LiteLLMModel on an ``openai/`` model: litellm takes the openai SDK client handed to
    it in ``client``, so the mocked httpx client sees the body litellm builds."""
    import openai
    from strands.models.litellm import LiteLLMModel

    client = openai.AsyncOpenAI(
        api_key="k", http_client=_client(capture, _chat_stream()), max_retries=0
    )
    return LiteLLMModel(client_args={"client": client}, model_id="openai/gpt-4o")


NEWEST_MODELS = {"gemini": gemini_model, "mistral": mistral_model, "litellm": litellm_model}


def wire_messages(body: dict[str, Any]) -> list[Any]:
    return list(body["messages"])


# --- histories, in Strands' own (Converse) shape -----------------------------------


def use(tid: str, city: str = "Paris") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tid, "name": "weather", "input": {"city": city}}}


def result(tid: str, text: str = "sunny") -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tid, "status": "success", "content": [{"text": text}]}}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"text": text}]}


def calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [use(i) for i in ids]}


def results(*ids: str) -> dict[str, Any]:
    return {"role": "user", "content": [result(i) for i in ids]}


def valid() -> list[dict[str, Any]]:
    return [user("weather?"), calls("t1"), results("t1"), said("sunny")]


def dangling() -> list[dict[str, Any]]:
    """A tool interrupted mid-run (#3651, #1435): its call stored without a result, and
    the conversation went on after it."""
    return [user("weather?"), calls("t1"), user("still there?"), said("yes")]


def orphan() -> list[dict[str, Any]]:
    """A result whose call was trimmed away or lost on restore (#1749, #2296)."""
    return [results("t0"), said("ok"), user("and now?"), said("fine")]


def interrupted_loop() -> list[dict[str, Any]]:
    """Two parallel calls, only one answered before the loop stopped (#1610)."""
    return [user("weather?"), calls("t1", "t2"), results("t1"), said("half")]


BROKEN = {"dangling": dangling, "orphan": orphan, "interrupted_loop": interrupted_loop}
