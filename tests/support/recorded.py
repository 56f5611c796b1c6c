"""Judging toolpair against the recorded exchanges in ``tests/recorded``.

The judging itself is `toolpair.corpus` (the same that ``toolpair corpus check`` runs on
any folder of cases); this module fixes the folder and caches the verdicts for
``test_recorded.py``, the summary line the core env prints, and
``tests/recorded/_disagreements.py``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from toolpair import corpus
from toolpair.corpus import Figures, Verdict, family, judge

CORPUS = Path(__file__).resolve().parent.parent / "recorded"

__all__ = ["CORPUS", "Figures", "Verdict", "cases", "family", "figures", "judge", "verdicts"]


def cases() -> list[tuple[str, dict[str, Any]]]:
    return corpus.read_cases(CORPUS)


@cache
def verdicts() -> tuple[Verdict, ...]:
    return corpus.judge_all(cases())


def figures(vs: tuple[Verdict, ...] | None = None) -> Figures:
    return corpus.figures(verdicts() if vs is None else vs)
