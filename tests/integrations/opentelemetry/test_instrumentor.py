"""ToolpairInstrumentor with the real OpenTelemetry SDK and its in-memory exporters: one
``toolpair.repair`` span event per repaired request from every core entry point, none for
a valid one, the attributes of the contract, bounded ids, ``compacted`` only when content
was dropped, the metrics, and nothing left behind by ``uninstrument``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.support.histories import ORPHAN_MESSAGES as ORPHAN
from tests.support.otel import Otel, instrumented
from toolpair import events
from toolpair.cli import main
from toolpair.integrations import opentelemetry as otel_module
from toolpair.integrations.opentelemetry import ToolpairInstrumentor


def dangling(n: int = 1) -> list[dict[str, Any]]:
    calls = [{"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}} for i in range(n)]
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": "next"},
    ]


VALID: list[dict[str, Any]] = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
]


@pytest.fixture
def otel() -> Iterator[Otel]:
    with instrumented() as o:
        yield o


def test_one_span_event_per_repaired_request_with_the_contract_attributes(otel: Otel) -> None:
    with otel.tracer.start_as_current_span("chat claude-sonnet-4-5"):
        toolpair.repair(dangling(), "anthropic", model="claude-sonnet-4-5")
    [span] = otel.finished()
    [event] = otel.repair_events()
    a = dict(event.attributes or {})
    assert a["toolpair.provider"] == "anthropic"
    assert a["toolpair.model"] == "claude-sonnet-4-5"
    assert a["toolpair.source"] == "library"
    assert a["toolpair.mode"] == "repair"
    assert a["toolpair.fix.kinds"] == ("synthetic_result",)
    assert a["toolpair.fix.count"] == 1
    assert a["toolpair.rule.ids"] == ("anthropic.missing_result",)
    assert a["toolpair.content_dropped"] is False
    assert a["toolpair.ids"] == ("toolu_0",)
    # Present only when they say something: every id is shown, the format is the
    # provider's own, nothing was turned to text, thinking stayed on.
    for absent in (
        "toolpair.ids.total",
        "toolpair.format",
        "toolpair.content_to_text",
        "toolpair.thinking_off",
        "toolpair.host",
    ):
        assert absent not in a
    # Nothing was dropped: the positive indicator is not set (never set to false).
    assert "gen_ai.conversation.compacted" not in (span.attributes or {})
    assert not [e for e in span.events if e.name == "gen_ai.guardrail.result"]


def test_a_valid_request_leaves_no_trace(otel: Otel) -> None:
    with otel.tracer.start_as_current_span("chat"):
        assert toolpair.repair(VALID, "anthropic").fixes == []
    assert otel.repair_events() == []
    assert otel.points("toolpair.repairs") == []


def test_compacted_only_when_content_was_dropped(otel: Otel) -> None:
    with otel.tracer.start_as_current_span("dropped"):
        r = toolpair.repair(ORPHAN, "anthropic")
    assert [f.kind for f in r.fixes] == ["orphan_result_dropped"]
    [span] = otel.finished()
    assert (span.attributes or {})["gen_ai.conversation.compacted"] is True
    [event] = otel.repair_events()
    assert (event.attributes or {})["toolpair.content_dropped"] is True


def test_ids_are_bounded(otel: Otel) -> None:
    with otel.tracer.start_as_current_span("big"):
        toolpair.repair(dangling(5000), "anthropic")
    [event] = otel.repair_events()
    a = dict(event.attributes or {})
    assert len(a["toolpair.ids"]) == events.IDS_SHOWN and a["toolpair.ids.total"] == 5000
    assert a["toolpair.fix.count"] == 5000 and len(a["toolpair.message.indices"]) <= 20
    assert len(json.dumps(dict(a), default=list)) < 2000


def test_hashed_ids(otel: Otel) -> None:
    events.configure(hash_ids=True)
    try:
        with otel.tracer.start_as_current_span("hashed"):
            toolpair.repair(dangling(), "anthropic")
    finally:
        events.configure(hash_ids=False)
    [event] = otel.repair_events()
    [shown] = (event.attributes or {})["toolpair.ids"]
    assert shown.startswith("sha256:") and "toolu_0" not in shown


def test_metrics(otel: Otel) -> None:
    toolpair.repair(dangling(3), "anthropic")
    toolpair.repair(ORPHAN, "anthropic")
    toolpair.repair(VALID, "anthropic")
    [repairs] = otel.points("toolpair.repairs")
    assert repairs.value == 2
    assert dict(repairs.attributes) == {
        "provider": "anthropic",
        "source": "library",
        "mode": "repair",
    }
    fixes = {p.attributes["kind"]: p.value for p in otel.points("toolpair.fixes")}
    assert fixes == {"synthetic_result": 3, "orphan_result_dropped": 1}
    [duration] = otel.points("toolpair.repair.duration")
    assert duration.count == 2 and duration.sum > 0


def test_durations_reach_the_histogram_off_the_request_path(otel: Otel) -> None:
    """The request only queues its duration; the worker records every PENDING_WAKE of
    them, a collection records the rest first, and uninstrument stops the worker."""
    n = otel_module.PENDING_WAKE + 3
    with otel.tracer.start_as_current_span("many"):
        for _ in range(n):
            toolpair.repair(dangling(), "anthropic")
    workers = [t for t in threading.enumerate() if t.name == "toolpair-otel-metrics"]
    assert len(workers) == 1  # woken once the queue reached PENDING_WAKE
    deadline = time.monotonic() + 5
    instruments = ToolpairInstrumentor()._instruments
    assert instruments is not None
    while len(instruments.pending) > 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    # The worker recorded at least the first batch, with no collection yet.
    assert len(instruments.pending) <= 3
    [duration] = otel.points("toolpair.repair.duration")  # the collection the rest
    assert duration.count == n and not instruments.pending
    ToolpairInstrumentor().uninstrument()
    assert not [t for t in threading.enumerate() if t.name == "toolpair-otel-metrics"]
    assert otel.points("toolpair.repair.duration")[0].count == n


def test_no_span_is_created_without_a_current_span_unless_asked(otel: Otel) -> None:
    toolpair.repair(dangling(), "anthropic")
    assert otel.finished() == []
    assert otel.points("toolpair.repairs")[0].value == 1  # the metrics still count it
    inst = ToolpairInstrumentor()
    inst.uninstrument()
    inst.instrument(
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        create_span=True,
    )
    toolpair.repair(dangling(), "anthropic")
    [span] = otel.finished()
    assert span.name == "toolpair.repair"
    assert [e.name for e in span.events] == ["toolpair.repair"]


def test_instrument_is_idempotent_and_uninstrument_leaves_nothing() -> None:
    o = Otel()
    inst = ToolpairInstrumentor()
    assert inst is ToolpairInstrumentor()  # one per process, as the contrib instrumentors
    before = events._subscribers
    inst.instrument(tracer_provider=o.tracer_provider, meter_provider=o.meter_provider)
    inst.instrument(tracer_provider=o.tracer_provider, meter_provider=o.meter_provider)
    assert inst.is_instrumented_by_opentelemetry
    with o.tracer.start_as_current_span("twice"):
        toolpair.repair(dangling(), "anthropic")
    assert len(o.repair_events()) == 1
    inst.uninstrument()
    inst.uninstrument()
    assert events._subscribers == before
    assert not inst.is_instrumented_by_opentelemetry
    o.spans.clear()
    with o.tracer.start_as_current_span("after"):
        toolpair.repair(dangling(), "anthropic")
    [span] = o.finished()
    assert span.events == () or list(span.events) == []
    assert "gen_ai.conversation.compacted" not in (span.attributes or {})


def test_compaction_is_one_event_with_dropped_content(otel: Otel) -> None:
    history = [
        *dangling(),
        {"role": "assistant", "content": "a" * 4000},
        {"role": "user", "content": "b" * 4000},
        {"role": "assistant", "content": "c"},
        {"role": "user", "content": "last"},
    ]
    with otel.tracer.start_as_current_span("compact"):
        out = toolpair.trim(history, max_tokens=200, provider="anthropic")
    assert out.evicted
    [event] = otel.repair_events()
    a = dict(event.attributes or {})
    assert a["toolpair.source"] == "compaction"
    assert "unit_evicted" in a["toolpair.fix.kinds"]
    assert a["toolpair.content_dropped"] is True
    [span] = otel.finished()
    assert (span.attributes or {})["gen_ai.conversation.compacted"] is True


def test_the_command_line_is_one_event_per_history(otel: Otel, tmp_path: Path) -> None:
    f = tmp_path / "h.json"
    f.write_text(json.dumps(dangling(2)))
    with otel.tracer.start_as_current_span("cli"):
        assert main(["repair", str(f), "--provider", "anthropic", "-o", str(tmp_path / "o")]) == 0
    [event] = otel.repair_events()
    a = dict(event.attributes or {})
    assert a["toolpair.source"] == "cli" and a["toolpair.fix.count"] == 2
