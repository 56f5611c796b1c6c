"""Real pydantic-ai model classes on a mock transport that records each request body.

The SDKs are built on httpx (anthropic < 1) or httpx2 (anthropic 2.x, openai 3.x); each
transport is taken from the module the SDK itself imports, so the client type checks
pass on every pinned version.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.bedrock import BedrockConverseModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.bedrock import BedrockProvider
from pydantic_ai.providers.openai import OpenAIProvider

from tests.support.capture import Capture
from tests.support.replies import RawBody, gemini_response
from toolpair.conformance import anthropic_reply, chat_reply, responses_reply, sdk_http


def _client(sdk: str, capture: Capture, reply: Any) -> Any:
    lib = sdk_http(sdk)

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        capture.bodies.append(body)
        return lib.Response(200, json=reply(body))

    return lib.AsyncClient(transport=lib.MockTransport(handler))


def anthropic_model(capture: Capture) -> AnthropicModel:
    from anthropic import AsyncAnthropic

    http_client = _client("anthropic", capture, anthropic_reply)
    client = AsyncAnthropic(api_key="test", http_client=http_client)
    # A small max_tokens keeps the SDK from insisting on streaming.
    return AnthropicModel(
        "claude-sonnet-4-5",
        provider=AnthropicProvider(anthropic_client=client),
        settings={"max_tokens": 1024},
    )


def openai_chat_model(capture: Capture) -> OpenAIChatModel:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="test", http_client=_client("openai", capture, chat_reply))
    return OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))


def openai_responses_model(capture: Capture) -> OpenAIResponsesModel:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="test", http_client=_client("openai", capture, responses_reply))
    return OpenAIResponsesModel("gpt-4o", provider=OpenAIProvider(openai_client=client))


#: The model the Converse requests name: in the URL, not the body, so a check of the
#: captured body is told it (a named model is judged exactly: Claude 3.x through Converse
#: takes two user turns in a row, bedrock B4).
BEDROCK_MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def bedrock_model(capture: Capture) -> BedrockConverseModel:
    import boto3
    from botocore.awsrequest import AWSResponse

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )

    def before_send(request: Any, **_: Any) -> Any:
        capture.bodies.append(json.loads(request.body))
        reply = {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        }
        raw = RawBody(json.dumps(reply).encode())
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, raw)

    client.meta.events.register("before-send.bedrock-runtime.Converse", before_send)
    return BedrockConverseModel(
        BEDROCK_MODEL_ID,
        provider=BedrockProvider(bedrock_client=client),
    )


#: provider name -> factory, for the providers whose wire this suite captures.
WIRE_MODELS = {
    "anthropic": anthropic_model,
    "openai": openai_chat_model,
    "openai-responses": openai_responses_model,
    "bedrock": bedrock_model,
}


def google_model(name: str, bodies: list[dict[str, Any]]) -> Any:
    """The real GoogleModel whose google-genai client sends through a mock transport,
    each request body appended to ``bodies``."""
    import httpx
    from google import genai
    from google.genai import types
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=gemini_response())

    transport = httpx.MockTransport(handler)
    options = types.HttpOptions(
        httpx_client=httpx.Client(transport=transport),
        httpx_async_client=httpx.AsyncClient(transport=transport),
    )
    client = genai.Client(api_key="x", http_options=options)
    return GoogleModel(name, provider=GoogleProvider(client=client))
