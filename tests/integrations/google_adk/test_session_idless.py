"""An interrupted call that has no id (#2621: a model reached through LiteLLM gave none):
check_session and repair_session see it, pair id-less calls and responses by function
name and place as Gemini does, and the stored session runs again without the plugin.
Through the in-memory and the SQLite-backed session services."""

from __future__ import annotations

import pytest
from google.genai import types

import toolpair
from toolpair.integrations.google_adk import ToolpairPlugin, check_session, repair_session

from . import harness as h

pytestmark = pytest.mark.anyio


def idless(name: str, **args: object) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def idless_response(name: str, **out: object) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(name=name, response=out))


async def test_an_interrupted_idless_call_is_seen_and_answered(service):
    await h.seed(
        service,
        [
            h.event("user", h.text("weather and time in Paris?")),
            # One id-less call answered (by name), one id-less call interrupted.
            h.event("helper", idless("get_weather", city="Paris")),
            h.event("helper", idless_response("get_weather", weather="sunny")),
            h.event("helper", idless("get_time", city="Paris")),
        ],
    )
    found = await check_session(service, h.APP, h.USER, "s1")
    assert [(v.code, v.index, v.ids) for v in found] == [
        ("google_adk.unanswered_call", 3, ("get_time",))
    ]
    before = [e.id for e in await h.stored_events(service)]

    dry = await repair_session(service, h.APP, h.USER, "s1", dry_run=True)
    assert [(f.kind, f.index, f.ids) for f in dry.fixes] == [("synthetic_result", 3, ("get_time",))]
    assert [e.id for e in await h.stored_events(service)] == before

    report = await repair_session(service, h.APP, h.USER, "s1")
    assert [(f.kind, f.index, f.ids) for f in report.fixes] == [
        ("synthetic_result", 3, ("get_time",))
    ]
    events = await h.stored_events(service)
    assert [e.id for e in events[: len(before)]] == before  # appended, nothing rewritten
    fr = events[-1].content.parts[0].function_response
    assert (fr.id, fr.name, fr.response) == (None, "get_time", {"error": h.PLACEHOLDER})
    assert await check_session(service, h.APP, h.USER, "s1") == []
    again = await repair_session(service, h.APP, h.USER, "s1")
    assert again.fixes == [] and len(await h.stored_events(service)) == len(events)

    # The stored session now runs without the plugin on ADK 2.x: the request answers
    # both calls. ADK 1.x keys the responses it moves next to their calls by id while
    # it builds the request, so id-less ones collide there (the get_weather response is
    # replaced by the newest one, before any callback); the plugin then answers what
    # ADK lost, and the request is valid either way.
    cap = h.Capture()
    await h.run(h.runner(h.agent(h.gemini(cap)), service))
    body = cap.bodies[0]
    if h.ADK >= (2, 0):
        assert h.wire_calls(body) == ["get_weather", "get_time"]
        assert h.wire_responses(body) == [
            {"name": "get_weather", "response": {"weather": "sunny"}},
            {"name": "get_time", "response": {"error": h.PLACEHOLDER}},
        ]
    cap = h.Capture()
    await h.run(h.runner(h.agent(h.gemini(cap)), service, plugins=[ToolpairPlugin()]))
    assert toolpair.validate(cap.bodies[0], "gemini") == []


async def test_id_less_and_identified_calls_side_by_side(service):
    await h.seed(
        service,
        [
            h.event("user", h.text("go")),
            h.event(
                "helper",
                h.call("get_weather", "c1", city="Paris"),
                idless("get_weather", city="Oslo"),
            ),
            h.event("helper", h.response("get_weather", "c1", weather="sunny")),
        ],
    )
    found = await check_session(service, h.APP, h.USER, "s1")
    assert [(v.index, v.ids) for v in found] == [(1, ("get_weather",))]
    # An id-less response with no id-less call before it is an orphan, named by name.
    await h.seed(
        service,
        [
            h.event("user", h.text("hi")),
            h.event("helper", idless_response("get_time", time="noon")),
        ],
        session_id="s2",
    )
    orphan = await check_session(service, h.APP, h.USER, "s2")
    assert [(v.code, v.ids) for v in orphan] == [("google_adk.orphan_response", ("get_time",))]
