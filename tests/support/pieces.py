"""toolpair's piece-by-piece repair path, forced on histories of any length."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from toolpair.engine import chunked


@contextmanager
def pieces(run: int) -> Iterator[None]:
    """The piece path for any length, ``run`` exchanges checked at a time (short enough
    runs that a failing one is split)."""
    saved = chunked.MIN_MESSAGES, chunked._RUN
    chunked.MIN_MESSAGES, chunked._RUN = 0, run
    try:
        yield
    finally:
        chunked.MIN_MESSAGES, chunked._RUN = saved


@contextmanager
def full_path() -> Iterator[None]:
    """Never the piece path, however long the history."""
    saved = chunked.MIN_MESSAGES
    chunked.MIN_MESSAGES = 10**9
    try:
        yield
    finally:
        chunked.MIN_MESSAGES = saved


def answered_in_pieces(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """From now on, for each repair that tries the piece path, whether the pieces
    answered (so a comparison of the two paths is known not to be vacuous)."""
    answered: list[bool] = []
    real = chunked.repair

    def counted(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        answered.append(out is not None)
        return out

    monkeypatch.setattr(chunked, "repair", counted)
    return answered
