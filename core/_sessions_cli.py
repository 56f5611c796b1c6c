"""The session commands: ``check`` and ``repair`` of Claude Code transcripts, ``scan``
of a projects directory, and ``map`` (a strip of every turn, or an HTML page).

Wired into `toolpair.cli` by `add_commands` and the ``wants`` test in check/repair.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolpair import _api, claude_code
from toolpair._model import Fix, InvalidHistory, Message, Violation
from toolpair.claude_code import Session

#: A session modified this recently may still be open in Claude Code.
OPEN_SECONDS = 120.0
#: Scan uses worker processes from this many files on.
PARALLEL_FROM = 64


def wants(name: str, fmt: str | None) -> bool:
    """Whether ``name`` is read as a Claude Code transcript."""
    if fmt == "claude-code":
        return True
    return fmt is None and name != "-" and claude_code.sniff_file(name)


def _cli() -> Any:
    from toolpair import cli

    return cli


def _read(name: str) -> Session:
    cli = _cli()
    if name == "-":
        return claude_code.read_session(sys.stdin.buffer)
    try:
        with open(name, "rb") as f:
            return claude_code.read_session(f)
    except OSError as e:
        raise cli.ReadError(name, e.strerror or str(e)) from None


def _neutral(session: Session) -> list[Message]:
    msgs = session.api_messages()
    if not msgs:
        return []
    return _api.parse(msgs, "anthropic", "anthropic", {}).messages


def _lines_of(session: Session, i: int) -> str:
    if not 0 <= i < len(session.messages):
        return ""
    ls = [e.line for e in session.messages[i].entries]
    return f"line {ls[0]}" if len(ls) == 1 else f"lines {ls[0]}-{ls[-1]}"


def session_turns(session: Session, marked: set[int], context: int | None) -> list[str]:
    """The demo's turn strip, each turn with the file lines it was merged from."""
    cli = _cli()
    neutral = _neutral(session)
    rows = cli.render_turns(neutral, marked, context)
    out: list[str] = []
    for row in rows:
        stripped = row[2:]
        if stripped.startswith("[") and "]" in stripped:
            i = int(stripped[1 : stripped.index("]")])
            row = f"{row}  ({_lines_of(session, i)})"
        out.append(row)
    return out


def _describe(session: Session, model: str | None) -> str:
    t = session.transcript
    parts = ["claude-code format", "anthropic rules"]
    m = model or session.model
    if m:
        parts.append(f"model {m}")
    if t.version:
        parts.append(f"written by {t.version}")
    if session.sent:
        parts.append(
            f"{len(session.messages)} API messages from lines "
            f"{session.sent[0].line}-{session.sent[-1].line}"
        )
    if session.boundary is not None:
        parts.append(f"last compaction at line {session.boundary.line}")
    if session.recovered:
        parts.append(f"{len(session.recovered)} parallel lines re-attached")
    return ", ".join(parts)


def _ranges(lines: list[int], limit: int = 6) -> str:
    """``3-7, 12, 40-41`` for sorted line numbers, the first ``limit`` runs."""
    runs: list[tuple[int, int]] = []
    for n in lines:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return shown + (", ..." if len(runs) > limit else "")


def _skipped_text(session: Session) -> str:
    sk = session.skipped()
    where = {
        "lines before the last compaction": [e.line for e in session.before_boundary],
        "dead-branch messages": [
            e.line for e in session.dead if e.type in claude_code.MESSAGE_TYPES
        ],
        "sidechain lines (their own chains)": [e.line for e in session.sidechain],
    }
    parts = []
    for what, n in sk.items():
        lines = where.get(what)
        parts.append(f"{n} {what}" + (f" (lines {_ranges(lines)})" if lines else ""))
    return "; ".join(parts)


