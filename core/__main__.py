"""``python -m toolpair``: the same command as the ``toolpair`` script."""

from __future__ import annotations

import sys

from toolpair.cli import main

if __name__ == "__main__":
    sys.exit(main())
