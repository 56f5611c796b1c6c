"""toolpair's piece-by-piece repair path, forced on histories of any length."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
