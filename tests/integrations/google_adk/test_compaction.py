"""Pair-safe event compaction against ADK's own: its sliding-window compactor, its
``LlmEventSummarizer`` (on the Gemini mock transport) and its read-time
``_process_compaction_events``, which hides every event inside a summary's range."""

from __future__ import annotations

from typing import Any

import pytest
from adk_harness import Capture, agent, call, event, gemini, response, seed, text

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
        assert config.summarizer.trim is bool(wrap)
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
    assert wrapped.last_dropped == 3
    assert (
        summary.actions.compaction.start_timestamp,
        summary.actions.compaction.end_timestamp,
    ) == (1, 3)
    seen = _process_compaction_events([*window, summary, *the_result_arrives()])
    assert calls_and_responses(seen) == ({"c1"}, {"c1"})
    assert [e.timestamp for e in seen] == [3, 4, 5, 6, 7, 8]  # the summary sits at 3


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
    assert pair_safe_prefix(events) == events[:1]
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
    assert cut == events[:3] and cut is not events
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
