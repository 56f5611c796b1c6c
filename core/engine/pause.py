"""Pause the cyclic garbage collector around the full path.

Decoding a long history allocates a few small objects per block, none of them in a
reference cycle. Each allocation burst triggers collections that walk the whole heap,
the caller's history included, so without a pause time per message grows with the
history's size. Pausing keeps repair linear. It is reference-counted so concurrent
repairs in several threads never re-enable the collector while one is still running,
and it leaves a collector the application disabled itself alone.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_we_disabled = False


@contextmanager
def paused() -> Iterator[None]:
    global _depth, _we_disabled
    with _lock:
        if _depth == 0:
            _we_disabled = gc.isenabled()
            if _we_disabled:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _we_disabled:
                gc.enable()
                _we_disabled = False