def _provider_ok(name: str, args: argparse.Namespace) -> None:
    provider = getattr(args, "provider", None)
    if provider not in (None, "anthropic"):
        raise _cli().ReadError(
            name,
            f"a Claude Code session is sent with the Anthropic Messages API; it is judged "
            f"with the anthropic rules, not {provider}",
        )


def check_file(name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]) -> int:
    """Check one session file; return its number of violations."""
    cli = _cli()
    _provider_ok(name, args)
    session = _read(name)
    if not session.messages:
        raise cli.ReadError(
            name,
            "nothing judged: no user or assistant line on the main chain"
            + (f" ({_skipped_text(session)})" if session.skipped() else ""),
        )
    try:
        violations = session.validate(model=args.model)
    except InvalidHistory as e:
        raise cli.ReadError(name, f"not a history toolpair can read: {e}") from None
    for v in violations:
        line = session.line_of(v)
        if args.json:
            out_json.append(
                cli.violation_item(
                    v,
                    file=name,
                    line=line,
                    provider="anthropic",
                    format="claude-code",
                    model=args.model or session.model,
                )
            )
            continue
        loc = f"{name}:{line}" if line else name
        print(cli._violation_line(f"{loc}: messages.{v.index}", v))
        for row in session_turns(session, {v.index}, 2):
            print(f"    {row}")
    if not args.json:
        count = (
            "valid"
            if not violations
            else f"{len(violations)} violation{'s' if len(violations) != 1 else ''}"
        )
        print(f"{name}: {count} ({_describe(session, args.model)})")
        if session.skipped():
            print(f"{name}: not judged (never sent): {_skipped_text(session)}")
    return len(violations)


# -- repair --------------------------------------------------------------------------


def _looks_open(path: Path, st: os.stat_result) -> str | None:
    age = time.time() - st.st_mtime
    if age < OPEN_SECONDS:
        return (
            f"{path} was written {age:.0f}s ago: the session may still be open; quit "
            "Claude Code (it appends to the file on exit) and run this again from a shell"
        )
    return None


def repair(args: argparse.Namespace) -> int:
    cli = _cli()
    name: str = args.file
    if name == "-":
        cli._err("a claude-code transcript is repaired from a file, not stdin")
        return 2
    _provider_ok(name, args)
    path = Path(name)
    try:
        st = os.stat(path)
        data = path.read_bytes()
    except OSError as e:
        raise cli.ReadError(name, e.strerror or str(e)) from None
    raw = data.splitlines(keepends=True)
    session = claude_code.build_session(claude_code.read_transcript(raw))
    if not session.messages:
        raise cli.ReadError(name, "nothing judged: no user or assistant line on the main chain")
    before = session.validate(model=args.model)
    plan = claude_code.plan_repair(session, raw)
    if not plan:
        left = len(before)
        msg = "nothing to repair" if not left else "nothing toolpair can repair"
        print(f"{name}: {msg}; not written", file=sys.stderr)
        for v in before:
            print(f"  {cli._violation_line(f'messages.{v.index}', v)}", file=sys.stderr)
        return 1 if left else 0
    new = b"".join(claude_code.apply_plan(raw, plan))
    after_t = claude_code.read_transcript(new.splitlines(keepends=True))
    after_s = claude_code.build_session(after_t)
    problem = _verify(session, after_s, plan)
    if problem:
        cli._err(f"{name}: refusing to write: {problem}")
        return 2
    after = after_s.validate(model=args.model)
    print(f"{name}: {_describe(session, args.model)}", file=sys.stderr)
    for c in plan.changes:
        print(f"  {c}", file=sys.stderr)
    nfix = sum(1 for c in plan.changes if c.kind != "unrepaired")
    summary = f"{nfix} fix{'es' if nfix != 1 else ''}"
    if after:
        summary += f", {len(after)} violation{'s' if len(after) != 1 else ''} left"
        for v in after:
            print(f"  left: {cli._violation_line(f'messages.{v.index}', v)}", file=sys.stderr)
        if args.in_place and not getattr(args, "allow_partial", False):
            # The session file is what the next --resume loads: one still refused is
            # not worth overwriting unless the user says so.
            print(
                f"{name}: {summary}; not written: the repaired session would still fail "
                "(write it anyway with --allow-partial, or to another file with -o OUT)",
                file=sys.stderr,
            )
            return 1
    try:
        if args.in_place:
            warn = _looks_open(path, st)
            if warn:
                print(f"toolpair: warning: {warn}", file=sys.stderr)
            now = os.stat(path)
            if (now.st_size, now.st_mtime_ns, now.st_ino) != (
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            ) or path.read_bytes() != data:
                cli._err(
                    f"{name} changed while it was read (is the session open?); nothing "
                    "written: close it and run again"
                )
                return 2
            backup = cli._backup(path)
            cli.atomic_write(path, [new])
            print(
                f"{name}: {summary}; written in place, original kept as {backup}", file=sys.stderr
            )
        elif args.output and args.output != "-":
            cli.atomic_write(Path(args.output), [new], mode_from=path)
            print(f"{name}: {summary}; written to {args.output}", file=sys.stderr)
        else:
            cli._write_stdout([new])
            print(f"{name}: {summary}", file=sys.stderr)
    except OSError as e:
        cli._err(f"cannot write: {e}")
        return 2
    return 1 if after else 0


