"""The real OpenTelemetry SDK with in-memory exporters, and toolpair's instrumentor on it,
for the tests that read the spans, events and metrics repair leaves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolpair.integrations.opentelemetry import ToolpairInstrumentor


class Otel:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("app")

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def repair_events(self) -> list[Any]:
        return [e for s in self.finished() for e in s.events if e.name == "toolpair.repair"]

    def span_events(self, span: str) -> list[dict[str, Any]]:
        [s] = [s for s in self.finished() if s.name == span]
        return [dict(e.attributes or {}) for e in s.events if e.name == "toolpair.repair"]

    def span_attributes(self, span: str) -> dict[str, Any]:
        [s] = [s for s in self.finished() if s.name == span]
        return dict(s.attributes or {})

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        out: list[Any] = []
        if data is None:
            return out
        for rm in data.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == name:
                        out.extend(m.data.data_points)
        return out

    def repairs(self) -> dict[tuple[str, str], int]:
        """The toolpair.repairs counter by (source, mode)."""
        return {
            (p.attributes["source"], p.attributes["mode"]): p.value
            for p in self.points("toolpair.repairs")
        }


@contextmanager
def instrumented() -> Iterator[Otel]:
    """A fresh SDK with toolpair's instrumentor on it, taken off again after."""
    o = Otel()
    inst = ToolpairInstrumentor()
    inst.instrument(tracer_provider=o.tracer_provider, meter_provider=o.meter_provider)
    try:
        yield o
    finally:
        inst.uninstrument()
