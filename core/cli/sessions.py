"""The session commands, written once for every agent's format (`toolpair.sessions`):
``check`` and ``repair`` of a session file, and ``scan`` of an agent's session folders.

`check` and `repair` come here when `session_format` claims the file (``--format`` names
a session format, or one sniffs the file as its own).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolpair import _api, events, sessions
from toolpair._model import Fix, InvalidHistory, Message, Violation
from toolpair.cli.reading import ReadError, checked_model, err
from toolpair.cli.render import plural, render_turns, violation_item, violation_line
from toolpair.sessions import Loaded, Plan, SessionError, SessionFormat, atomic_write, backup

#: A session modified this recently may still be open in its agent.
OPEN_SECONDS = 120.0
#: Scan uses worker processes from this many files on.
PARALLEL_FROM = 64


def session_format(name: str, fmt: str | None, *, raw: bool = False) -> SessionFormat | None:
    """The session format ``name`` is read in: the one ``--format`` names, or the one
    whose sniff claims the file; None for anything else (a message list, a body).
    ``raw``: the format's view of what the file holds (``--raw``), where it has one."""
    if fmt is not None:
        found = sessions.get_format(fmt) if fmt in sessions.names() else None
    elif name == "-":
        found = None
    else:
        found = sessions.detect(name)
    if raw:
        view = getattr(found, "raw_view", None)
        if view is None:
            raise ReadError(name, "--raw is for Codex rollouts (--format codex)")
        found = view()
    return found


def load_file(fmt: SessionFormat, path: str) -> Loaded:
    """The session at ``path``, read by the format itself where it streams its files."""
    load_path = getattr(fmt, "load_path", None)
    if load_path is not None:
        loaded: Loaded = load_path(path)
        return loaded
    with open(path, "rb") as f:
        return fmt.load(f.read(), path)


def read_session(fmt: SessionFormat, name: str, *, need_bytes: bool = True) -> tuple[Loaded, bytes]:
    """The session ``name`` as its agent loads it, and the file's bytes (empty where
    ``need_bytes`` is False and the format reads the file itself)."""
    if not need_bytes and getattr(fmt, "load_path", None) is not None and name != "-":
        target = fmt.target(name)
        try:
            return load_file(fmt, target), b""
        except OSError as e:
            raise ReadError(name, e.strerror or str(e)) from None
        except (SessionError, InvalidHistory) as e:
            raise ReadError(target, f"not a {fmt.agent} session toolpair can read: {e}") from None
    if name == "-":
        data = sys.stdin.buffer.read()
        target = name
    else:
        target = fmt.target(name)
        try:
            data = Path(target).read_bytes()
        except OSError as e:
            raise ReadError(name, e.strerror or str(e)) from None
    try:
        return fmt.load(data, target), data
    except (SessionError, InvalidHistory) as e:
        raise ReadError(target, f"not a {fmt.agent} session toolpair can read: {e}") from None


def validate(loaded: Loaded, model: str | None) -> list[Violation]:
    """What the provider would reject of the history the agent sends on resume."""
    if not loaded.messages:
        return []
    return _api.validate(
        loaded.messages,
        loaded.provider,
        model=model or loaded.model,
        format=loaded.wire,
        **loaded.context,
    )


def neutral(loaded: Loaded) -> list[Message]:
    """The messages of the file as the engine sees them (without the next-prompt stand-in,
    which is not in the file)."""
    msgs = loaded.messages[:-1] if loaded.stand_in else loaded.messages
    if not msgs:
        return []
    return _api.parse(msgs, loaded.provider, loaded.wire, {}).messages


def described(loaded: Loaded, model: str | None) -> str:
    if model and model != loaded.model:
        return f"{loaded.described}, judged as model {model}"
    return loaded.described


def session_turns(loaded: Loaded, marked: set[int], context: int | None) -> list[str]:
    """The demo's turn strip, each turn with where in the file it comes from."""
    out: list[str] = []
    for row in render_turns(neutral(loaded), marked, context):
        stripped = row[2:]
        if stripped.startswith("[") and "]" in stripped:
            i = int(stripped[1 : stripped.index("]")])
            if 0 <= i < len(loaded.where):
                row = f"{row}  ({loaded.where[i]})"
        out.append(row)
    return out


