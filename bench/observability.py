"""What reporting a repair costs with the OpenTelemetry instrumentor on.

For a broken Anthropic history (one dangling call per hundred messages, realistic sizes
from `histories.py`), measured in this one run, in CPU time of the calling thread (so
the other jobs of a shared machine stay out of the figures), as the median over rounds
of two back-to-back blocks of the same request, one with the switch off and one on, the
order alternating:

- the repair itself (no span around it, nothing subscribed);
- what building the event adds once anything subscribes (nothing subscribed and the log
  line off, no event is built: a level check);
- the SDK's ``add_event`` of a span event with the contract's eight attributes alone,
  built beforehand: the floor under any instrumentor, since the span event has to be on
  the request path (the span may end right after it);
- what `ToolpairInstrumentor` adds in all (the real SDK: a recording span is current, a
  MeterProvider with an in-memory reader), and as a share of the repair itself (the
  issue's target: within 5%);
- the same for a valid history: no event is built, so this is noise around 0.

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
from opentelemetry import trace
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

    # The floor under any span event that carries the contract's eight attributes: the
    # SDK's add_event alone, the attributes built beforehand (what no instrumentor can
    # take off the request path: the span may end right after the request).
    contract = {
        "toolpair.provider": "anthropic",
        "toolpair.model": "claude-sonnet-4-6",
        "toolpair.source": "library",
        "toolpair.mode": "repair",
        "toolpair.fix.kinds": ("synthetic_result",),
        "toolpair.fix.count": 1,
        "toolpair.rule.ids": ("anthropic.missing_result",),
        "toolpair.content_dropped": False,
    }

    def sdk_floor(event: object) -> None:
        trace.get_current_span().add_event("toolpair.repair", contract)

    def listen(callback: Callable[[Any], None]) -> Callable[[bool], None]:
        return lambda on: (events.subscribe if on else events.unsubscribe)(callback)

    print(
        "messages  repair (ms)  event built (us)  SDK span event alone (us)"
        "  instrumentor adds (us)  on vs off  valid on vs off"
    )
    for n in (20, 200, 2000):
        broken = wire("anthropic", n, defects=True)
        valid = wire("anthropic", n)
        assert toolpair.repair(broken, "anthropic").changed
        assert not toolpair.repair(valid, "anthropic").fixes

        def repair_broken(h: list[Any] = broken) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        def repair_valid(h: list[Any] = valid) -> None:
            with tracer.start_as_current_span("request"):
                toolpair.repair(h, "anthropic")

        # The repair itself: no span around it, nothing subscribed.
        base = statistics.median(
            _block(lambda h=broken: toolpair.repair(h, "anthropic")) for _ in range(51)
        )
        base_valid = statistics.median(
            _block(lambda h=valid: toolpair.repair(h, "anthropic")) for _ in range(51)
        )
        built = _added(repair_broken, repair_broken, listen(lambda event: None))
        floor = _added(repair_broken, repair_broken, listen(sdk_floor)) - built
        otel = _added(repair_broken, repair_broken, switch)
        noop = _added(repair_valid, repair_valid, switch) / base_valid
        print(
            f"{n:>8}  {base * 1000:>11.3f}  {built * 1e6:>16.1f}  {floor * 1e6:>25.1f}"
            f"  {otel * 1e6:>22.1f}  {otel / base:>+9.2%}  {noop:>+15.2%}"
        )


if __name__ == "__main__":
    main()
