"""check_session and repair_session through real session services: the in-memory one
and the SQLite-backed DatabaseSessionService."""

from __future__ import annotations

import pytest

import toolpair
from toolpair.integrations.google_adk import check_session, repair_session

from .harness import (
    ADK,
    APP,
    PLACEHOLDER,
    USER,
    Capture,
    agent,
    call,
    event,
    gemini,
    half_answered,
    interrupted,
    orphan_response,
    run,
    runner,
    seed,
    stored_events,
    text,
    valid,
    wire_responses,
)

pytestmark = pytest.mark.anyio


async def test_valid_session_has_nothing_to_report_or_append(service):
    await seed(service, valid())
    assert await check_session(service, APP, USER, "s1") == []
    report = await repair_session(service, APP, USER, "s1")
    assert report.fixes == [] and report.messages == []
    assert len(await stored_events(service)) == 4


async def test_interrupted_call_is_answered_by_an_appended_event(service):
    await seed(service, half_answered())
    v = await check_session(service, APP, USER, "s1")
    assert [(x.code, x.index, x.ids) for x in v] == [("google_adk.unanswered_call", 1, ("c2",))]
    assert "no matching function response" in v[0].message
    before = [e.id for e in await stored_events(service)]
    report = await repair_session(service, APP, USER, "s1")
    assert [(f.kind, f.index, f.ids) for f in report.fixes] == [("synthetic_result", 1, ("c2",))]
    events = await stored_events(service)
    # Appended, not rewritten: the earlier events are the same ones, in order.
    assert [e.id for e in events[: len(before)]] == before
    added = events[-1]
    assert added.author == "helper"
    fr = added.content.parts[0].function_response
    assert (fr.id, fr.name, fr.response) == ("c2", "get_time", {"error": PLACEHOLDER})
    assert await check_session(service, APP, USER, "s1") == []
    again = await repair_session(service, APP, USER, "s1")
    assert again.fixes == [] and len(await stored_events(service)) == len(events)


async def test_repaired_session_goes_out_valid_without_the_plugin(service):
    await seed(service, interrupted())
    await repair_session(service, APP, USER, "s1")
    cap = Capture()
    await run(runner(agent(gemini(cap)), service))
    body = cap.bodies[0]
    assert toolpair.validate(body, "gemini") == []
    assert wire_responses(body) == [{"name": "get_weather", "response": {"error": PLACEHOLDER}}]


async def test_orphan_response_is_reported_and_left(service):
    await seed(service, orphan_response())
    v = await check_session(service, APP, USER, "s1")
    assert [(x.code, x.index, x.ids) for x in v] == [("google_adk.orphan_response", 2, ("gone",))]
    assert v[0].message == "No function call event found for function responses ids: {'gone'}"
    report = await repair_session(service, APP, USER, "s1")
    assert [(f.kind, f.index, f.ids) for f in report.unrepaired] == [("unrepaired", 2, ("gone",))]
    assert not report.changed
    assert len(await stored_events(service)) == 4


async def test_a_session_left_refused_is_not_written_unless_asked(service):
    # An unanswered call that could be answered, beside an orphan that cannot.
    await seed(service, [*interrupted(), *orphan_response()[1:]])
    before = len(await stored_events(service))
    report = await repair_session(service, APP, USER, "s1")
    assert [f.kind for f in report.fixes] == ["synthetic_result", "unrepaired"]
    assert "not written" in report.fixes[0].detail
    assert len(await stored_events(service)) == before
    report = await repair_session(service, APP, USER, "s1", allow_partial=True)
    assert "was appended" in report.fixes[0].detail
    assert len(await stored_events(service)) == before + 1
    left = await check_session(service, APP, USER, "s1")
    assert [x.code for x in left] == ["google_adk.orphan_response"]


async def test_pending_long_running_call_is_not_broken(service):
    pending = event("helper", call("get_weather", "lr1", city="Paris"))
    pending.long_running_tool_ids = {"lr1"}
    await seed(service, [event("user", text("weather?")), pending])
    assert await check_session(service, APP, USER, "s1") == []


async def test_dry_run_appends_nothing(service):
    await seed(service, interrupted())
    report = await repair_session(service, APP, USER, "s1", dry_run=True)
    assert [f.kind for f in report.fixes] == ["synthetic_result"]
    assert len(report.messages) == 1
    assert len(await stored_events(service)) == 2


async def test_unknown_session_is_a_clear_error(service):
    with pytest.raises(LookupError, match="no session 'nope'"):
        await check_session(service, APP, USER, "nope")


async def test_resuming_with_a_response_whose_call_is_gone(service):
    # A long-running tool resumed after compaction (or from another branch) sends a
    # response no event calls. Up to 2.10 ADK stores it, then raises while it builds the
    # request, before any callback runs; 2.13 refuses the message before storing it.
    from google.genai import types

    await seed(service, [event("user", text("book it")), event("helper", text("pending"))])
    cap = Capture()
    r = runner(agent(gemini(cap)), service)
    orphan = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="lost", name="get_weather", response={"ok": True}
                )
            )
        ],
    )
    said = "No function call event found" if ADK < (2, 11) else "Function call not found"
    with pytest.raises(ValueError, match=said):
        async for _ in r.run_async(user_id=USER, session_id="s1", new_message=orphan):
            pass
    assert cap.bodies == []
    v = await check_session(service, APP, USER, "s1")
    if ADK < (2, 11):
        assert [(x.code, x.index, x.ids) for x in v] == [
            ("google_adk.orphan_response", 2, ("lost",))
        ]
    else:
        assert v == []
