"""Agents' session files on disk, each read as its agent reads it on resume.

One module per agent's format, each exposing ``FORMAT`` (a `SessionFormat`); what they
share (the protocol, reading lines with their provenance, the safe write and backup)
lives beside them. The engine never imports this package: a format hands it plain wire
messages.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolpair.sessions._files import atomic_write, backup, written_by_toolpair
from toolpair.sessions._format import Loaded, Plan, SessionError, SessionFormat

#: Every format, by the name ``--format`` and ``scan --agent`` use, in the order
#: detection tries them.
_MODULES = {
    "claude-code": "toolpair.sessions.claude_code",
    "gemini-cli": "toolpair.sessions.gemini_cli",
    "codex": "toolpair.sessions.codex",
    "cline": "toolpair.sessions.cline",
}


def names() -> list[str]:
    return list(_MODULES)


def get_format(name: str) -> SessionFormat:
    """The format called ``name``; ValueError naming the known ones otherwise."""
    try:
        module = _MODULES[name]
    except KeyError:
        raise ValueError(f"no session format {name!r}; known: {', '.join(_MODULES)}") from None
    fmt: SessionFormat = importlib.import_module(module).FORMAT
    return fmt


def history(name: str, obj: Any) -> tuple[list[Any], str]:
    """The wire messages of an already parsed session file, and their wire format."""
    fmt = get_format(name)
    return fmt.history(obj), fmt.wire


def hint(head: list[Any]) -> tuple[str, str] | None:
    """The (agent, format) whose files a list of parsed objects looks like, if any: for
    an error that says which ``format=`` to pass."""
    for name in _MODULES:
        fmt = get_format(name)
        looks = getattr(fmt, "looks_like", None)
        if looks is not None and looks(head):
            return fmt.agent, fmt.name
    return None


def detect(path: str) -> SessionFormat | None:
    """The format whose sniff claims ``path`` (a file or a folder), or None."""
    for name in _MODULES:
        fmt = get_format(name)
        if fmt.sniff(path):
            return fmt
    return None


__all__ = [
    "Loaded",
    "Plan",
    "SessionError",
    "SessionFormat",
    "atomic_write",
    "backup",
    "detect",
    "get_format",
    "hint",
    "history",
    "names",
    "written_by_toolpair",
]
