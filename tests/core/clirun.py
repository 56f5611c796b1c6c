"""Running the ``toolpair`` command in-process, for the session format tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolpair.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``toolpair ARGS``."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err
