"""``toolpair map``: every turn of a history as a strip, each call linked to the turn
of its result, each break marked, the fixes repair would make; or one self-contained
HTML page of the same."""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolpair import _api, events
from toolpair._model import Fix, InvalidHistory, Message, Violation
from toolpair.cli.reading import (
    ReadError,
    checked_model,
    invalid,
    judged,
    location,
    named,
    open_stream,
    read_document,
    resolve,
)
from toolpair.cli.render import short, text_of
from toolpair.cli.sessions import described, neutral, read_session, session_format, validate
from toolpair.sessions import atomic_write


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


def pictures(name: str, args: argparse.Namespace) -> list[Picture]:
    fmt = session_format(name, args.format, raw=getattr(args, "raw", False))
    if fmt is not None:
        loaded, data = read_session(fmt, name)
        model = checked_model(loaded.provider, args.model, loaded.model)
        vs = validate(loaded, model)
        plan = fmt.plan(loaded, data, model) if vs else None
        return [
            Picture(
                name,
                described(loaded, model),
                neutral(loaded),
                vs,
                plan.changes if plan is not None else [],
                list(loaded.where),
                loaded.skipped,
            )
        ]
    out: list[Picture] = []
    stream = open_stream(name)
    try:
        doc = read_document(name, stream, keep_raw=False)
        for unit in doc.units:
            where = location(name, unit, None)
            r = resolve(unit.obj, args.format, args.provider, where)
            judged(r, args, where)
            model = checked_model(r.provider, args.model)
            try:
                parsed = _api.parse(r.history, r.provider, r.format, {}, model)
                vs = parsed.violations()
                with events.silenced():  # a preview of what repair would do
                    fixes: Sequence[Fix] = (
                        _api.repair(r.history, r.provider, model=model, format=r.format).fixes
                        if vs
                        else []
                    )
                msgs = parsed.messages
            except InvalidHistory as e:
                raise invalid(name, unit, e) from None
            lines = (
                [f"line {n}" for n in unit.lines]
                if unit.lines is not None and len(unit.lines) == len(msgs)
                else None
            )
            out.append(
                Picture(
                    where,
                    named(r, args.provider is not None, model),
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


def links(messages: Sequence[Message]) -> dict[tuple[int, int], str]:
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
    parts: list[str] = []
    for j, b in enumerate(m.blocks):
        link = links.get((m.index, j), "")
        if b.kind == "text":
            parts.append(f"text {short(text_of(b), 24)}")
        elif b.kind in ("call", "server_call"):
            parts.append(f"{b.kind} {b.name or '?'}({b.id or '-'}){link}")
        elif b.kind in ("result", "server_result"):
            flag = " error" if b.is_error else ""
            parts.append(f"{b.kind}({b.id or b.name or '-'}{flag}){link}")
        else:
            parts.append(b.sub or b.kind)
    return f"[{m.index}] {m.role}: " + (", ".join(parts) or "(empty)")


def cmd_map(args: argparse.Namespace) -> int:
    shown = pictures(args.file, args)
    broken = any(p.violations for p in shown)
    if args.html:
        page = render_html(shown)
        target = Path(args.html)
        if target.is_dir():
            raise ReadError(args.html, "is a directory: name the HTML file to write")
        try:
            atomic_write(target, [page.encode("utf-8")])
        except OSError as e:
            raise ReadError(args.html, f"cannot write the map: {e.strerror or e}") from None
        print(f"{args.file}: map written to {args.html}", file=sys.stderr)
    else:
        for p in shown:
            print(f"== {p.title} ({p.described})")
            marked = {v.index for v in p.violations}
            linked = links(p.messages)
            for m in p.messages:
                where = f"  ({p.lines[m.index]})" if p.lines else ""
                print(f"{'>' if m.index in marked else ' '} {strip_row(m, linked)}{where}")
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


def block_html(m: Message, j: int, links: dict[tuple[int, int], str], pre: str) -> str:
    b = m.blocks[j]
    link = links.get((m.index, j), "")
    target = ""
    if link[2:3] == "[":
        k = link[3:-1]
        target = f' <a href="#{pre}m-{html.escape(k)}">{html.escape(link)}</a>'
    elif link:
        target = f' <span class="err">{html.escape(link)}</span>'
    if b.kind == "text":
        return f'<span class="blk">text {html.escape(short(text_of(b), 40))}</span>'
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
            n = len(p.violations)
            out.append(f'<h2>{n} break{"s" if n != 1 else ""}</h2><ul class="breaks">')
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
        linked = links(p.messages)
        out.append(f'<h2>{len(p.messages)} turns</h2><ol class="turns">')
        for m in p.messages:
            cls = m.role + (" broken" if m.index in marked else "")
            where = (
                f' <span class="where">{html.escape(p.lines[m.index])}</span>' if p.lines else ""
            )
            blocks = "".join(block_html(m, j, linked, pre) for j in range(len(m.blocks)))
            title = "; ".join(v.message for v in marked.get(m.index, []))
            tip = f' title="{html.escape(title)}"' if title else ""
            out.append(
                f'<li id="{pre}m-{m.index}" class="{cls}"{tip}>[{m.index}] {m.role}: '
                f"{blocks or '(empty)'}{where}</li>"
            )
        out.append("</ol>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def add_command(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
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
