"""What every agent's on-disk session format gives the session commands.

A format reads a file as its agent rebuilds the history on resume, into the wire
messages the agent would send with the provenance of each one, and plans the smallest
edit its own format allows. The commands (check, repair, scan, map) are written once,
against this protocol: a new agent is one new module in this package and one line in
`FORMATS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolpair._model import ToolpairError, Violation


class SessionError(ToolpairError, ValueError):
    """A session file that cannot be read or safely edited; ``line`` names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


def runs_text(
    numbers: Sequence[int], show: Callable[[int, int], str] | None = None, limit: int = 6
) -> str:
    """Sorted line or message numbers as runs (``3-7, 12, 40-41``), each run shown by
    ``show(first, last)``, the first ``limit`` of them: where a report says what was not
    judged."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    show = show or (lambda a, b: str(a) if a == b else f"{a}-{b}")
    shown = ", ".join(show(a, b) for a, b in runs[:limit])
    return shown + (", ..." if len(runs) > limit else "")


@dataclass(slots=True)
class Loaded:
    """One session as its agent rebuilds it on resume, ready to judge."""

    #: The file read (for a folder given on the command line, the file inside it).
    path: str
    #: The format's name, as ``--format`` spells it: ``claude-code``, ``gemini-cli``.
    format: str
    #: The rule set it is judged with: ``anthropic``, ``gemini``, ``vertex``...
    provider: str
    #: The wire format of `messages` (a codec name: ``anthropic``, ``gemini``).
    wire: str
    #: The history as the next request after resume sends it, in that wire format. A
    #: call left unanswered at the end stays unanswered here; where the agent sends the
    #: user's next prompt after the history, the format appends a stand-in for it (and
    #: `where`/`lines` cover the stand-in too, with ``the next prompt`` / None), so that
    #: an unanswered last call is judged as the provider will judge it.
    messages: list[Any]
    #: Per message, where it comes from: ``line 12``, ``lines 3-7``, ``messages[4]``.
    where: list[str]
    #: Per message, the first file line it comes from (for ``FILE:LINE``), or None.
    lines: list[int | None]
    #: One line for the report: format, rules, model, agent version, extent.
    described: str
    #: The model the file names (the last one used), if any.
    model: str | None = None
    #: What was read and deliberately not judged (never sent on resume), for the report.
    skipped: str = ""
    #: Context a rule needs that the file states (``thought_signatures``...).
    context: dict[str, Any] = field(default_factory=dict)
    #: Whatever the format's own `plan` needs; the commands never look inside.
    state: Any = None
    #: Whether the last of `messages` is the stand-in for the next prompt (not shown in
    #: a map of the file).
    stand_in: bool = False
    #: The file line a violation points at, where a format can do better than the
    #: first line of the message (the line holding the id it names).
    locate: Callable[[Violation], int | None] | None = None

    def line_of(self, v: Violation) -> int | None:
        if self.locate is not None:
            return self.locate(v)
        return self.lines[v.index] if 0 <= v.index < len(self.lines) else None


@dataclass(slots=True)
class Plan:
    """A repair of one file: the whole new content and what it changes."""

    #: One line per change, for the report (``unrepaired: ...`` for what is left).
    changes: list[str]
    #: The complete new file content.
    data: bytes
    #: How many of `changes` are real edits.
    fixes: int


class SessionFormat(Protocol):
    """One agent's session files."""

    #: ``--format`` and ``scan --agent`` spell it so.
    name: str
    #: The agent, in words: ``Claude Code``.
    agent: str
    #: Told when a file looks open: how to close the agent first.
    close_hint: str
    #: The rule set and wire format `history` gives when the file names no host.
    provider: str
    wire: str

    def sniff(self, path: str) -> bool:
        """Whether ``path`` (a file or a folder) is one of this format's sessions,
        reading at most its first 64 KiB."""
        ...

    def target(self, path: str) -> str:
        """The file that holds the history (a folder given names the file inside)."""
        ...

    def load(self, data: bytes, path: str) -> Loaded:
        """Read the file's bytes as the agent does on resume; `SessionError` if not."""
        ...

    # A format may also define ``load_path(path) -> Loaded``: the same as `load`, reading
    # the file itself (streaming it, so that memory follows what is sent, not the size of
    # the file). check, scan and map use it where they need no bytes.

    def history(self, obj: Any) -> list[Any]:
        """The wire messages (in `Loaded.wire` format) of a file already parsed: the list
        of a JSONL file's line objects, or a JSON file's document. What
        ``toolpair.validate(obj, provider, format=<name>)`` judges; `InvalidHistory` if
        ``obj`` is not this format."""
        ...

    def plan(self, loaded: Loaded, data: bytes, model: str | None) -> Plan | None:
        """The smallest edit that makes the resumed history valid; None when there is
        nothing this format can repair."""
        ...

    def verify(self, before: Loaded, after: Loaded) -> str | None:
        """Why the repaired file is not safe to write (the agent would read it otherwise
        than planned), or None."""
        ...

    def default_roots(self) -> list[Path]:
        """Where ``scan`` looks when given no folder (scan walks those that exist, and
        names the candidates when none does)."""
        ...

    def session_files(self, root: Path) -> Iterator[Path]:
        """Every session under ``root``; never a backup toolpair wrote."""
        ...