#: The API each rule set's requests go to, for the message that refuses another.
_APIS = {
    "anthropic": "the Anthropic Messages API",
    "gemini": "the Gemini API",
    "vertex": "the Vertex AI Gemini API",
}


def _provider_ok(fmt: SessionFormat, name: str, args: argparse.Namespace) -> None:
    provider = getattr(args, "provider", None)
    allowed = getattr(fmt, "providers", (fmt.provider,))
    if provider is not None and provider not in allowed:
        raise ReadError(
            name,
            f"a {fmt.agent} session is sent with {_APIS.get(fmt.provider, fmt.provider)}; "
            f"it is judged with the {' or '.join(allowed)} rules, not {provider}",
        )


def _nothing(loaded: Loaded) -> str:
    return "nothing judged: no message the agent would send on resume" + (
        f" ({loaded.skipped})" if loaded.skipped else ""
    )


def check_file(
    fmt: SessionFormat, name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]
) -> int:
    """Check one session file; return its number of violations."""
    _provider_ok(fmt, name, args)
    loaded, _data = read_session(fmt, name, need_bytes=False)
    if not loaded.messages:
        raise ReadError(name, _nothing(loaded))
    model = checked_model(loaded.provider, args.model, loaded.model)
    try:
        violations = validate(loaded, model)
    except InvalidHistory as e:
        raise ReadError(name, f"not a history toolpair can read: {e}") from None
    for v in violations:
        line = loaded.line_of(v)
        if args.json:
            out_json.append(
                violation_item(
                    v,
                    file=name,
                    line=line,
                    provider=loaded.provider,
                    format=loaded.format,
                    model=model or loaded.model,
                )
            )
            continue
        loc = f"{name}:{line}" if line else name
        print(violation_line(f"{loc}: messages.{v.index}", v))
        for row in session_turns(loaded, {v.index}, 2):
            print(f"    {row}")
    if not args.json:
        count = (
            "valid"
            if not violations
            else f"{len(violations)} violation{'s' if len(violations) != 1 else ''}"
        )
        print(f"{name}: {count} ({described(loaded, model)})")
        if loaded.skipped:
            print(f"{name}: not judged (never sent): {loaded.skipped}")
    return len(violations)


# -- repair --------------------------------------------------------------------------


def _looks_open(fmt: SessionFormat, path: Path, st: os.stat_result) -> str | None:
    age = time.time() - st.st_mtime
    if age < OPEN_SECONDS:
        # Said after the repair is written: if the agent still holds the session, it may
        # write its own copy over the repair, so it is closed before the next resume.
        return (
            f"{path} was written {age:.0f}s ago: the session may still be open; if it is, "
            f"{fmt.close_hint}, then check it again before you resume"
        )
    return None


