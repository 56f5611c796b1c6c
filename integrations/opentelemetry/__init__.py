"""toolpair for OpenTelemetry: every repair event on the current span, and as metrics.

    from toolpair.integrations.opentelemetry import ToolpairInstrumentor

    ToolpairInstrumentor().instrument()      # the global tracer and meter providers
    ToolpairInstrumentor().uninstrument()

Needs only ``opentelemetry-api`` (the ``otel`` extra); the SDK and its exporters are the
application's. Each `toolpair.events.RepairEvent` (one per repaired, rejected or
observed-broken request, from any entry point) becomes:

- a span event ``toolpair.repair`` on the current span, with ``toolpair.provider``,
  ``toolpair.model``, ``toolpair.source``, ``toolpair.mode``, ``toolpair.fix.kinds``,
  ``toolpair.fix.count``, ``toolpair.rule.ids``, ``toolpair.content_dropped`` (and
  ``toolpair.format``, ``toolpair.host``, ``toolpair.message.indices``,
  ``toolpair.ids``, ``toolpair.ids.total``, ``toolpair.content_to_text``,
  ``toolpair.thinking_off``);
- ``gen_ai.conversation.compacted = true`` on that span, only when content was dropped
  (a positive indicator: never set to false);
- from the LiteLLM guardrail, which is a guardrail in LiteLLM's own terms, also a span
  event ``gen_ai.guardrail.result`` (the GenAI guardrail conventions; other entry
  points are not guardrails and never emit it);
- metrics ``toolpair.repairs`` (counter: provider, source, mode), ``toolpair.fixes``
  (counter: kind, provider) and ``toolpair.repair.duration`` (histogram, seconds).

With no current (recording) span nothing is created, unless ``create_span=True``: then
the event goes on a span ``toolpair.repair`` of its own. The schema is a stable contract
(docs/observability.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from typing import Any

from opentelemetry import metrics, trace

from toolpair import events
from toolpair.events import RepairEvent

__all__ = ["ToolpairInstrumentor", "attributes"]

_SCOPE = "toolpair.integrations.opentelemetry"
#: The attribute a span gets when content was dropped (GenAI conventions).
COMPACTED = "gen_ai.conversation.compacted"
#: Seconds.
DURATION_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    1.0,
)
#: Rule codes joined into ``gen_ai.guardrail.result.reason``: bounded.
_REASON_RULES = 10

try:
    from importlib.metadata import version as _version

    _VERSION = _version("toolpair")
except Exception:  # a source tree that is not installed
    _VERSION = "0"


def attributes(event: RepairEvent) -> dict[str, Any]:
    """The ``toolpair.repair`` span event's attributes for ``event`` (no content: kinds,
    codes, indices and the event's already bounded, escaped or hashed ids)."""
    out: dict[str, Any] = {
        "toolpair.provider": event.provider,
        "toolpair.source": event.source,
        "toolpair.mode": event.mode,
        "toolpair.format": event.format,
        "toolpair.fix.kinds": list(event.fixes),
        "toolpair.fix.count": event.fix_count,
        "toolpair.rule.ids": list(event.rules),
        "toolpair.message.indices": list(event.indices),
        "toolpair.ids": list(event.ids),
        "toolpair.ids.total": event.ids_total,
        "toolpair.content_dropped": event.content_dropped,
        "toolpair.content_to_text": event.content_to_text,
        "toolpair.thinking_off": event.thinking_off,
    }
    if event.model is not None:
        out["toolpair.model"] = event.model
    if event.host is not None:
        out["toolpair.host"] = event.host
    return out


def _guardrail_result(event: RepairEvent) -> dict[str, Any]:
    """``gen_ai.guardrail.result`` as the conventions map a dedicated guardrail's native
    result: the action toolpair took, its rule codes as the reason; never content."""
    reason = ", ".join(event.rules[:_REASON_RULES])
    if len(event.rules) > _REASON_RULES:
        reason += f" and {len(event.rules) - _REASON_RULES} more"
    out: dict[str, Any] = {
        "gen_ai.guardrail.component.name": "toolpair",
        "gen_ai.guardrail.source": "pre_call",
        "gen_ai.guardrail.policy.id": event.provider,
        "gen_ai.guardrail.result.type": "action",
        "gen_ai.guardrail.result.value": event.mode,
    }
    if reason:
        out["gen_ai.guardrail.result.reason"] = reason
    if event.rules:
        out["gen_ai.guardrail.policy.rule.id"] = event.rules[0]
    return out


