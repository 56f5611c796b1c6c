"""Pair-safe event compaction against ADK's own: its sliding-window compactor, its
``LlmEventSummarizer`` (on the Gemini mock transport) and its read-time
``_process_compaction_events``, which hides every event inside a summary's range."""

from __future__ import annotations

from typing import Any

import pytest

from .harness import Capture, agent, call, event, gemini, response, seed, text

compaction = pytest.importorskip(
    "google.adk.apps.compaction",
    reason="this google-adk has no event compaction (google.adk.apps is absent in 1.7)",
)

from google.adk.apps import App  # noqa: E402
from google.adk.apps.app import EventsCompactionConfig  # noqa: E402
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer  # noqa: E402
from google.adk.events import EventActions  # noqa: E402
from google.adk.flows.llm_flows.context._compaction import (  # noqa: E402
    _process_compaction_events,
)
from google.adk.sessions import InMemorySessionService  # noqa: E402

from toolpair.integrations.google_adk import (  # noqa: E402
    PairSafeSummarizer,
    adk_trims_compaction,
    pair_safe_prefix,
)

pytestmark = pytest.mark.anyio


def at(ts: float, e: Any) -> Any:
    e.timestamp = ts
    return e


def pending_long_running() -> list[Any]:
    """Three invocations; the second starts a long-running call whose result has not
    come back when the third ends (a LongRunningFunctionTool, #5602)."""
    return [
        at(1, event("user", text("hi"), inv="i0")),
        at(2, event("helper", text("hello"), inv="i0")),
        at(3, event("user", text("weather in Paris?"), inv="i1")),
        at(
            4,
            event(
                "helper",
                call("get_weather", "c1", city="Paris"),
                inv="i1",
                long_running_tool_ids={"c1"},
            ),
        ),
        at(5, event("user", text("still there?"), inv="i2")),
        at(6, event("helper", text("waiting for the weather service"), inv="i2")),
    ]


def the_result_arrives() -> list[Any]:
    return [
        at(7, event("user", response("get_weather", "c1", weather="sunny"), inv="i3")),
        at(8, event("helper", text("It is sunny."), inv="i3")),
    ]


def calls_and_responses(events: list[Any]) -> tuple[set[str], set[str]]:
    calls = {c.id for e in events for c in e.get_function_calls()}
    responses = {r.id for e in events for r in e.get_function_responses()}
    return calls, responses


def summarizer() -> Any:
    return LlmEventSummarizer(llm=gemini(Capture(answers=[[{"text": "We said hello."}]])))


def _config(wrap: bool | None, **trigger: int) -> Any:
    inner = summarizer()
    chosen = inner if wrap is None else PairSafeSummarizer(inner, trim=wrap or None)
    return EventsCompactionConfig(summarizer=chosen, **trigger)


@pytest.mark.parametrize("wrap", [None, False, True], ids=["adk", "wrapped", "forced"])
async def test_adk_213_own_sliding_window_stops_before_an_open_call(wrap: bool | None) -> None:
    # This release trims its window itself, so by default the wrapper stays out of the
    # way, and forced trimming cuts at the same place.
    assert adk_trims_compaction()
    service = InMemorySessionService()
    session = await seed(service, pending_long_running())
    config = _config(wrap, compaction_interval=3, overlap_size=0)
    app = App(name="app", root_agent=agent(gemini(Capture())), events_compaction_config=config)
    made = [e async for e in compaction._run_compaction_for_sliding_window(app, session, service)]
    assert len(made) == 1
    c = made[0].actions.compaction
    assert (c.start_timestamp, c.end_timestamp) == (1, 3)
    if wrap is not None:
        assert config.summarizer.only_pending is (not wrap)
        assert config.summarizer.last_dropped == 0


@pytest.mark.parametrize("wrap", [None, False, True], ids=["adk", "wrapped", "forced"])
async def test_adk_213_own_token_threshold_stops_before_an_open_call(wrap: bool | None) -> None:
    from google.genai import types

    events = pending_long_running()
    events[-1].usage_metadata = types.GenerateContentResponseUsageMetadata(prompt_token_count=1000)
    service = InMemorySessionService()
    session = await seed(service, events)
    config = _config(wrap, token_threshold=100, event_retention_size=1)
    ran = await compaction._run_compaction_for_token_threshold_config(
        config=config, session=session, session_service=service, agent=agent(gemini(Capture()))
    )
    assert ran is True
    c = session.events[-1].actions.compaction
    assert (c.start_timestamp, c.end_timestamp) == (1, 3)


async def test_a_window_ending_inside_a_pair_orphans_the_result_without_toolpair() -> None:
    # The whole three invocations, as compaction hands them over where it does not trim
    # its own window (#4740, #5602): ADK's summarizer covers the call, and the result
    # that arrives later is left without it.
    window = pending_long_running()
    summary = await summarizer().maybe_summarize_events(events=window)
    assert summary.actions.compaction.end_timestamp == 6
    seen = _process_compaction_events([*window, summary, *the_result_arrives()])
    assert calls_and_responses(seen) == (set(), {"c1"})