def repair(fmt: SessionFormat, args: argparse.Namespace) -> int:
    name: str = args.file
    if name == "-":
        err(f"a {fmt.name} session is repaired from a file, not stdin")
        return 2
    _provider_ok(fmt, name, args)
    path = Path(fmt.target(name))
    try:
        st = os.stat(path)
    except OSError as e:
        raise ReadError(name, e.strerror or str(e)) from None
    started = events.clock()
    loaded, data = read_session(fmt, name)
    if not loaded.messages:
        raise ReadError(name, _nothing(loaded))
    model = checked_model(loaded.provider, args.model, loaded.model)
    before = validate(loaded, model)
    plan = fmt.plan(loaded, data, model) if before else None
    if plan is None:
        left = len(before)
        msg = "nothing to repair" if not left else "nothing toolpair can repair"
        print(f"{name}: {msg}; not written", file=sys.stderr)
        for v in before:
            print(f"  {violation_line(f'messages.{v.index}', v)}", file=sys.stderr)
        return 1 if left else 0
    try:
        after_loaded = fmt.load(plan.data, str(path))
    except (SessionError, InvalidHistory) as e:
        err(f"{name}: refusing to write: the repaired file would not read back ({e})")
        return 2
    problem = fmt.verify(loaded, after_loaded)
    if problem:
        err(f"{name}: refusing to write: {problem}")
        return 2
    after = validate(after_loaded, model)
    print(f"{name}: {described(loaded, model)}", file=sys.stderr)
    for c in plan.changes:
        print(f"  {c}", file=sys.stderr)
    summary = f"{plan.fixes} fix{'es' if plan.fixes != 1 else ''}"
    if after:
        summary += f", {len(after)} violation{'s' if len(after) != 1 else ''} left"
        for v in after:
            print(f"  left: {violation_line(f'messages.{v.index}', v)}", file=sys.stderr)
        if args.in_place and not getattr(args, "allow_partial", False):
            # The session file is what the next resume loads: one still refused is not
            # worth overwriting unless the user says so.
            print(
                f"{name}: {summary}; not written: the repaired session would still fail "
                "(write it anyway with --allow-partial, or to another file with -o OUT)",
                file=sys.stderr,
            )
            return 1
    try:
        if args.in_place:
            warn = _looks_open(fmt, path, st)
            if warn:
                print(f"toolpair: warning: {warn}", file=sys.stderr)
            now = os.stat(path)
            if (now.st_size, now.st_mtime_ns, now.st_ino) != (
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            ) or path.read_bytes() != data:
                err(
                    f"{name} changed while it was read (is the session open?); nothing "
                    "written: close it and run again"
                )
                return 2
            kept = backup(path)
            atomic_write(path, [plan.data])
            print(f"{name}: {summary}; written in place, original kept as {kept}", file=sys.stderr)
        elif args.output and args.output != "-":
            atomic_write(Path(args.output), [plan.data], mode_from=path)
            print(f"{name}: {summary}; written to {args.output}", file=sys.stderr)
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(plan.data)
            sys.stdout.buffer.flush()
            print(f"{name}: {summary}", file=sys.stderr)
    except OSError as e:
        err(f"cannot write: {e}")
        return 2
    _report(fmt, loaded, model, plan, before, after, started)
    return 1 if after else 0


#: Words in a session repair's change lines by which a real result or block left it.
_DROPPED_WORDS = ("dropped", "left out")


def _report(
    fmt: SessionFormat,
    loaded: Loaded,
    model: str | None,
    plan: Plan,
    before: list[Violation],
    after: list[Violation],
    started: float,
) -> None:
    """The session repair's one event (source ``session``): its edits, the rules they
    fixed, what is left unrepaired."""
    # A session format's edits are lines of text, not `Fix` objects: each is one
    # ``session_edit``, located by the violations it repaired.
    fixed = {(v.code, v.index) for v in after}
    repaired = [v for v in before if (v.code, v.index) not in fixed]
    fixes = [Fix("session_edit", repaired[0].index if repaired else 0)] * plan.fixes
    fixes += [Fix("unrepaired", v.index, v.ids, f"[{v.code}] {v.message}") for v in after]
    with events.scope("session", model=model):
        events.report(
            fixes,
            loaded.provider,
            fmt.name,
            events.clock() - started,
            model=model,
            violations=repaired,
            content_dropped=any(w in c for c in plan.changes for w in _DROPPED_WORDS),
        )


# -- scan ----------------------------------------------------------------------------


@dataclass(slots=True)
class ScanResult:
    path: str
    mtime: float
    size: int
    violations: int = 0
    first: str = ""
    index: int | None = None
    line: int | None = None
    error: str = ""
    judged: bool = True
    format: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "format": self.format,
            "mtime": self.mtime,
            "size": self.size,
            "violations": self.violations,
            "first": self.first,
            "index": self.index,
            "line": self.line,
            "error": self.error,
        }