class _Instruments:
    """The instruments of one meter provider. The counters are asynchronous: an event
    adds to a plain dict, and the SDK reads the totals when it collects, so a repair
    pays for no aggregation (they export as the same monotonic sums)."""

    def __init__(self, meter: metrics.Meter, owner: ToolpairInstrumentor) -> None:
        self.repairs: dict[tuple[str, str, str], int] = {}
        self.fixes: dict[tuple[str, str], int] = {}
        # Attribute dicts built once per series, not per event.
        self.labels: dict[tuple[str, str, str], dict[str, str]] = {}
        meter.create_observable_counter(
            "toolpair.repairs",
            callbacks=[self._observe_repairs],
            unit="{request}",
            description="Requests toolpair repaired, rejected or observed broken.",
        )
        meter.create_observable_counter(
            "toolpair.fixes",
            callbacks=[self._observe_fixes],
            unit="{fix}",
            description="Fixes toolpair made, by kind.",
        )
        self.duration = meter.create_histogram(
            "toolpair.repair.duration",
            unit="s",
            description="Seconds toolpair spent repairing or judging a request.",
            # A repair takes microseconds to milliseconds: the SDK's default buckets
            # (made for milliseconds) would put every one in the first.
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.owner = owner

    def _observe_repairs(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        return [
            metrics.Observation(n, {"provider": p, "source": s, "mode": m})
            for (p, s, m), n in list(self.repairs.items())
        ]

    def _observe_fixes(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        return [
            metrics.Observation(n, {"kind": k, "provider": p})
            for (k, p), n in list(self.fixes.items())
        ]

    def count(self, event: RepairEvent) -> None:
        key = (event.provider, event.source, event.mode)
        with self.owner._lock:
            self.repairs[key] = self.repairs.get(key, 0) + 1
            for kind, n in event.fixes.items():
                k = (kind, event.provider)
                self.fixes[k] = self.fixes.get(k, 0) + n
            labels = self.labels.get(key)
            if labels is None:
                labels = self.labels[key] = {
                    "provider": event.provider,
                    "source": event.source,
                    "mode": event.mode,
                }
        self.duration.record(event.duration, labels)


class ToolpairInstrumentor:
    """Reports toolpair's repair events to OpenTelemetry. One per process (a singleton,
    as the contrib instrumentors are); `instrument` and `uninstrument` are idempotent
    and thread-safe, and `uninstrument` leaves nothing subscribed."""

    _instance: ToolpairInstrumentor | None = None
    _lock = threading.RLock()
    _instrumented: bool
    _create_span: bool
    _tracer: trace.Tracer | None
    _instruments: _Instruments | None
    #: Per meter provider, kept across instrument() cycles: totals stay monotonic, and
    #: no instrument is registered twice.
    _meters: dict[object, _Instruments]

    def __new__(cls) -> ToolpairInstrumentor:
        with cls._lock:
            if cls._instance is None:
                self = super().__new__(cls)
                self._instrumented = False
                self._create_span = False
                self._tracer = None
                self._instruments = None
                self._meters = {}
                cls._instance = self
            return cls._instance

    def instrumentation_dependencies(self) -> Collection[str]:
        return ("toolpair",)

    @property
    def is_instrumented_by_opentelemetry(self) -> bool:
        return self._instrumented

    def instrument(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        create_span: bool = False,
        **_: Any,
    ) -> None:
        """Start reporting (the global providers unless given). ``create_span``: where no
        span is current, put the event on a ``toolpair.repair`` span of its own (by
        default nothing is created). A second call while instrumented does nothing."""
        with self._lock:
            if self._instrumented:
                return
            self._tracer = trace.get_tracer(_SCOPE, _VERSION, tracer_provider=tracer_provider)
            key: object = meter_provider if meter_provider is not None else metrics
            instruments = self._meters.get(key)
            if instruments is None:
                meter = metrics.get_meter(_SCOPE, _VERSION, meter_provider=meter_provider)
                instruments = self._meters[key] = _Instruments(meter, self)
            self._instruments = instruments
            self._create_span = create_span
            events.subscribe(self._on_event)
            self._instrumented = True

    def uninstrument(self, **_: Any) -> None:
        """Stop reporting. Idempotent. The counters keep their totals (a cumulative
        counter never goes back) and count nothing more."""
        with self._lock:
            if not self._instrumented:
                return
            events.unsubscribe(self._on_event)
            self._tracer = self._instruments = None
            self._instrumented = False

    def _on_event(self, event: RepairEvent) -> None:
        tracer, instruments = self._tracer, self._instruments
        if tracer is None or instruments is None:
            return  # uninstrumented while an event was on its way
        span = trace.get_current_span()
        if span.is_recording():
            self._annotate(span, event)
        elif self._create_span:
            end = time.time_ns()
            start = end - int(event.duration * 1e9)
            own = tracer.start_span("toolpair.repair", start_time=start)
            try:
                self._annotate(own, event)
            finally:
                own.end(end_time=end)
        instruments.count(event)

    @staticmethod
    def _annotate(span: trace.Span, event: RepairEvent) -> None:
        span.add_event("toolpair.repair", attributes(event))
        if event.content_dropped:
            span.set_attribute(COMPACTED, True)
        if event.source == "litellm":
            span.add_event("gen_ai.guardrail.result", _guardrail_result(event))
