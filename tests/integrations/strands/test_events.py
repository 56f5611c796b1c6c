"""What a repaired request reports, on a real Strands agent: one `RepairEvent` per
repaired model call (source "strands"), the same event to ``on_repair``, nothing for a
valid history; with ``record_dir``, a provider's refusal of a body toolpair called valid
is recorded as a corpus case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from strands import Agent

import toolpair
from toolpair import Repaired, RepairEvent
from toolpair.integrations.strands import ToolpairModel

from . import harness as h


def _ask(model: Any, history: list[Any]) -> None:
    Agent(model=model, messages=history, callback_handler=None)("next")


def test_one_event_per_repaired_request(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    capture = h.Capture()
    _ask(ToolpairModel(h.anthropic_model(capture), on_repair=seen.append), h.dangling())
    assert toolpair.validate(capture.last, "anthropic") == []
    assert len(seen) == 1
    assert seen == subscribed
    event = seen[0]
    assert (event.source, event.provider, event.model) == (
        "strands",
        "anthropic",
        "claude-sonnet-4-5",
    )
    assert event.fixes.get("synthetic_result") == 1


def test_a_valid_request_reports_nothing(subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    _ask(ToolpairModel(h.anthropic_model(h.Capture()), on_repair=seen.append), h.valid())
    assert seen == [] and subscribed == []


def test_a_callback_taking_repaired_gets_the_report() -> None:
    got: list[Repaired] = []

    def legacy(r: Repaired) -> None:
        got.append(r)

    _ask(ToolpairModel(h.anthropic_model(h.Capture()), on_repair=legacy), h.dangling())
    assert [f.kind for f in got[0].fixes] == ["synthetic_result"]


def _refusing_model() -> Any:
    from strands.models.anthropic import AnthropicModel

    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json=error)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return AnthropicModel(
        client_args={"api_key": "k", "http_client": client, "max_retries": 0},
        model_id="claude-sonnet-4-5",
        max_tokens=64,
    )


def test_a_refusal_of_a_valid_body_is_recorded(tmp_path: Path) -> None:
    model = ToolpairModel(_refusing_model(), record_dir=tmp_path)
    with pytest.raises(Exception):  # noqa: B017 - the provider's 400, as the SDK raises it
        _ask(model, h.valid())
    cases = list(tmp_path.rglob("*.json"))
    assert len(cases) == 1
    case = json.loads(cases[0].read_text())
    assert case["status"] == 400
    assert case["provider"] == "anthropic"


def test_an_accepted_body_is_not_recorded(tmp_path: Path) -> None:
    _ask(ToolpairModel(h.anthropic_model(h.Capture()), record_dir=tmp_path), h.valid())
    assert list(tmp_path.rglob("*.json")) == []
