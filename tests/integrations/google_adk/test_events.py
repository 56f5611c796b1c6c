"""What a repaired request reports through ADK's plugin, on a real Runner with the Gemini
model on a mock transport: one `RepairEvent` per repaired model call (source
"google_adk"), the same event to ``on_repair``; none for a valid session."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.sessions import InMemorySessionService

import toolpair
from toolpair import RepairEvent
from toolpair.integrations.google_adk import ToolpairPlugin

from .harness import Capture, agent, gemini, interrupted, run, runner, seed, valid

pytestmark = pytest.mark.anyio


async def _send(events: list[Any], seen: list[RepairEvent]) -> dict[str, Any]:
    capture = Capture()
    service = InMemorySessionService()
    await seed(service, events)
    await run(runner(agent(gemini(capture)), service, [ToolpairPlugin(on_repair=seen.append)]))
    return capture.bodies[0]


async def test_one_event_per_repaired_request(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    body = await _send(interrupted(), seen)
    assert toolpair.validate(body, "gemini") == []
    assert len(seen) == 1 and seen == subscribed
    assert (seen[0].source, seen[0].provider) == ("google_adk", "gemini")
    assert seen[0].fix_count >= 1


async def test_a_valid_session_reports_nothing(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    await _send(valid(), seen)
    assert seen == [] and subscribed == []
