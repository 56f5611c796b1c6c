"""The guardrail's report in LiteLLM's own terms: one `toolpair.events` event per
repaired or rejected attempt, seen in LiteLLM's standard logging payload
(``guardrail_information``) by a real custom logger callback, and, with OpenTelemetry on,
as ``gen_ai.guardrail.result`` on the current span."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm import Router
from litellm.integrations.custom_logger import CustomLogger
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolpair
from tests.support.histories import DANGLING_CHAT, TOOLS, VALID_CHAT
from tests.support.upstream import Upstream
from toolpair.integrations.litellm import ToolpairGuardrail
from toolpair.integrations.opentelemetry import ToolpairInstrumentor

from .deployments import deployment


@pytest.fixture
def seen() -> Iterator[list[toolpair.RepairEvent]]:
    got: list[toolpair.RepairEvent] = []
    saved = list(litellm.callbacks)
    toolpair.subscribe(got.append)
    yield got
    toolpair.unsubscribe(got.append)
    litellm.callbacks[:] = saved


class Payloads(CustomLogger):
    """LiteLLM's standard logging payload of each request tagged with ``probe``."""

    def __init__(self, probe: str) -> None:
        super().__init__()
        self.probe = probe
        self.payloads: list[dict[str, Any]] = []

    def _keep(self, kwargs: Any) -> None:
        meta = (kwargs.get("litellm_params") or {}).get("metadata") or {}
        if meta.get("probe") == self.probe:  # earlier requests' events may be queued
            self.payloads.append(kwargs["standard_logging_object"])

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._keep(kwargs)

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._keep(kwargs)


def _router(up: Upstream) -> Router:
    return Router(
        model_list=[deployment("hosted-claude", "anthropic/claude-sonnet-4-5", up.url("strict"))],
        num_retries=0,
    )


def _call(up: Upstream, messages: list[dict[str, Any]], logger: Payloads) -> Any:
    router = _router(up)

    async def call() -> Any:
        try:
            out = await router.acompletion(
                model="hosted-claude",
                messages=messages,
                tools=TOOLS,
                metadata={"probe": logger.probe},
            )
        except Exception as e:  # reject mode: judged by the caller
            out = e
        for _ in range(100):  # LiteLLM logs in a task of its own
            if logger.payloads:
                break
            await asyncio.sleep(0.05)
        return out

    return asyncio.run(call())


def _toolpair(payload: dict[str, Any]) -> list[dict[str, Any]]:
    info = payload.get("guardrail_information") or []
    return [g for g in info if g.get("guardrail_name") == "toolpair"]


def test_a_repair_is_in_litellms_guardrail_information(
    up: Upstream, seen: list[toolpair.RepairEvent]
) -> None:
    logger = Payloads(secrets.token_hex(8))
    litellm.callbacks.extend([ToolpairGuardrail(), logger])
    out = _call(up, DANGLING_CHAT, logger)
    assert out.choices[0].message.content == "done"
    [event] = seen
    assert event.source == "litellm" and event.mode == "repair"
    assert event.provider == "anthropic" and event.model == "claude-sonnet-4-5"
    assert event.host == "127.0.0.1"
    assert dict(event.fixes) == {"synthetic_result": 1}
    [payload] = logger.payloads
    [info] = _toolpair(payload)
    assert info["guardrail_status"] == "guardrail_intervened"
    assert info["guardrail_provider"] == "toolpair"
    response = info["guardrail_response"]
    assert response["fixes"] == {"synthetic_result": 1}
    assert response["rules"] == ["anthropic.missing_result"]
    assert response["ids"] == ["call_1"] and response["source"] == "litellm"
    assert info["duration"] == pytest.approx(event.duration)
    assert "sk-fake" not in repr(info) and "weather?" not in repr(info)


def test_a_valid_request_reports_nothing(up: Upstream, seen: list[toolpair.RepairEvent]) -> None:
    logger = Payloads(secrets.token_hex(8))
    litellm.callbacks.extend([ToolpairGuardrail(), logger])
    _call(up, VALID_CHAT, logger)
    assert seen == []
    [payload] = logger.payloads
    assert _toolpair(payload) == []


def test_a_rejection_is_reported_once(up: Upstream, seen: list[toolpair.RepairEvent]) -> None:
    logger = Payloads(secrets.token_hex(8))
    litellm.callbacks.extend([ToolpairGuardrail(toolpair_mode="reject"), logger])
    out = _call(up, DANGLING_CHAT, logger)
    assert getattr(out, "status_code", None) == 400
    [event] = seen
    assert event.mode == "reject" and event.rules == ("anthropic.missing_result",)
    assert event.fixes == {}
    # LiteLLM logs the refused request as a failure, with the guardrail's report.
    [info] = [i for p in logger.payloads for i in _toolpair(p)]
    assert info["guardrail_status"] == "guardrail_intervened"
    assert info["guardrail_response"]["mode"] == "reject"


def test_gen_ai_guardrail_result_with_opentelemetry(
    up: Upstream, seen: list[toolpair.RepairEvent]
) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    inst = ToolpairInstrumentor()
    inst.instrument(tracer_provider=provider)
    logger = Payloads(secrets.token_hex(8))
    litellm.callbacks.extend([ToolpairGuardrail(), logger])
    try:
        with provider.get_tracer("app").start_as_current_span("request"):
            _call(up, DANGLING_CHAT, logger)
    finally:
        inst.uninstrument()
    [span] = [s for s in spans.get_finished_spans() if s.name == "request"]
    names = [e.name for e in span.events]
    assert names == ["toolpair.repair", "gen_ai.guardrail.result"]
    result = dict(span.events[1].attributes or {})
    assert result == {
        "gen_ai.guardrail.component.name": "toolpair",
        "gen_ai.guardrail.source": "pre_call",
        "gen_ai.guardrail.policy.id": "anthropic",
        "gen_ai.guardrail.result.type": "action",
        "gen_ai.guardrail.result.value": "repair",
        "gen_ai.guardrail.result.reason": "anthropic.missing_result",
        "gen_ai.guardrail.policy.rule.id": "anthropic.missing_result",
    }