def _verify(before: Session, after: Session, plan: claude_code.Plan) -> str | None:
    """Why the repaired file is not safe to write, or None."""
    if after.leaf is None or after.leaf.uuid != plan.leaf:
        got = after.leaf.uuid if after.leaf else None
        return f"the leaf would move (expected {plan.leaf}, got {got})"
    new_problems = claude_code.graph_problems(after.transcript) - claude_code.graph_problems(
        before.transcript
    )
    if new_problems:
        return "; ".join(sorted(new_problems))
    if after.cycle:
        return "the rebuilt chain has a cycle"
    return None


# -- scan ----------------------------------------------------------------------------


def default_projects_dir() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def session_files(root: Path) -> Iterator[Path]:
    for d, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".jsonl"):
                yield Path(d) / f


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

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "mtime": self.mtime,
            "size": self.size,
            "violations": self.violations,
            "first": self.first,
            "index": self.index,
            "line": self.line,
            "error": self.error,
        }


def scan_one(path: str) -> ScanResult:
    """Judge one session file (a worker process's job: everything it returns is small)."""
    try:
        st = os.stat(path)
    except OSError as e:
        return ScanResult(path, 0.0, 0, error=e.strerror or str(e))
    res = ScanResult(path, st.st_mtime, st.st_size)
    try:
        with open(path, "rb") as f:
            session = claude_code.read_session(f)
        if not session.messages:
            res.judged = False
            return res
        vs = session.validate()
    except (OSError, ValueError, RecursionError) as e:
        res.error = str(e)
        return res
    res.violations = len(vs)
    if vs:
        v: Violation = vs[0]
        res.first, res.index, res.line = v.message, v.index, session.line_of(v)
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


def _run_scan(files: list[Path], jobs: int, step: Callable[[int], None]) -> list[ScanResult]:
    names = [str(p) for p in files]
    results: list[ScanResult] = []
    if jobs > 1 and len(names) >= PARALLEL_FROM:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn" if sys.platform == "win32" else "fork")
        with ctx.Pool(jobs) as pool:
            for r in pool.imap_unordered(scan_one, names, chunksize=8):
                results.append(r)
                step(r.size)
        return results
    for n in names:
        r = scan_one(n)
        results.append(r)
        step(r.size)
    return results


