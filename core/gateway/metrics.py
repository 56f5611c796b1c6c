"""The gateway's own metrics, in the Prometheus text exposition format (standard library).

Served by the ASGI middleware (and so by ``toolpair proxy --metrics``) on a path that is
never forwarded. The repair counters are renderings of `toolpair.events.RepairEvent`,
the same as the OpenTelemetry instruments; the request counters and latencies are the
middleware's own:

- ``toolpair_repairs_total{provider,source,mode}``: repaired, rejected or observed-broken
  requests (one per event).
- ``toolpair_fixes_total{kind,provider}``: fixes, by kind.
- ``toolpair_repair_duration_seconds``: time spent repairing (histogram).
- ``toolpair_requests_total{format,outcome}``: judged requests by outcome (``valid``,
  ``repaired``, ``rejected``, ``observed``, ``unjudged``).
- ``toolpair_http_requests_total{method,status}`` and
  ``toolpair_http_request_duration_seconds{method}``: every HTTP request through the
  middleware, until the app's response head (for the proxy: the upstream's answer).

Counters live in the process: with several worker processes each would count its own.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable

from toolpair.events import RepairEvent

#: Where the metrics are served unless told otherwise: under a prefix no LLM API uses
#: (vLLM serves its own ``/metrics``).
DEFAULT_PATH = "/toolpair/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Seconds: repair takes microseconds to milliseconds; a request through an LLM API
#: takes up to minutes.
REPAIR_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

Labels = tuple[tuple[str, str], ...]


class _Histogram:
    __slots__ = ("buckets", "counts", "sum")

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.sum += value
        for i, le in enumerate(self.buckets):
            if value <= le:
                self.counts[i] += 1
                return
        self.counts[-1] += 1


class Metrics:
    """Counters and histograms of one gateway, rendered on demand. Thread-safe: the
    middleware judges large bodies off the event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = {
            "toolpair_repairs_total": {},
            "toolpair_fixes_total": {},
            "toolpair_requests_total": {},
            "toolpair_http_requests_total": {},
        }
        self._repair = _Histogram(REPAIR_BUCKETS)
        self._http: dict[Labels, _Histogram] = {}

    def _add(self, name: str, labels: Labels, n: float = 1) -> None:
        series = self._counters[name]
        series[labels] = series.get(labels, 0) + n

    def event(self, e: RepairEvent) -> None:
        """Count one repair event."""
        with self._lock:
            self._add(
                "toolpair_repairs_total",
                (("provider", e.provider), ("source", e.source), ("mode", e.mode)),
            )
            for kind, n in e.fixes.items():
                self._add("toolpair_fixes_total", (("kind", kind), ("provider", e.provider)), n)
            self._repair.observe(e.duration)

    def judged(self, format: str, outcome: str) -> None:
        """Count one judged request and what became of it."""
        with self._lock:
            self._add("toolpair_requests_total", (("format", format), ("outcome", outcome)))

    def http(self, method: str, status: int, seconds: float) -> None:
        """Count one HTTP request and its latency to the response head."""
        with self._lock:
            self._add("toolpair_http_requests_total", (("method", method), ("status", str(status))))
            h = self._http.get((("method", method),))
            if h is None:
                h = self._http[(("method", method),)] = _Histogram(HTTP_BUCKETS)
            h.observe(seconds)

    def render(self) -> str:
        """Everything, in the Prometheus text format (version 0.0.4)."""
        with self._lock:
            out: list[str] = []
            helps = {
                "toolpair_repairs_total": "Requests repaired, rejected or observed broken.",
                "toolpair_fixes_total": "Fixes toolpair made, by kind.",
                "toolpair_requests_total": "Requests toolpair judged, by outcome.",
                "toolpair_http_requests_total": "HTTP requests through the gateway, by status.",
            }
            for name, series in self._counters.items():
                out.append(f"# HELP {name} {helps[name]}")
                out.append(f"# TYPE {name} counter")
                out.extend(f"{name}{_labels(k)} {_number(v)}" for k, v in series.items())
            _histogram(
                out,
                "toolpair_repair_duration_seconds",
                "Seconds toolpair spent repairing or judging a request it reported.",
                [((), self._repair)] if self._repair.sum or any(self._repair.counts) else [],
            )
            _histogram(
                out,
                "toolpair_http_request_duration_seconds",
                "Seconds from a request's arrival to its response head.",
                list(self._http.items()),
            )
            return "\n".join(out) + "\n"


def _histogram(
    out: list[str], name: str, help: str, series: Iterable[tuple[Labels, _Histogram]]
) -> None:
    out.append(f"# HELP {name} {help}")
    out.append(f"# TYPE {name} histogram")
    for labels, h in series:
        running = 0
        for le, n in zip((*h.buckets, math.inf), h.counts, strict=True):
            running += n
            out.append(f"{name}_bucket{_labels((*labels, ('le', _number(le))))} {running}")
        out.append(f"{name}_sum{_labels(labels)} {_number(h.sum)}")
        out.append(f"{name}_count{_labels(labels)} {running}")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(v: float) -> str:
    if v == math.inf:
        return "+Inf"
    if float(v).is_integer():
        return str(int(v))
    return repr(float(v))
