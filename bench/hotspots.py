"""cProfile hotspots of the slow paths, on the same 10k histories as bench/run.py.

    python bench/hotspots.py                 # every case, top 12 functions each
    python bench/hotspots.py --top 20 validate repair-noop repair-openai

For each case: the toolpair functions (and the builtins they call) sorted by cumulative
time, with their share of the case's total, their own (tottime) share and call count.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import histories as H

import toolpair

logging.getLogger("toolpair").addHandler(logging.NullHandler())
logging.getLogger("toolpair").propagate = False


def cases(n: int) -> dict[str, Callable[[], Any]]:
    valid = H.wire("anthropic", n)
    out: dict[str, Callable[[], Any]] = {
        "validate": lambda: toolpair.validate(valid, "anthropic"),
        "repair-noop": lambda: toolpair.repair(valid, "anthropic"),
    }
    for fmt in H.WIRE:
        broken = H.wire(fmt, n, defects=True)
        out[f"repair-{fmt}"] = lambda b=broken, f=fmt: toolpair.repair(b, f, format=f)
    return out


def _where(func: tuple[str, int, str]) -> str:
    path, line, name = func
    if path == "~":
        return name
    parts = path.replace(os.sep, "/").split("/")
    for anchor in ("toolpair", "core", "integrations"):
        if anchor in parts:
            parts = parts[parts.index(anchor) :]
            break
    return f"{'/'.join(parts[-2:])}:{line}({name})"


def hotspots(fn: Callable[[], Any], top: int, runs: int = 3) -> list[str]:
    fn()  # warm-up
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(runs):
        fn()
    prof.disable()
    stats = pstats.Stats(prof)
    entries = stats.stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, _, ct, _) in entries.values())
    rows = []
    for func, (_cc, nc, tt, ct, _callers) in entries.items():
        where = _where(func)
        if where.startswith(("<lambda>", "hotspots.py")) or "disable" in where:
            continue
        rows.append((ct, tt, nc // runs, where))
    rows.sort(reverse=True)
    lines = [f"  {'cum%':>6} {'own%':>6} {'calls/run':>10}  function"]
    for ct, tt, nc, where in rows[:top]:
        lines.append(f"  {100 * ct / total:6.1f} {100 * tt / total:6.1f} {nc:10d}  {where}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="validate, repair-noop, repair-<format>")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args(argv)
    available = cases(args.messages)
    for name in args.cases or list(available):
        print(f"## {name} ({args.messages} messages)")
        print("\n".join(hotspots(available[name], args.top)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