def scan_one(job: tuple[str, str]) -> ScanResult:
    """Judge one session file (a worker process's job: everything it returns is small)."""
    fmt_name, path = job
    fmt = sessions.get_format(fmt_name)
    try:
        st = os.stat(path)
    except OSError as e:
        return ScanResult(path, 0.0, 0, error=e.strerror or str(e), format=fmt_name)
    res = ScanResult(path, st.st_mtime, st.st_size, format=fmt_name)
    try:
        loaded = load_file(fmt, path)
        if not loaded.messages:
            res.judged = False
            return res
        vs = validate(loaded, None)
    except (OSError, ValueError, RecursionError) as e:
        res.error = str(e)
        return res
    res.violations = len(vs)
    if vs:
        v = vs[0]
        res.first, res.index, res.line = v.message, v.index, loaded.line_of(v)
    return res


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total: int, total_bytes: int, stream: IO[str], on: bool) -> None:
        self.total, self.total_bytes, self.stream, self.on = total, total_bytes, stream, on
        self.done = 0
        self.bytes = 0
        self.start = time.perf_counter()
        self._last = 0.0

    def step(self, size: int) -> None:
        self.done += 1
        self.bytes += size
        now = time.perf_counter()
        if self.on and (now - self._last > 0.1 or self.done == self.total):
            self._last = now
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            rate = self.done / max(now - self.start, 1e-9)
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"sessions, {self.bytes / 1e6:.1f}/{self.total_bytes / 1e6:.1f} MB, "
                f"{rate:.0f}/s "
            )
            self.stream.flush()

    def close(self) -> None:
        if self.on:
            self.stream.write("\n")
            self.stream.flush()


def run_scan(
    todo: list[tuple[str, str]], jobs: int, step: Callable[[int], None]
) -> list[ScanResult]:
    """Judge each (format name, file) job, in worker processes from `PARALLEL_FROM` on."""
    results: list[ScanResult] = []
    if jobs > 1 and len(todo) >= PARALLEL_FROM:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn" if sys.platform == "win32" else "fork")
        with ctx.Pool(jobs) as pool:
            for r in pool.imap_unordered(scan_one, todo, chunksize=8):
                results.append(r)
                step(r.size)
        return results
    for job in todo:
        r = scan_one(job)
        results.append(r)
        step(r.size)
    return results


def _shown_roots(roots: list[Path], limit: int = 3) -> str:
    shown = ", ".join(str(r) for r in roots[:limit])
    return shown + (f" and {len(roots) - limit} more" if len(roots) > limit else "")


