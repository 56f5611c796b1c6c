"""What a repaired request reports, on a real agno agent: one `RepairEvent` per repaired
model call (source "agno"), the same event to ``on_repair``, nothing for a request that
needed nothing."""

from __future__ import annotations

import toolpair
from toolpair import RepairEvent
from toolpair.integrations import agno as tp_agno

from .harness import MODELS, POISONED, Capture, seeded_agent


def test_one_event_per_repaired_request(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    cap = Capture()
    with tp_agno.patched(on_repair=seen.append):
        seeded_agent(MODELS["openai"](cap), POISONED["orphan_call"]()).run("x", session_id="s1")
    assert toolpair.validate(cap.last, "openai") == []
    assert len(seen) == 1
    assert seen == subscribed
    assert (seen[0].source, seen[0].provider) == ("agno", "openai")
    assert seen[0].fix_count >= 1


def test_a_guarded_model_reports_once_even_when_patched_too(
    subscribed: list[RepairEvent],
) -> None:
    seen: list[RepairEvent] = []
    model = tp_agno.guard(MODELS["openai"](Capture()), on_repair=seen.append)
    with tp_agno.patched():
        seeded_agent(model, POISONED["orphan_call"]()).run("x", session_id="s1")
    assert len(subscribed) == 1
    assert seen == subscribed
