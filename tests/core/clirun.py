"""Running the ``toolpair`` command in-process, for the session format tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolpair.cli import main

#: pytest's capsys fixture, as the CLI tests take it.
Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, *args: str | Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``toolpair ARGS``."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def stdout_of(capsys: Capsys, expect: int, *args: str | Path) -> str:
    """Stdout of ``toolpair ARGS``, which must exit with ``expect``."""
    code, out, err = run(capsys, *args)
    assert code == expect, err
    return out


def scanned(capsys: Capsys, agent: str) -> tuple[int, list[str]]:
    """``toolpair scan --agent AGENT --json`` of a tree with breaks: how many sessions it
    read, and the broken files, sorted."""
    report = json.loads(stdout_of(capsys, 1, "scan", "--agent", agent, "--json"))
    return report["scanned"], sorted(b["file"] for b in report["broken"])


def repaired_while_open(capsys: Capsys, session: Path) -> str:
    """Stderr of ``toolpair repair --in-place`` on a session just written to, as one
    still open in its agent is."""
    os.utime(session, None)
    code, _, err = run(capsys, "repair", session, "--in-place")
    assert code == 0
    return err


def at_home(monkeypatch: pytest.MonkeyPatch, home: Path, *unset: str) -> None:
    """A home folder of the test's own on every platform, with the agents' own folder
    variables in ``unset`` cleared, so a scan without a folder looks only there."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("APPDATA", str(home / "Roaming"))
    for var in unset:
        monkeypatch.delenv(var, raising=False)