def find_sessions(
    formats: list[SessionFormat], roots: dict[str, list[Path]]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Every session under each format's roots as (format name, file), each file judged
    by the format whose sniff claims it (the first, in detection order); and the files
    some format lists that none claims (never judged, so never called fine)."""
    claimed: dict[str, str] = {}
    unclaimed: dict[str, None] = {}
    for fmt in formats:
        for root in roots.get(fmt.name, []):
            for p in fmt.session_files(root):
                target = fmt.target(str(p))
                if target in claimed:
                    continue
                if fmt.sniff(str(p)):
                    claimed[target] = fmt.name
                    unclaimed.pop(target, None)
                else:
                    unclaimed[target] = None
    unknown = []
    for target in unclaimed:
        if target in claimed:
            continue
        other = sessions.detect(target)
        if other is not None:
            claimed[target] = other.name
        else:
            unknown.append(target)
    return sorted((f, t) for t, f in claimed.items()), sorted(unknown)


def cmd_scan(args: argparse.Namespace) -> int:
    every = args.agent is None
    formats = (
        [sessions.get_format(n) for n in sessions.names()]
        if every
        else [sessions.get_format(args.agent)]
    )
    missing: list[Path] = []
    if args.dir:
        root = Path(args.dir)
        if not root.is_dir():
            err(f"{root}: not a directory")
            return 2
        roots = {f.name: [root] for f in formats}
        looked = [root]
    else:
        roots = {}
        looked = []
        for f in formats:
            candidates = f.default_roots()
            found = [r for r in candidates if r.is_dir()]
            roots[f.name] = found
            looked += [r for r in found if r not in looked]
            missing += [r for r in candidates if not r.is_dir() and r not in missing]
        if not looked:
            who = "sessions of any agent" if every else f"{formats[0].agent} sessions"
            where = f" (looked in {_shown_roots(missing)})" if missing else ""
            err(f"no {who} here{where}; name a DIR")
            return 2
    unknown: list[str] = []
    if every:
        todo, unknown = find_sessions(formats, roots)
    else:
        fmt = formats[0]
        files = sorted({p for r in roots[fmt.name] for p in fmt.session_files(r)})
        todo = [(fmt.name, fmt.target(str(p))) for p in files]
    sizes = 0
    for _name, target in todo:
        with contextlib.suppress(OSError):
            sizes += Path(target).stat().st_size
    jobs = args.jobs or min(os.cpu_count() or 1, 8)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = Progress(len(todo), sizes, sys.stderr, show and len(todo) > 0)
    t0 = time.perf_counter()
    results = run_scan(todo, jobs, bar.step)
    bar.close()
    elapsed = time.perf_counter() - t0
    broken = sorted((r for r in results if r.violations), key=lambda r: -r.mtime)
    errors = sorted((r for r in results if r.error), key=lambda r: -r.mtime)
    unjudged = [r for r in results if not r.judged]
    shown_root = str(looked[0]) if len(looked) == 1 else ", ".join(map(str, looked))
    agents = {f.name: f.agent for f in formats}
    if args.json:
        report: dict[str, Any] = {
            "dir": shown_root,
            "agent": "all" if every else formats[0].name,
            "scanned": len(results),
            "bytes": sizes,
            "seconds": round(elapsed, 3),
            "broken": [r.as_json() for r in broken],
            "unreadable": [r.as_json() for r in errors],
            "not_judged": len(unjudged),
        }
        if every:
            report["dirs"] = [str(r) for r in looked]
            report["not_found"] = [str(r) for r in missing]
            report["not_recognised"] = unknown
            report["by_agent"] = {n: sum(1 for r in results if r.format == n) for n in agents}
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for r in broken:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.mtime))
            loc = f"{r.path}:{r.line}" if r.line else r.path
            tag = f" ({agents[r.format]})" if every else ""
            print(
                f"{loc}{tag}: {r.violations} violation{'s' if r.violations != 1 else ''} "
                f"[{when}]: messages.{r.index}: {r.first}"
            )
        for r in errors:
            print(f"{r.path}: unreadable: {r.error}")
        for u in unknown:
            print(f"{u}: not judged: not a session of any agent toolpair knows")
        if every and not args.dir:
            print(f"looked in: {', '.join(map(str, looked))}")
            if missing:
                print(f"not found: {_shown_roots(missing, 6)}")
        counts = ""
        if every:
            per = [f"{sum(1 for r in results if r.format == n)} {a}" for n, a in agents.items()]
            counts = f" ({', '.join(per)})"
        print(
            f"{shown_root}: {plural(len(results), 'session')}{counts} ({sizes / 1e6:.1f} MB) in "
            f"{elapsed:.1f}s: {len(broken)} broken, {len(errors)} unreadable, "
            f"{len(unjudged)} with nothing to judge"
            + (f", {len(unknown)} not recognised" if unknown else "")
            + ("; fix one with: toolpair repair FILE --in-place" if broken else "")
        )
    return 1 if broken else (2 if errors else 0)


def add_commands(sub: Any) -> None:
    s = sub.add_parser(
        "scan",
        help="find the agent sessions that would fail to resume",
        description="Check every agent session under a folder and list the broken ones, "
        "newest first; without --agent each file is judged in the format it is in "
        "(Claude Code, Gemini CLI, Codex CLI, the Cline family). Without DIR, each agent's "
        "own folders: for claude-code $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects; "
        "for gemini-cli $GEMINI_CLI_HOME/.gemini/tmp or ~/.gemini/tmp; for codex "
        "$CODEX_HOME/sessions and archived_sessions, or under ~/.codex; for cline every "
        "editor's storage of the Cline family. Exit 0 none broken, 1 some broken, "
        "2 unreadable.",
    )
    s.add_argument("dir", nargs="?", metavar="DIR", help="the directory to scan")
    s.add_argument(
        "--agent",
        choices=sessions.names(),
        default=None,
        help="only this agent's sessions (default: every agent's, each file in its own format)",
    )
    s.add_argument("--json", action="store_true", help="print a JSON report")
    s.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes")
    s.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    s.set_defaults(func=cmd_scan)