async def test_pair_safe_summarizer_keeps_the_pair_out_of_the_summary() -> None:
    window = pending_long_running()
    wrapped = PairSafeSummarizer(summarizer(), trim=True)
    summary = await wrapped.maybe_summarize_events(events=window)
    # It ends before the question too: the call would follow the model-authored summary.
    assert wrapped.last_dropped == 4
    assert (
        summary.actions.compaction.start_timestamp,
        summary.actions.compaction.end_timestamp,
    ) == (1, 2)
    seen = _process_compaction_events([*window, summary, *the_result_arrives()])
    assert calls_and_responses(seen) == ({"c1"}, {"c1"})
    assert [e.timestamp for e in seen] == [2, 3, 4, 5, 6, 7, 8]  # the summary sits at 2


async def test_nothing_safe_to_summarise_means_no_summary() -> None:
    window = [
        at(1, event("helper", call("get_weather", "c1", city="Paris"), inv="i1")),
        at(2, event("user", text("hurry"), inv="i2")),
    ]
    wrapped = PairSafeSummarizer(summarizer(), trim=True)
    assert await wrapped.maybe_summarize_events(events=window) is None
    assert wrapped.last_dropped == 2


def test_pending_confirmation_is_an_open_pair() -> None:
    # The tool asked for a confirmation (#4740): its response event carries the request,
    # so the call stays open until the confirmed rerun answers it.
    from google.adk.tools.tool_confirmation import ToolConfirmation

    asked = event(
        "helper",
        response("get_weather", "c1", error="needs confirmation"),
        inv="i1",
        actions=EventActions(requested_tool_confirmations={"c1": ToolConfirmation(hint="ok?")}),
    )
    events = [
        event("user", text("weather in Paris?"), inv="i1"),
        event("helper", call("get_weather", "c1", city="Paris"), inv="i1"),
        asked,
        event(
            "helper",
            call("adk_request_confirmation", "adk-1", originalFunctionCall={}),
            inv="i1",
            long_running_tool_ids={"adk-1"},
        ),
    ]
    assert pair_safe_prefix(events) == []
    answered = [
        *events,
        event("user", response("adk_request_confirmation", "adk-1", confirmed=True), inv="i2"),
        event("helper", response("get_weather", "c1", weather="sunny"), inv="i2"),
    ]
    assert pair_safe_prefix(answered) is answered


def test_prefix_is_new_list_and_input_untouched() -> None:
    events = pending_long_running()
    before = [e.model_copy(deep=True) for e in events]
    cut = pair_safe_prefix(events)
    assert cut == events[:2] and cut is not events
    assert [e.model_dump() for e in events] == [e.model_dump() for e in before]
    whole = [*events, *the_result_arrives()]
    assert pair_safe_prefix(whole) is whole
    # Parallel calls answered in two events close only when both have come back.
    par = [
        event("helper", call("get_weather", "a", city="P"), call("get_time", "b", city="P")),
        event("helper", response("get_weather", "a", weather="sunny")),
        event("helper", response("get_time", "b", time="noon")),
    ]
    assert pair_safe_prefix(par[:2]) == [] and pair_safe_prefix(par) is par


def confirmation_pending_across_invocations() -> list[Any]:
    """A tool waiting for its confirmation (#4740) while the user talks of other things."""
    from google.adk.tools.tool_confirmation import ToolConfirmation

    asked = EventActions(requested_tool_confirmations={"c1": ToolConfirmation(hint="ok?")})
    original = {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}
    return [
        at(1, event("user", text("hi"), inv="i0")),
        at(2, event("helper", text("hello"), inv="i0")),
        at(3, event("user", text("weather in Paris?"), inv="i1")),
        at(4, event("helper", call("get_weather", "c1", city="Paris"), inv="i1")),
        at(5, event("helper", response("get_weather", "c1", error="needs ok"), inv="i1",
                    actions=asked)),
        at(6, event("helper",
                    call("adk_request_confirmation", "adk-1", originalFunctionCall=original,
                         toolConfirmation={"hint": "ok?", "confirmed": False}),
                    inv="i1", long_running_tool_ids={"adk-1"})),
        at(7, event("user", text("hello?"), inv="i2")),
        at(8, event("helper", text("waiting for your confirmation"), inv="i2")),
    ]  # fmt: skip


