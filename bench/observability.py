"""What reporting a repair costs: the OpenTelemetry instrumentor on against off, and the
event itself when nothing subscribes.

For a broken Anthropic history (one dangling call per hundred messages, realistic sizes
from `histories.py`), each figure is a ratio of medians measured in this one run, the
variants interleaved:

- what `ToolpairInstrumentor` (the real SDK: a recording span is current, a
  MeterProvider with an in-memory reader) adds to a repaired request: the median, over
  back-to-back pairs of the same request with it on and off, of the difference over the
  request without it (the target: within 5%);
- the cost of reporting with nothing subscribed and the log line off (a level check:
  no event is built), as a share of the repair;
- the same pairs for a valid history: no event is built, so this is noise around 0.

    python bench/observability.py            # needs opentelemetry-sdk
"""

from __future__ import annotations

import logging
import statistics
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

PAIRS = 301


def _once(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _paired(a: Callable[[], Any], b: Callable[[], Any], switch: Callable[[bool], None]) -> float:
    """The median over pairs of (b - a) / a, each pair two back-to-back requests (the
    order alternating): what b adds to a, with the machine's drift cancelled."""
    ratios: list[float] = []
    for i in range(PAIRS):
        if i % 2:
            switch(False)
            ta = _once(a)
            switch(True)
            tb = _once(b)
        else:
            switch(True)
            tb = _once(b)
            switch(False)
            ta = _once(a)
        ratios.append((tb - ta) / ta)
    switch(False)
    return statistics.median(ratios)


def main() -> None:
    logging.getLogger("toolpair").setLevel(logging.CRITICAL)  # no handler cost anywhere
    tracer_provider = TracerProvider()
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    tracer = tracer_provider.get_tracer("bench")
    inst = ToolpairInstrumentor()

    def switch(on: bool) -> None:
        if on:
            inst.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
        else:
            inst.uninstrument()

    print("messages  repair (ms)  otel on vs off  nothing listens  valid on vs off")
    for n in (20, 200, 2000):
        broken = wire("anthropic", n, defects=True)
        valid = wire("anthropic", n)
        assert toolpair.repair(broken, "anthropic").changed
        assert not toolpair.repair(valid, "anthropic").fixes
        fixes = toolpair.repair(broken, "anthropic").fixes

        def repair_broken(h: list[Any] = broken) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        def repair_valid(h: list[Any] = valid) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        def report(f: list[Any] = fixes) -> None:
            for _ in range(100):
                events.report(f, "anthropic", "anthropic", 0.0)

        base = statistics.median(_once(repair_broken) for _ in range(51))
        otel = _paired(repair_broken, repair_broken, switch)
        event = statistics.median(_once(report) for _ in range(51)) / 100 / base
        noop = _paired(repair_valid, repair_valid, switch)
        print(f"{n:>8}  {base * 1000:>11.3f}  {otel:>+14.2%}  {event:>+15.2%}  {noop:>+15.2%}")


if __name__ == "__main__":
    main()
