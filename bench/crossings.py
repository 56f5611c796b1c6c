"""How one ``repair()`` of a broken Anthropic body travels through toolpair's modules.

Traces every Python call inside the ``toolpair`` package during one repair of the
Anthropic demo body (a dangling call, an orphan result, results after text) and counts
the distinct call edges between two different modules: how many there are (crossings),
how many go from a lower layer to a higher one (climbs back up), and how often each
module is entered. Distinct edges, not calls: a loop over blocks is one edge.

    python bench/crossings.py
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import toolpair
from toolpair.demo import load_demo

#: The layers, lowest 0 (old flat names and new package names alike, so that one
#: script measures the tree before and after the regrouping).
RANK = {
    "toolpair._model": 0,
    "toolpair._view": 0,
    "toolpair.formats": 1,
    "toolpair.providers": 2,
    "toolpair.engine": 3,
    "toolpair._fast": 3,
    "toolpair._gc": 3,
    "toolpair._coverage": 3,
    "toolpair._repair": 3,
    "toolpair._chunked": 3,
    "toolpair._api": 4,
    "toolpair.compact": 5,
    "toolpair._compact": 5,
    "toolpair.sessions": 6,
    "toolpair.claude_code": 6,
    "toolpair.cli": 7,
    "toolpair": 8,
}


def rank(module: str) -> int:
    best = max((p for p in RANK if module == p or module.startswith(p + ".")), key=len)
    return RANK[best]


def trace(fn: Any) -> tuple[set[tuple[str, str, str]], Any]:
    edges: set[tuple[str, str, str]] = set()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        back = frame.f_back
        caller = back.f_globals.get("__name__", "") if back is not None else ""
        if (
            callee.startswith("toolpair")
            and caller.startswith("toolpair")
            and callee != caller
            and not frame.f_code.co_name.startswith("<")
        ):
            edges.add((caller, callee, frame.f_code.co_name))

    sys.setprofile(prof)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return edges, result


def main() -> None:
    body = load_demo("anthropic")
    toolpair.repair(body, "anthropic")  # imports and caches outside the trace
    edges, result = trace(lambda: toolpair.repair(body, "anthropic"))
    up = [e for e in edges if rank(e[0]) < rank(e[1])]
    entered = Counter(callee for _caller, callee, _fn in edges)
    print(f"fixes: {len(result.fixes)}")
    pairs = {(a, b) for a, b, _fn in edges}
    print(f"crossings (distinct cross-module call edges): {len(edges)}")
    print(f"module pairs crossed (distinct caller module -> callee module): {len(pairs)}")
    print(f"climbs back up (lower layer calling a higher one): {len(up)}")
    for caller, callee, fn in sorted(up):
        print(f"  up: {caller} -> {callee}.{fn}")
    print("entered: " + ", ".join(f"{m} {n}" for m, n in entered.most_common()))
    for caller, callee, fn in sorted(edges):
        print(f"  {caller} -> {callee}.{fn}")


if __name__ == "__main__":
    main()