def cmd_scan(args: argparse.Namespace) -> int:
    cli = _cli()
    root = Path(args.dir) if args.dir else default_projects_dir()
    if not root.is_dir():
        cli._err(f"{root}: not a directory")
        return 2
    files = sorted(session_files(root))
    sizes = 0
    for p in files:
        with contextlib.suppress(OSError):
            sizes += p.stat().st_size
    jobs = args.jobs or min(os.cpu_count() or 1, 8)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = Progress(len(files), sizes, sys.stderr, show and len(files) > 0)
    t0 = time.perf_counter()
    results = _run_scan(files, jobs, bar.step)
    bar.close()
    elapsed = time.perf_counter() - t0
    broken = sorted((r for r in results if r.violations), key=lambda r: -r.mtime)
    errors = sorted((r for r in results if r.error), key=lambda r: -r.mtime)
    unjudged = [r for r in results if not r.judged]
    if args.json:
        json.dump(
            {
                "dir": str(root),
                "scanned": len(results),
                "bytes": sizes,
                "seconds": round(elapsed, 3),
                "broken": [r.as_json() for r in broken],
                "unreadable": [r.as_json() for r in errors],
                "not_judged": len(unjudged),
            },
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        sys.stdout.write("\n")
    else:
        for r in broken:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.mtime))
            loc = f"{r.path}:{r.line}" if r.line else r.path
            print(
                f"{loc}: {r.violations} violation{'s' if r.violations != 1 else ''} "
                f"[{when}]: messages.{r.index}: {r.first}"
            )
        for r in errors:
            print(f"{r.path}: unreadable: {r.error}")
        print(
            f"{root}: {len(results)} sessions ({sizes / 1e6:.1f} MB) in {elapsed:.1f}s: "
            f"{len(broken)} broken, {len(errors)} unreadable, {len(unjudged)} with "
            "nothing to judge"
            + ("; fix one with: toolpair repair FILE --in-place" if broken else "")
        )
    return 1 if broken else (2 if errors else 0)


# -- map -----------------------------------------------------------------------------


@dataclass(slots=True)
class Picture:
    """Everything a map shows of one history."""

    title: str
    described: str
    messages: list[Message]
    violations: list[Violation]
    fixes: list[str]
    #: For a session file, the file lines of each message.
    lines: list[str] | None = None
    skipped: str = ""


def _pictures(name: str, args: argparse.Namespace) -> list[Picture]:
    cli = _cli()
    if wants(name, args.format):
        session = _read(name)
        vs = session.validate(model=args.model) if session.messages else []
        with open(name, "rb") as f:
            raw = f.read().splitlines(keepends=True)
        plan = claude_code.plan_repair(session, raw)
        return [
            Picture(
                name,
                _describe(session, args.model),
                _neutral(session),
                vs,
                [str(c) for c in plan.changes],
                [_lines_of(session, i) for i in range(len(session.messages))],
                _skipped_text(session),
            )
        ]
    out: list[Picture] = []
    stream = cli._open(name)
    try:
        doc = cli.read_document(name, stream, keep_raw=False)
        for unit in doc.units:
            where = cli._location(name, unit, None)
            r = cli.resolve(unit.obj, args.format, args.provider, where)
            cli._judged(r, args, where)
            try:
                parsed = _api.parse(r.history, r.provider, r.format, {}, args.model)
                vs = parsed.violations()
                fixes: Sequence[Fix] = (
                    _api.repair(r.history, r.provider, model=args.model, format=r.format).fixes
                    if vs
                    else []
                )
                msgs = parsed.messages
            except InvalidHistory as e:
                raise cli._invalid(name, unit, e) from None
            lines = (
                [f"line {n}" for n in unit.lines]
                if unit.lines is not None and len(unit.lines) == len(msgs)
                else None
            )
            out.append(
                Picture(
                    where,
                    cli._named(r, args.provider is not None),
                    msgs,
                    vs,
                    [str(f) for f in fixes],
                    lines,
                )
            )
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    return out


