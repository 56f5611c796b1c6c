"""A real ADK Runner, LlmAgent and Gemini model whose google-genai client sends through
an httpx MockTransport, so each generateContent request body is captured as sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import httpx
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models.google_llm import Gemini
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import Client, types

import toolpair

ADK = tuple(int(x) for x in version("google-adk").split(".")[:2])
APP, USER = "app", "u1"
#: What repair puts in place of a result that never came.
PLACEHOLDER = toolpair.Policy().placeholder


@dataclass
class Capture:
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: Model answers, in order; the last one repeats.
    answers: list[list[dict[str, Any]]] = field(default_factory=lambda: [[{"text": "ok"}]])


def _reply(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }


def gemini(capture: Capture, model: str = "gemini-2.0-flash") -> Gemini:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        n = len(capture.bodies)
        capture.bodies.append(body)
        parts = capture.answers[min(n, len(capture.answers) - 1)]
        if request.url.path.endswith(":streamGenerateContent"):
            text = "data: " + json.dumps(_reply(parts)) + "\r\n\r\n"
            return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=_reply(parts))

    t = httpx.MockTransport(handler)
    client = Client(
        api_key="k",
        http_options=types.HttpOptions(
            httpx_client=httpx.Client(transport=t),
            httpx_async_client=httpx.AsyncClient(transport=t),
        ),
    )
    if "client" in Gemini.model_fields:
        return Gemini(model=model, client=client)
    m = Gemini(model=model)
    m.__dict__["api_client"] = client  # 1.x: a cached_property, no client field
    return m


def get_weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    return {"city": city, "weather": "sunny"}


def get_time(city: str) -> dict[str, str]:
    """The time in a city."""
    return {"city": city, "time": "noon"}


def agent(model: Gemini, **kw: Any) -> LlmAgent:
    return LlmAgent(name="helper", model=model, tools=[get_weather, get_time], **kw)


def runner(a: LlmAgent, service: Any = None, plugins: list[Any] | None = None) -> Runner:
    return Runner(
        app_name=APP,
        agent=a,
        session_service=service or InMemorySessionService(),
        plugins=plugins or [],
    )


def call(name: str, cid: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=cid, name=name, args=args))


def response(name: str, cid: str, **out: Any) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(id=cid, name=name, response=out))


def text(s: str) -> types.Part:
    return types.Part(text=s)


def event(author: str, *parts: types.Part, inv: str = "i0", **kw: Any) -> Event:
    role = "user" if author == "user" or parts[0].function_response else "model"
    return Event(
        invocation_id=inv, author=author, content=types.Content(role=role, parts=list(parts)), **kw
    )


async def seed(service: Any, events: list[Event], session_id: str = "s1") -> Any:
    session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for e in events:
        await service.append_event(session, e)
    return session


async def stored_events(service: Any, session_id: str = "s1") -> list[Event]:
    """The session's events as the service has them stored."""
    s = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return list(s.events)


async def run(r: Runner, message: str = "and now?", session_id: str = "s1") -> list[Event]:
    out = []
    async for e in r.run_async(
        user_id=USER,
        session_id=session_id,
        new_message=types.Content(role="user", parts=[types.Part(text=message)]),
    ):
        out.append(e)
    return out


def interrupted() -> list[Event]:
    """A turn whose tool call never got its response (a crash or a user abort)."""
    return [
        event("user", text("weather in Paris?")),
        event("helper", call("get_weather", "c1", city="Paris")),
    ]


def half_answered() -> list[Event]:
    """Two parallel calls, only one answered before the loop was interrupted."""
    return [
        event("user", text("weather and time in Paris?")),
        event(
            "helper", call("get_weather", "c1", city="Paris"), call("get_time", "c2", city="Paris")
        ),
        event("helper", response("get_weather", "c1", weather="sunny")),
    ]


def valid() -> list[Event]:
    return [
        event("user", text("weather in Paris?")),
        event("helper", call("get_weather", "c1", city="Paris")),
        event("helper", response("get_weather", "c1", weather="sunny")),
        event("helper", text("It is sunny.")),
    ]


def orphan_response() -> list[Event]:
    """A response whose call is in no event (compacted away, or on another branch)."""
    return [
        event("user", text("hi")),
        event("helper", text("hello")),
        event("helper", response("get_weather", "gone", weather="sunny")),
        event("helper", text("done")),
    ]


def wire_calls(body: dict[str, Any]) -> list[str]:
    return [
        p["functionCall"]["name"]
        for c in body["contents"]
        for p in c["parts"]
        if "functionCall" in p
    ]


def wire_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function responses sent, without their ids (ADK strips only its own ``adk-``
    client ids before a Gemini request, and 1.x strips every id)."""
    return [
        {k: v for k, v in p["functionResponse"].items() if k != "id"}
        for c in body["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]
