"""Each folder here is one tox env's part: it is collected only where its env's
distributions are installed, so ``pytest tests`` collects the whole tree in any env (the
core's included) and says which folders it left out and why."""

from __future__ import annotations

import re
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
#: Folders whose tests run in another folder's env (tox.ini names both in one command).
SHARES_ENV = {"asgi": "proxy"}
#: Test tools every env has; not a reason to leave a folder out.
TOOLS = {"pytest", "hypothesis"}

_left_out: dict[str, list[str]] = {}


def _missing(reqs: Path) -> list[str]:
    out = []
    for line in reqs.read_text().splitlines():
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)", line)
        if m is None or m.group(1) in TOOLS:
            continue
        try:
            distribution(m.group(1))
        except PackageNotFoundError:
            out.append(m.group(1))
    return out


@cache
def missing(folder: str) -> list[str]:
    """What ``folder``'s env installs that is not installed here: nothing when one of its
    requirements files (the newest, the oldest, ...) is fully installed."""
    files = sorted(
        (HERE / SHARES_ENV.get(folder, folder)).glob("requirements*.txt"),
        key=lambda f: (f.name != "requirements.txt", f.name),
    )
    gaps = [_missing(f) for f in files]
    return [] if not gaps or [] in gaps else gaps[0]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.parent != HERE or not collection_path.is_dir():
        return None
    gone = missing(collection_path.name)
    if gone:
        _left_out[collection_path.name] = gone
        return True
    return None


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    # Said where the run asked for this folder as a whole (pytest also visits the
    # folders beside a path it was given).
    asked = [Path(config.invocation_params.dir, a.split("::")[0]).resolve() for a in config.args]
    if not any(HERE.is_relative_to(a) for a in asked):
        return
    for folder, gone in sorted(_left_out.items()):
        more = f" and {len(gone) - 2} more" if len(gone) > 2 else ""
        terminalreporter.write_line(
            f"tests/integrations/{folder}: not collected here, without {', '.join(gone[:2])}{more}"
        )
