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

import gc
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

ROUNDS = 100
BLOCK = 10


def _once(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _block(fn: Callable[[], Any]) -> float:
    """Seconds of this thread's CPU per call of ``fn`` over a block of calls: CPU time,
    not wall time, so the other jobs of a shared machine do not land in the figure."""
    t = time.thread_time()
    for _ in range(BLOCK):
        fn()
    return (time.thread_time() - t) / BLOCK


def _added(a: Callable[[], Any], b: Callable[[], Any], switch: Callable[[bool], None]) -> float:
    """What b adds to a, in seconds of CPU per call: two back-to-back blocks of calls per
    round, one with the switch off and one with it on, each after an untimed warm-up
    call. The order alternates, and the two orders' medians are averaged, so neither
    the machine's drift nor going first weighs on the figure. As timeit does, the
    collector is off while a round is timed (switching allocates, which would otherwise
    start a collection inside the block after it) and runs between rounds."""
    by_order: tuple[list[float], list[float]] = ([], [])
    for i in range(ROUNDS):
        gc.collect()
        gc.disable()
        if i % 2:
            switch(False)
            a()
            ta = _block(a)
            switch(True)
            b()
            tb = _block(b)
        else:
            switch(True)
            b()
            tb = _block(b)
            switch(False)
            a()
            ta = _block(a)
        gc.enable()
        by_order[i % 2].append(tb - ta)
    switch(False)
    return (statistics.median(by_order[0]) + statistics.median(by_order[1])) / 2


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

    print(
        "messages  repair (ms)  otel adds (us)  otel on vs off  nothing listens  valid on vs off"
    )
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

        # The repair itself: no span around it, nothing subscribed.
        base = statistics.median(_block(lambda h=broken: toolpair.repair(h, "anthropic")) for _ in range(51))
        base_valid = statistics.median(_block(lambda h=valid: toolpair.repair(h, "anthropic")) for _ in range(51))
        otel = _added(repair_broken, repair_broken, switch)
        event = statistics.median(_once(report) for _ in range(51)) / 100 / base
        noop = _added(repair_valid, repair_valid, switch) / base_valid
        print(
            f"{n:>8}  {base * 1000:>11.3f}  {otel * 1e6:>14.1f}  {otel / base:>+14.2%}"
            f"  {event:>+15.2%}  {noop:>+15.2%}"
        )


if __name__ == "__main__":
    main()