async def _confirm_after_compaction(summarizer_: Any) -> dict[str, Any]:
    from google.adk.runners import Runner
    from google.genai import types

    service = InMemorySessionService()
    session = await seed(service, confirmation_pending_across_invocations())
    cap = Capture()
    config = EventsCompactionConfig(summarizer=summarizer_, compaction_interval=3, overlap_size=0)
    app = App(name="app", root_agent=agent(gemini(cap)), events_compaction_config=config)
    made = [e async for e in compaction._run_compaction_for_sliding_window(app, session, service)]
    assert len(made) == 1
    await service.append_event(session, made[0])
    yes = types.FunctionResponse(id="adk-1", name="adk_request_confirmation",
                                 response={"confirmed": True})  # fmt: skip
    async for _ in Runner(app=app, session_service=service).run_async(
        user_id="u1", session_id="s1",
        new_message=types.Content(role="user", parts=[types.Part(function_response=yes)]),
    ):  # fmt: skip
        pass
    return {"range": made[0].actions.compaction, "body": cap.bodies[0]}


async def test_adk_213_summarises_an_older_pending_confirmation_and_gemini_refuses_the_resume() -> (
    None
):
    # ADK 2.13 counts a confirmation asked in an older invocation as dead and summarises
    # it; when the user confirms, its read-time recovery puts the call back right after
    # the summary, which ADK attributes to the model: a call turn after a model turn.
    import toolpair

    out = await _confirm_after_compaction(summarizer())
    assert (out["range"].start_timestamp, out["range"].end_timestamp) == (1, 8)
    body = out["body"]
    assert body["contents"][0] == {"role": "model", "parts": [{"text": "We said hello."}]}
    v = toolpair.validate(body, "gemini")
    assert [(x.code, x.index) for x in v] == [("gemini.call_turn_position", 1)]
    assert v[0].message.startswith("Please ensure that function call turn comes immediately")


async def test_pair_safe_summarizer_keeps_the_confirmation_raw_on_213() -> None:
    import toolpair

    wrapped = PairSafeSummarizer(summarizer())
    assert wrapped.only_pending
    out = await _confirm_after_compaction(wrapped)
    # Not after event 3 either: the call would follow the model-authored summary.
    assert (out["range"].start_timestamp, out["range"].end_timestamp) == (1, 2)
    assert wrapped.last_dropped == 6
    body = out["body"]
    assert toolpair.validate(body, "gemini") == []
    calls = [
        p["functionCall"]["id"] for c in body["contents"] for p in c["parts"] if "functionCall" in p
    ]
    assert calls == ["c1"]


def test_only_pending_leaves_a_dead_plain_call_to_adk() -> None:
    # A plain call no one answered (a crashed process, #7236) does not hold the window
    # back in the 2.13 mode; a pending confirmation or long-running call does.
    dead = [
        at(1, event("helper", call("get_weather", "c1", city="Paris"), inv="i1")),
        at(2, event("user", text("hello?"), inv="i2")),
    ]
    assert pair_safe_prefix(dead, only_pending=True) is dead
    assert pair_safe_prefix(dead) == []
    assert len(pair_safe_prefix(pending_long_running(), only_pending=True)) == 2
    assert len(pair_safe_prefix(confirmation_pending_across_invocations(), only_pending=True)) == 2


@pytest.mark.parametrize("plugin", [False, True], ids=["bare", "plugin"])
async def test_adk_213_own_cut_before_a_call_is_fixed_by_the_plugin(plugin: bool) -> None:
    # ADK 2.13's own trim ends the summary right before the long-running call (a window
    # the summarizer cannot see past), so when the result comes back the call follows
    # the model-authored summary; the plugin's repair of the request puts that right.
    from google.adk.runners import Runner
    from google.genai import types

    import toolpair
    from toolpair.integrations.google_adk import ToolpairPlugin

    service = InMemorySessionService()
    session = await seed(service, pending_long_running())
    cap = Capture()
    config = EventsCompactionConfig(summarizer=summarizer(), compaction_interval=3, overlap_size=0)
    app = App(
        name="app",
        root_agent=agent(gemini(cap)),
        events_compaction_config=config,
        plugins=[ToolpairPlugin()] if plugin else [],
    )
    made = [e async for e in compaction._run_compaction_for_sliding_window(app, session, service)]
    await service.append_event(session, made[0])
    result = types.FunctionResponse(id="c1", name="get_weather", response={"weather": "sunny"})
    async for _ in Runner(app=app, session_service=service).run_async(
        user_id="u1", session_id="s1",
        new_message=types.Content(role="user", parts=[types.Part(function_response=result)]),
    ):  # fmt: skip
        pass
    body = cap.bodies[0]
    texts = [p.get("text") for c in body["contents"] for p in c["parts"]]
    assert "We said hello." in texts
    v = toolpair.validate(body, "gemini")
    if plugin:
        assert v == []
        kinds = [next(iter(p)) for c in body["contents"] for p in c["parts"]]
        assert kinds.count("functionCall") == kinds.count("functionResponse") == 1
    else:
        assert body["contents"][0]["parts"] == [{"text": "We said hello."}]
        assert [(x.code, x.index) for x in v] == [("gemini.call_turn_position", 1)]
