"""The repair event: one per repaired or rejected request, bounded, escaped, no content."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolpair
from toolpair import events
from toolpair._model import Fix, Violation
from toolpair.cli import main


@pytest.fixture
def seen() -> Iterator[list[events.RepairEvent]]:
    got: list[events.RepairEvent] = []
    events.subscribe(got.append)
    try:
        yield got
    finally:
        events.unsubscribe(got.append)
        events.configure(hash_ids=False)


CALL = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}


def _fixes(n: int) -> list[Fix]:
    return [Fix("synthetic_result", i, (f"call_{i}",), "x") for i in range(n)]


def test_report_outside_a_scope_emits_one_library_event(seen: list[events.RepairEvent]) -> None:
    fixes = [*_fixes(2), Fix("orphan_result_dropped", 5, ("toolu_9",), "no call")]
    got = events.report(fixes, "anthropic", "anthropic", 0.001)
    assert seen == [got]
    assert got is not None
    assert got.source == "library" and got.mode == "repair"
    assert dict(got.fixes) == {"synthetic_result": 2, "orphan_result_dropped": 1}
    assert got.fix_count == 3
    assert got.indices == (0, 1, 5)
    assert got.ids == ("call_0", "call_1", "toolu_9") and got.ids_total == 3
    assert got.content_dropped and not got.content_to_text and not got.thinking_off


def test_nothing_changed_emits_nothing(seen: list[events.RepairEvent]) -> None:
    assert events.report([], "openai", "openai", 0.0) is None
    with events.scope("proxy") as s:
        pass
    assert s.event is None
    assert seen == []


def test_a_scope_merges_every_repair_into_one_event(seen: list[events.RepairEvent]) -> None:
    heard: list[events.RepairEvent] = []
    with events.scope("proxy", model="gpt-5", host="api.openai.com", on_event=heard.append) as s:
        events.report(_fixes(2), "openai", "openai", 0.5)
        events.report([Fix("orphan_result_as_text", 7, ("x",), "")], "openai", "openai", 0.25)
        assert seen == []  # nothing until the scope exits
    assert seen == heard == [s.event]
    e = seen[0]
    assert e.source == "proxy" and e.model == "gpt-5" and e.host == "api.openai.com"
    assert dict(e.fixes) == {"synthetic_result": 2, "orphan_result_as_text": 1}
    assert e.duration == 0.75
    assert e.content_to_text and not e.content_dropped


def test_nested_scopes_the_outermost_emits(seen: list[events.RepairEvent]) -> None:
    inner: list[events.RepairEvent] = []
    with events.scope("litellm") as outer, events.scope("langchain", on_event=inner.append):
        events.report(_fixes(1), "anthropic", "anthropic", 0.0)
    assert seen == inner == [outer.event]
    assert seen[0].source == "litellm"


def test_a_rejection_emits_with_its_rules(seen: list[events.RepairEvent]) -> None:
    v = Violation("anthropic.missing_result", "tool_use ids were found...", 3, ("toolu_1",))
    with events.scope("asgi", mode="reject") as s:
        s.rejected([v], provider="anthropic", format="anthropic")
    assert seen == [s.event]
    e = seen[0]
    assert e.mode == "reject" and e.fixes == {} and e.rules == ("anthropic.missing_result",)
    assert e.indices == (3,) and e.ids == ("toolu_1",)


def test_ids_are_bounded_and_escaped(seen: list[events.RepairEvent]) -> None:
    fixes = [*_fixes(10000), Fix("synthetic_result", 0, ("evil\n\x1b[2Jforged",), "")]
    e = events.report(fixes, "anthropic", "anthropic", 0.0)
    assert e is not None
    assert len(e.ids) == events.IDS_SHOWN and e.ids_total == 10_001
    assert len(e.indices) <= 20
    line = events.render(e)
    assert "\n" not in line and len(line) < 1000
    assert "and 9996 more" in line
    e2 = events.report([Fix("synthetic_result", 0, ("a\nb" + "z" * 500,), "")], "x", "y", 0)
    assert e2 is not None
    assert "\n" not in e2.ids[0] and "\\u000a" in e2.ids[0] and len(e2.ids[0]) < 100


def test_ids_can_be_hashed(seen: list[events.RepairEvent]) -> None:
    events.configure(hash_ids=True)
    e = events.report(_fixes(1), "openai", "openai", 0.0)
    assert e is not None
    assert e.ids[0].startswith("sha256:") and "call_0" not in e.ids[0]
    assert e.ids[0] == events.report(_fixes(1), "openai", "openai", 0.0).ids[0]  # type: ignore[union-attr]


def test_the_log_line_is_a_rendering_of_the_event(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "toolpair")
    e = events.report(_fixes(1), "openai", "openai", 0.0)
    assert e is not None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, events.render(e))
    ]
    caplog.clear()
    with events.scope("proxy", mode="observe") as s:
        s.rejected([Violation("openai.missing_result", "m", 1, ("c",))], provider="openai")
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "observed" in caplog.records[0].getMessage()


def test_a_raising_subscriber_never_breaks_the_request(caplog: pytest.LogCaptureFixture) -> None:
    def boom(e: events.RepairEvent) -> None:
        raise RuntimeError("observer bug")

    events.subscribe(boom)
    try:
        assert events.report(_fixes(1), "openai", "openai", 0.0) is not None
    finally:
        events.unsubscribe(boom)
    assert "subscriber raised" in caplog.text


def test_subscribe_is_idempotent_and_public() -> None:
    got: list[events.RepairEvent] = []
    assert toolpair.subscribe(got.append) == got.append
    toolpair.subscribe(got.append)
    try:
        events.report(_fixes(1), "openai", "openai", 0.0)
    finally:
        toolpair.unsubscribe(got.append)
    events.report(_fixes(1), "openai", "openai", 0.0)
    assert len(got) == 1


def test_a_session_repair_is_one_session_event(
    tmp_path: Path, seen: list[events.RepairEvent], capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.mutations import claude_code as cc_mutations

    session = tmp_path / "3f0c2d4e-1111-4222-8333-444455556666.jsonl"
    session.write_bytes(cc_mutations.m_delete_result())
    assert main(["repair", str(session), "-o", str(tmp_path / "out.jsonl")]) == 0
    [e] = seen
    assert e.source == "session" and e.format == "claude-code" and e.mode == "repair"
    assert e.provider == "anthropic" and e.fixes.get("session_edit", 0) >= 1
    assert "anthropic.missing_result" in e.rules and e.ids_total >= 1
    capsys.readouterr()
    seen.clear()
    # The repaired file: nothing to repair, no event.
    assert main(["repair", str(tmp_path / "out.jsonl"), "-o", str(tmp_path / "again")]) == 0
    assert seen == []


def test_compaction_and_its_repair_are_one_event(seen: list[events.RepairEvent]) -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": "next " + "x" * 4000},
        {"role": "assistant", "content": "a" * 4000},
        {"role": "user", "content": "last"},
    ]
    out = toolpair.trim(history, max_tokens=300, provider="anthropic")
    assert out.fixes
    [e] = seen
    assert e.source == "compaction" and e.fix_count == len(out.fixes)
    assert e.content_dropped == any(f.kind == "unit_evicted" for f in out.fixes)
    seen.clear()
    toolpair.trim(history, max_tokens=100_000, provider="anthropic", format="anthropic")
    assert [x.source for x in seen] in ([], ["compaction"])  # only if the repair changed it


def test_the_wire_judge_is_one_event_per_request(seen: list[events.RepairEvent]) -> None:
    from toolpair.gateway import wire

    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "next"},
        ],
    }
    raw = json.dumps(body).encode()
    for mode in wire.MODES:
        wire.judge(raw, "/v1/messages", mode, source="proxy", host="api.anthropic.com")
    assert [(e.source, e.mode, e.model, e.host) for e in seen] == [
        ("proxy", m, "m", "api.anthropic.com") for m in wire.MODES
    ]
    assert dict(seen[0].fixes) == {"synthetic_result": 1} and seen[1].fixes == {}
    assert seen[1].rules == seen[2].rules == ("anthropic.missing_result",)
    seen.clear()
    valid = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    for mode in wire.MODES:
        wire.judge(json.dumps(valid).encode(), "/v1/messages", mode)
    assert seen == []


def test_previews_and_replays_are_not_reported(seen: list[events.RepairEvent]) -> None:
    broken = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [CALL]}]
    with events.silenced():
        assert toolpair.repair([*broken, {"role": "user", "content": "n"}], "anthropic").fixes
        with events.scope("proxy") as s:
            toolpair.repair([*broken, {"role": "user", "content": "n"}], "anthropic")
    assert seen == [] and s.event is None