def _links(messages: Sequence[Message]) -> dict[tuple[int, int], str]:
    """For every call and result block, the message on the other side of its pair."""
    calls: dict[str, int] = {}
    results: dict[str, int] = {}
    for m in messages:
        for b in m.blocks:
            if b.id is None:
                continue
            if b.kind in ("call", "server_call"):
                calls.setdefault(b.id, m.index)
            elif b.kind in ("result", "server_result"):
                results.setdefault(b.id, m.index)
    out: dict[tuple[int, int], str] = {}
    for m in messages:
        for j, b in enumerate(m.blocks):
            if b.id is None:
                continue
            if b.kind in ("call", "server_call"):
                r = results.get(b.id)
                out[(m.index, j)] = f"->[{r}]" if r is not None else "->?"
            elif b.kind in ("result", "server_result"):
                c = calls.get(b.id)
                out[(m.index, j)] = f"<-[{c}]" if c is not None else "<-?"
    return out


def strip_row(m: Message, links: dict[tuple[int, int], str]) -> str:
    cli = _cli()
    parts: list[str] = []
    for j, b in enumerate(m.blocks):
        link = links.get((m.index, j), "")
        if b.kind == "text":
            parts.append(f"text {cli._short(cli._text_of(b), 24)}")
        elif b.kind in ("call", "server_call"):
            parts.append(f"{b.kind} {b.name or '?'}({b.id or '-'}){link}")
        elif b.kind in ("result", "server_result"):
            flag = " error" if b.is_error else ""
            parts.append(f"{b.kind}({b.id or b.name or '-'}{flag}){link}")
        else:
            parts.append(b.sub or b.kind)
    return f"[{m.index}] {m.role}: " + (", ".join(parts) or "(empty)")


