"""Session files of each agent broken the way bad writers broke them, and written as
closed ones."""

from __future__ import annotations

import os
import time
from pathlib import Path


def aged(p: Path, data: bytes) -> Path:
    """``data`` written to ``p`` an hour ago, as a session no agent has open."""
    p.write_bytes(data)
    old = time.time() - 3600
    os.utime(p, (old, old))
    return p
