"""Real agno models over mock transports that capture every request body.

Each provider SDK keeps its own HTTP stack: openai and google-genai use httpx, recent
anthropic SDKs use httpx2 (older ones httpx), and boto3 uses botocore. The clients are
assigned to ``model.client``/``model.async_client`` directly because agno caches them
there, and because an ``http_client`` of the wrong flavour is silently replaced by a
real network client.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agno.utils.message as _agno_message_utils
import httpx
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.message import Message
from agno.run.agent import RunOutput
from agno.run.base import RunStatus
from agno.session.agent import AgentSession

from tests.support.replies import (
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    converse_response,
    response,
    sse,
)

#: Before agno learned to read one tool message per result for Gemini (the release that
#: added ``normalize_tool_messages``), its Gemini formatter sent such results as plain
#: text: agno's own history shape could not reach Gemini, so Gemini is not covered there.
GEMINI_SUPPORTED = hasattr(_agno_message_utils, "normalize_tool_messages")
PROVIDERS = ("anthropic", "openai", "openai-responses", "bedrock") + (
    ("gemini",) if GEMINI_SUPPORTED else ()
)


@dataclass
class Capture:
    bodies: list[dict[str, Any]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any]:
        return self.bodies[-1]


def _httpx_module_of_anthropic() -> Any:
    import anthropic

    for cls in type(anthropic.Anthropic(api_key="x")._client).__mro__:
        root = cls.__module__.split(".")[0]
        if root == "httpx2":
            import httpx2

            return httpx2
    return httpx


# --- canned answers ---------------------------------------------------------------

_GEMINI = {
    "candidates": [
        {
            "content": {"role": "model", "parts": [{"text": "ok"}]},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "gemini-2.5-flash",
}

# --- models -----------------------------------------------------------------------


def _transport(lib: Any, capture: Capture, answer: Callable[[str, dict[str, Any]], Any]) -> Any:
    def handler(request: Any) -> Any:
        body = json.loads(request.content) if request.content else {}
        capture.bodies.append(body)
        capture.urls.append(str(request.url))
        out = answer(str(request.url), body)
        if isinstance(out, str):
            return lib.Response(200, text=out, headers={"content-type": "text/event-stream"})
        return lib.Response(200, json=out)

    return lib.MockTransport(handler)


def claude(capture: Capture) -> Any:
    import anthropic
    from agno.models.anthropic import Claude

    lib = _httpx_module_of_anthropic()

    def answer(url: str, body: dict[str, Any]) -> Any:
        if url.endswith("/count_tokens"):
            return {"input_tokens": 7}
        return sse(anthropic_events("ok")) if body.get("stream") else anthropic_message()

    model = Claude(id="claude-sonnet-4-5", api_key="sk-test")
    t = _transport(lib, capture, answer)
    model.client = anthropic.Anthropic(api_key="sk-test", http_client=lib.Client(transport=t))
    model.async_client = anthropic.AsyncAnthropic(
        api_key="sk-test", http_client=lib.AsyncClient(transport=t)
    )
    return model


def _openai_clients(model: Any, capture: Capture, answer: Any) -> Any:
    import openai

    t = _transport(httpx, capture, answer)
    model.client = openai.OpenAI(api_key="sk-test", http_client=httpx.Client(transport=t))
    model.async_client = openai.AsyncOpenAI(
        api_key="sk-test", http_client=httpx.AsyncClient(transport=t)
    )
    return model


def openai_chat(capture: Capture) -> Any:
    from agno.models.openai import OpenAIChat

    def answer(url: str, body: dict[str, Any]) -> Any:
        if body.get("stream"):
            return sse([(None, c) for c in chat_chunks("ok", id="c1")], done=True)
        return chat_completion(id="c1")

    return _openai_clients(OpenAIChat(id="gpt-4o", api_key="sk-test"), capture, answer)


def openai_responses(capture: Capture) -> Any:
    from agno.models.openai import OpenAIResponses

    return _openai_clients(
        OpenAIResponses(id="gpt-4o", api_key="sk-test"), capture, lambda u, b: response()
    )


def gemini(capture: Capture) -> Any:
    from agno.models.google import Gemini
    from google import genai
    from google.genai import types

    t = _transport(httpx, capture, lambda u, b: _GEMINI)
    model = Gemini(id="gemini-2.5-flash", api_key="k")
    model.client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            httpx_client=httpx.Client(transport=t),
            httpx_async_client=httpx.AsyncClient(transport=t),
        ),
    )
    return model


def bedrock(capture: Capture) -> Any:
    import boto3
    from agno.models.aws import AwsBedrock

    # botocore's before-send hook sees the fully serialised HTTP request, so the body
    # captured is exactly what Converse would receive.
    def before_send(request: Any, **_: Any) -> Any:
        capture.bodies.append(json.loads(request.body))
        capture.urls.append(request.url)
        return converse_response(request.url)

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.meta.events.register("before-send.bedrock-runtime.*", before_send)
    model = AwsBedrock(id="anthropic.claude-3-5-sonnet-20240620-v1:0", aws_region="us-east-1")
    model.client = client
    return model


MODELS: dict[str, Callable[[Capture], Any]] = {
    "anthropic": claude,
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "bedrock": bedrock,
    "gemini": gemini,
}


def wire_messages(provider: str, body: dict[str, Any]) -> list[Any]:
    key = {"openai-responses": "input", "gemini": "contents"}.get(provider, "messages")
    return list(body[key])


# --- poisoned stored conversations ---------------------------------------------


def call(cid: str, city: str) -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
    }


def ask() -> Message:
    return Message(role="user", content="Weather in Paris and Rome?")


def calls_ab() -> Message:
    return Message(
        role="assistant",
        content="Checking.",
        tool_calls=[call("call_A", "Paris"), call("call_B", "Rome")],
    )


def result(cid: str, content: Any = "sunny", **kw: Any) -> Message:
    return Message(role="tool", tool_call_id=cid, tool_name="get_weather", content=content, **kw)


def answer() -> Message:
    return Message(role="assistant", content="Paris is sunny, Rome is rainy.")


#: name -> stored run messages. Each is a history agno produces or replays in practice,
#: and each formatter sends invalid as it stands.
POISONED: dict[str, Callable[[], list[Message]]] = {
    # an interrupted run: one result of a parallel batch was never written
    "orphan_call": lambda: [ask(), calls_ab(), result("call_A"), answer()],
    # a user message written between two results of one batch
    "split_batch": lambda: [
        ask(),
        calls_ab(),
        result("call_A"),
        Message(role="user", content="Hurry up."),
        result("call_B", "rainy"),
        answer(),
    ],
    # a result whose call was trimmed away
    "orphan_result": lambda: [
        ask(),
        Message(role="assistant", content="Let me see."),
        result("call_Z", "stale"),
        answer(),
    ],
    # both calls dangling, the run ended right after the assistant turn
    "all_dangling": lambda: [ask(), calls_ab(), answer()],
}


def tools() -> list[Any]:
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return {"Paris": "sunny", "Rome": "rainy"}.get(city, "unknown")

    return [get_weather]


def seeded_agent(model: Any, stored: list[Message], session_id: str = "s1") -> Agent:
    agent = Agent(
        id="agent-1",
        model=model,
        db=InMemoryDb(),
        tools=tools(),
        add_history_to_context=True,
        telemetry=False,
    )
    run = RunOutput(
        run_id="run-1",
        agent_id="agent-1",
        session_id=session_id,
        status=RunStatus.completed,
        messages=stored,
    )
    agent.db.upsert_session(AgentSession(session_id=session_id, agent_id="agent-1", runs=[run]))
    return agent
