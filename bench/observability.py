"""What reporting a repair costs: the OpenTelemetry instrumentor on against off, and the
event itself when nothing subscribes.

For a broken Anthropic history (one dangling call per hundred messages, realistic sizes
from `histories.py`), each figure is a ratio of medians measured in this one run, the
variants interleaved round by round, each taking its fastest round (the least disturbed
by other processes on a shared machine):

- repair with `ToolpairInstrumentor` on (the real SDK: a recording span is current, a
  MeterProvider with an in-memory reader aggregates) against off: the target is within
  5% of the repair itself;
- the event's own cost with no subscriber (building it and the log-level check; the log
  handler itself is off in every variant) as a share of the repair;
- a valid history (the no-op path) with the instrumentor on against off: no event is
  built, so this is noise around 1.00.

    python bench/observability.py            # needs opentelemetry-sdk
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from histories import wire
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

import toolpair
from toolpair import events
from toolpair.integrations.opentelemetry import ToolpairInstrumentor

ROUNDS = 31


def _median(fn: Callable[[], Any], inner: int) -> float:
    t = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t) / inner


def main() -> None:
    logging.getLogger("toolpair").setLevel(logging.CRITICAL)  # no handler cost anywhere
    tracer_provider = TracerProvider()
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    tracer = tracer_provider.get_tracer("bench")
    inst = ToolpairInstrumentor()
    print("messages  repair (ms)  otel on/off  event share  valid on/off")
    for n in (20, 200, 2000):
        broken = wire("anthropic", n, defects=True)
        valid = wire("anthropic", n)
        assert toolpair.repair(broken, "anthropic").changed
        assert not toolpair.repair(valid, "anthropic").fixes
        inner = max(2, 1000 // n)
        fixes = toolpair.repair(broken, "anthropic").fixes

        def repair_broken(h: list[Any] = broken) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        def repair_valid(h: list[Any] = valid) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        def report(f: list[Any] = fixes) -> None:
            events.report(f, "anthropic", "anthropic", 0.0)

        off: list[float] = []
        on: list[float] = []
        valid_off: list[float] = []
        valid_on: list[float] = []
        share: list[float] = []
        for _ in range(ROUNDS):
            off.append(_median(repair_broken, inner))
            valid_off.append(_median(repair_valid, inner))
            share.append(_median(report, inner * 10))
            inst.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
            on.append(_median(repair_broken, inner))
            valid_on.append(_median(repair_valid, inner))
            inst.uninstrument()
        base = min(off)
        print(
            f"{n:>8}  {base * 1000:>11.3f}  {min(on) / base:>11.3f}"
            f"  {min(share) / base:>11.4f}"
            f"  {min(valid_on) / min(valid_off):>12.3f}"
        )


if __name__ == "__main__":
    main()
