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
#: Queued durations that wake the worker which records them.
PENDING_WAKE = 256
#: Rule codes joined into ``gen_ai.guardrail.result.reason``: bounded.
_REASON_RULES = 10

try:
    from importlib.metadata import version as _version

    _VERSION = _version("toolpair")
except Exception:  # a source tree that is not installed
    _VERSION = "0"


def attributes(event: RepairEvent) -> dict[str, Any]:
    """The ``toolpair.repair`` span event's attributes for ``event`` (no content: kinds,
    codes, indices and the event's already bounded, escaped or hashed ids).

    The SDK checks every attribute of a span event one by one (about 0.7 microseconds
    each), so what only sometimes says anything is present only then: the model and host
    when known, the format when it is not the provider's own, the ids' total when ids
    were left out, and the positive flags when true (as ``gen_ai.conversation.compacted``
    is). ``toolpair.content_dropped`` is always present: dashboards filter on false too.
    """
    out: dict[str, Any] = {
        "toolpair.provider": event.provider,
        "toolpair.source": event.source,
        "toolpair.mode": event.mode,
        "toolpair.fix.kinds": tuple(event.fixes),
        "toolpair.fix.count": event.fix_count,
        "toolpair.rule.ids": event.rules,
        "toolpair.message.indices": event.indices,
        "toolpair.ids": event.ids,
        "toolpair.content_dropped": event.content_dropped,
    }
    if event.model is not None:
        out["toolpair.model"] = event.model
    if event.host is not None:
        out["toolpair.host"] = event.host
    if event.format != event.provider:
        out["toolpair.format"] = event.format
    if event.ids_total > len(event.ids):
        out["toolpair.ids.total"] = event.ids_total
    if event.content_to_text:
        out["toolpair.content_to_text"] = True
    if event.thinking_off:
        out["toolpair.thinking_off"] = True
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
    """The instruments of one meter provider, kept off the request path.

    The counters are asynchronous: an event adds to a plain dict, and the SDK reads the
    totals when it collects (they export as the same monotonic sums). OpenTelemetry has
    no asynchronous histogram, and the SDK's synchronous record costs about as much as
    the span event (10 to 17 microseconds: attribute keys, the exemplar reservoir), so an
    event only queues its duration. The queue is recorded into the histogram by the
    counters' collection callback, which the SDK runs before it reads the histogram (so
    every collection holds every duration queued before it), and by a worker thread
    woken each `PENDING_WAKE` durations (so the queue stays short between collections).
    The worker runs only while instrumented. The cost of moving the record: the
    durations carry no exemplars, as they are recorded outside the request's context.
    """

    def __init__(self, meter: metrics.Meter) -> None:
        self.repairs: dict[tuple[str, str, str], int] = {}
        self.fixes: dict[tuple[str, str], int] = {}
        # Attribute dicts built once per series, not per event.
        self.labels: dict[tuple[str, str, str], dict[str, str]] = {}
        #: Durations not yet recorded into the histogram, with their attributes.
        self.pending: list[tuple[float, dict[str, str]]] = []
        self.lock = threading.Lock()
        self._wake = threading.Event()
        self._worker: threading.Thread | None = None
        self._stopping = False
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

    def _observe_repairs(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        self.flush()
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
        with self.lock:
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
            self.pending.append((event.duration, labels))
            wake = len(self.pending) % PENDING_WAKE == 0
        if wake:
            self._wake_worker()

    def flush(self) -> None:
        """Record the queued durations into the histogram."""
        with self.lock:
            pending, self.pending = self.pending, []
        record = self.duration.record
        for seconds, labels in pending:
            record(seconds, labels)

    def _wake_worker(self) -> None:
        worker = self._worker
        if worker is None or not worker.is_alive():  # first use, or a forked child
            with self.lock:
                if self._stopping:
                    return
                worker = self._worker = threading.Thread(
                    target=self._work, name="toolpair-otel-metrics", daemon=True
                )
            worker.start()
        self._wake.set()

    def _work(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            self.flush()

    def start(self) -> None:
        self._stopping = False

    def stop(self) -> None:
        """Stop the worker (uninstrument) and record what it had not."""
        with self.lock:
            self._stopping = True
            worker, self._worker = self._worker, None
        self._wake.set()
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout=5)
        self._wake.clear()
        self.flush()


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
                instruments = self._meters[key] = _Instruments(meter)
            instruments.start()
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
            if self._instruments is not None:
                self._instruments.stop()
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
