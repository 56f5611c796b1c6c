"""``toolpair repair``: write a repaired copy in the shape and format the file was read,
to stdout, to ``-o OUT``, or in place with a backup."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from toolpair import _api, events
from toolpair._model import Fix, InvalidHistory, Repaired
from toolpair.cli.reading import (
    Document,
    ReadError,
    Resolved,
    Unit,
    checked_model,
    err,
    invalid,
    is_body,
    judged,
    location,
    named,
    open_source,
    read_document,
    resolve,
)
from toolpair.cli.sessions import repair as session_repair
from toolpair.cli.sessions import session_format
from toolpair.sessions import atomic_write, backup


def _repair_unit(shown: str, unit: Unit, args: argparse.Namespace) -> tuple[Resolved, Repaired]:
    r = resolve(unit.obj, args.format, args.provider, location(shown, unit, None))
    judged(r, args, location(shown, unit, None))
    model = checked_model(r.provider, args.model)
    try:
        with events.scope("cli", model=model):
            return r, _api.repair(r.history, r.provider, model=model, format=r.format)
    except InvalidHistory as e:
        raise invalid(shown, unit, e) from None


def _encode_output(r: Resolved, rep: Repaired, where: str) -> Any:
    if r.dump is None:
        return rep.messages
    if not callable(r.dump):
        raise ReadError(where, f"cannot write {r.format_name} dumps")
    return r.dump(rep.messages)


def cmd_repair(args: argparse.Namespace) -> int:
    name: str = args.file
    if getattr(args, "thread", None) is not None:
        err(
            "repair --thread: a LangGraph thread is repaired from Python, where the graph "
            "and its model are: repair_thread(graph, config, model) (docs/langgraph.md); "
            f"the command line only checks one: toolpair check {name} --thread {args.thread}"
        )
        return 2
    fmt = session_format(name, args.format, raw=getattr(args, "raw", False))
    if fmt is not None:
        return session_repair(fmt, args)
    shown = "<stdin>" if name == "-" else name
    if args.in_place and name == "-":
        err("--in-place needs a file, not stdin")
        return 2
    stream, args = open_source(name, args)
    try:
        doc = read_document(shown, stream, keep_raw=True)
        nl = doc.style.newline
        #: The output text, in pieces that carry their own line endings.
        pieces: list[str] = []
        changed = False
        left = 0
        nfix = 0
        for unit in doc.units:
            r, rep = _repair_unit(shown, unit, args)
            loc = location(shown, unit, None)
            if rep.fixes:
                shown_model = checked_model(r.provider, args.model)
                print(f"{loc}: {named(r, args.provider is not None, shown_model)}", file=sys.stderr)
            for f in rep.fixes:
                print(f"  {_fix_line(unit, f)}", file=sys.stderr)
                nfix += f.kind != "unrepaired"
            left += len(rep.unrepaired)
            changed = changed or rep.changed
            if doc.kind == "jsonl-requests":
                if rep.changed:
                    pieces.append(doc.style.dumps(_encode_output(r, rep, loc)) + nl)
                else:
                    pieces.append(_with_newline(unit.raw, nl))
            elif doc.kind == "jsonl-messages":
                if rep.changed:
                    pieces.extend(_jsonl_messages(doc, r, rep, loc))
            elif rep.changed:
                text = doc.style.dumps(_encode_output(r, rep, loc))
                if nl != "\n":
                    text = text.replace("\n", nl)
                pieces.append(text + nl if doc.style.trailing_newline else text)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    status = 1 if left else 0
    if not changed:
        msg = "nothing to repair" if not left else "nothing toolpair can repair"
        if args.in_place or (args.output and args.output != "-"):
            target = name if args.in_place else args.output
            print(f"{shown}: {msg}; {target} not written", file=sys.stderr)
            return status
        print(f"{shown}: {msg}; the input is echoed unchanged", file=sys.stderr)
        if doc.kind == "json":
            pieces = [doc.text]
        elif doc.kind == "jsonl-messages":
            pieces = [_with_newline(line, nl) for line in doc.raw_lines]
    data = _encoded(pieces, doc.style.bom)
    summary = f"{nfix} fix{'es' if nfix != 1 else ''}"
    if left:
        summary += f", {left} violation{'s' if left != 1 else ''} left"
    try:
        if not changed:
            _write_stdout(data)
        elif args.in_place:
            kept = backup(Path(name))
            atomic_write(Path(name), data)
            print(f"{shown}: {summary}; written in place, original kept as {kept}", file=sys.stderr)
        elif args.output and args.output != "-":
            atomic_write(Path(args.output), data)
            print(f"{shown}: {summary}; written to {args.output}", file=sys.stderr)
        else:
            _write_stdout(data)
            print(f"{shown}: {summary}", file=sys.stderr)
    except OSError as e:
        err(f"cannot write: {e}")
        return 2
    return status


def _with_newline(line: str, nl: str) -> str:
    return line if line.endswith("\n") else line + nl


def _encoded(pieces: list[str], bom: bool) -> Iterator[bytes]:
    if bom:
        yield b"\xef\xbb\xbf"
    for piece in pieces:
        yield piece.encode("utf-8")


def _write_stdout(data: Iterable[bytes]) -> None:
    sys.stdout.flush()
    out = sys.stdout.buffer
    for chunk in data:
        out.write(chunk)
    out.flush()


def _jsonl_messages(doc: Document, r: Resolved, rep: Repaired, loc: str) -> list[str]:
    out = _encode_output(r, rep, loc)
    nl = doc.style.newline
    if is_body(out):
        raise ReadError(loc, "a JSONL transcript must hold a message list")
    if r.dump is not None:
        return [doc.style.dumps(m) + nl for m in out]
    original = {id(m): i for i, m in enumerate(r.history)}
    lines: list[str] = []
    for m in out:
        i = original.get(id(m))
        if i is not None and i < len(doc.raw_lines):
            lines.append(_with_newline(doc.raw_lines[i], nl))
        else:
            lines.append(doc.style.dumps(m) + nl)
    return lines


def _fix_line(unit: Unit, f: Fix) -> str:
    loc = ""
    if unit.lines is not None and 0 <= f.index < len(unit.lines):
        loc = f" (line {unit.lines[f.index]})"
    return f"{f}{loc}"