def cmd_map(args: argparse.Namespace) -> int:
    pictures = _pictures(args.file, args)
    broken = any(p.violations for p in pictures)
    if args.html:
        page = render_html(pictures)
        _cli().atomic_write(Path(args.html), [page.encode("utf-8")])
        print(f"{args.file}: map written to {args.html}", file=sys.stderr)
    else:
        for p in pictures:
            print(f"== {p.title} ({p.described})")
            marked = {v.index for v in p.violations}
            links = _links(p.messages)
            for m in p.messages:
                where = f"  ({p.lines[m.index]})" if p.lines else ""
                print(f"{'>' if m.index in marked else ' '} {strip_row(m, links)}{where}")
            for v in p.violations:
                print(f"  break at messages.{v.index}: [{v.code}] {v.message}")
            for f in p.fixes:
                print(f"  repair would: {f}")
            if p.skipped:
                print(f"  not judged (never sent): {p.skipped}")
    return 1 if broken else 0


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.2em}h2{font-size:1.05em;margin-top:2em}
.breaks li{margin:.3em 0}.fix{color:#2a6b2a}
ol.turns{list-style:none;padding:0;font:13px/1.5 ui-monospace,monospace}
ol.turns li{padding:2px 6px;border-left:4px solid #ccc;margin:1px 0}
li.assistant{border-color:#6a8cd8}li.user{border-color:#8c8c8c}li.tool{border-color:#d8a04a}
li.broken{background:#fde8e8;border-color:#d33}li:target{outline:2px solid #d33}
.blk{display:inline-block;margin-right:.6em}.call{color:#1a4fa0}.result{color:#6a3fa0}
.err{color:#b00}.where{color:#888}.ok{color:#2a6b2a}
"""


def _block_html(m: Message, j: int, links: dict[tuple[int, int], str], pre: str) -> str:
    cli = _cli()
    b = m.blocks[j]
    link = links.get((m.index, j), "")
    target = ""
    if link[2:3] == "[":
        k = link[3:-1]
        target = f' <a href="#{pre}m-{html.escape(k)}">{html.escape(link)}</a>'
    elif link:
        target = f' <span class="err">{html.escape(link)}</span>'
    if b.kind == "text":
        return f'<span class="blk">text {html.escape(cli._short(cli._text_of(b), 40))}</span>'
    if b.kind in ("call", "server_call"):
        label = f"{b.kind} {b.name or '?'}({b.id or '-'})"
        return f'<span class="blk call">{html.escape(label)}{target}</span>'
    if b.kind in ("result", "server_result"):
        label = f"{b.kind}({b.id or b.name or '-'}{' error' if b.is_error else ''})"
        return f'<span class="blk result">{html.escape(label)}{target}</span>'
    return f'<span class="blk">{html.escape(b.sub or b.kind)}</span>'


def render_html(pictures: Sequence[Picture]) -> str:
    """One self-contained page: inline style, no script, no external reference."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        f"<title>toolpair map: {html.escape(pictures[0].title if pictures else '')}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    for n, p in enumerate(pictures):
        pre = f"h{n}-" if len(pictures) > 1 else ""
        out.append(f"<h1>{html.escape(p.title)}</h1>")
        out.append(f'<p class="where">{html.escape(p.described)}</p>')
        if p.violations:
            out.append(f'<h2>{len(p.violations)} break(s)</h2><ul class="breaks">')
            for i, v in enumerate(p.violations):
                out.append(
                    f'<li id="{pre}break-{i}"><a href="#{pre}m-{v.index}">messages.{v.index}</a>'
                    f" [{html.escape(v.code)}] {html.escape(v.message)}</li>"
                )
            out.append("</ul>")
            if p.fixes:
                out.append('<h2>What repair would do</h2><ul class="fixes">')
                out.extend(f'<li class="fix">{html.escape(f)}</li>' for f in p.fixes)
                out.append("</ul>")
        else:
            out.append('<p class="ok">No break: every call is answered where the API wants it.</p>')
        if p.skipped:
            out.append(f'<p class="where">Not judged (never sent): {html.escape(p.skipped)}</p>')
        marked: dict[int, list[Violation]] = {}
        for v in p.violations:
            marked.setdefault(v.index, []).append(v)
        links = _links(p.messages)
        out.append(f'<h2>{len(p.messages)} turns</h2><ol class="turns">')
        for m in p.messages:
            cls = m.role + (" broken" if m.index in marked else "")
            where = (
                f' <span class="where">{html.escape(p.lines[m.index])}</span>' if p.lines else ""
            )
            blocks = "".join(_block_html(m, j, links, pre) for j in range(len(m.blocks)))
            title = "; ".join(v.message for v in marked.get(m.index, []))
            tip = f' title="{html.escape(title)}"' if title else ""
            out.append(
                f'<li id="{pre}m-{m.index}" class="{cls}"{tip}>[{m.index}] {m.role}: '
                f"{blocks or '(empty)'}{where}</li>"
            )
        out.append("</ol>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# -- wiring --------------------------------------------------------------------------


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    s = sub.add_parser(
        "scan",
        help="find the Claude Code sessions that would fail to resume",
        description="Check every session under a Claude projects directory (default: "
        "$CLAUDE_CONFIG_DIR/projects or ~/.claude/projects) and list the broken ones, "
        "newest first. Exit 0 none broken, 1 some broken, 2 unreadable.",
    )
    s.add_argument("dir", nargs="?", metavar="DIR", help="the directory to scan")
    s.add_argument("--json", action="store_true", help="print a JSON report")
    s.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes")
    s.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    s.set_defaults(func=cmd_scan)
    m = sub.add_parser(
        "map",
        help="draw every turn of a transcript with its pairs and breaks",
        description="Print the whole history as a strip of turns: each call with the "
        "turn of its result, each break marked, the fixes repair would make. --html "
        "writes one self-contained page. Exit 0 no break, 1 breaks, 2 unreadable.",
    )
    m.add_argument("file", metavar="FILE", help="any file check reads, or a session")
    common(m)
    m.add_argument("--html", metavar="OUT", help="write an HTML page here")
    m.set_defaults(func=cmd_map)
