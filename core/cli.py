"""The ``toolpair`` command: check and repair transcripts on disk.

    toolpair check FILE... [--provider P] [--format F] [--json]
    toolpair repair FILE [--provider P] [--format F] [-o OUT | --in-place [--allow-partial]]
    toolpair demo [PROVIDER...]
    toolpair scan [DIR] [--json]          (Claude Code sessions that would fail)
    toolpair map FILE [--html OUT]        (every turn, its pairs and breaks)
    toolpair proxy --upstream URL [--mode M] [--host H] [--port P]   (repair on the wire)

A Claude Code session file (``~/.claude/projects/<dir>/<id>.jsonl``) is detected and read
as Claude Code reads it on ``--resume`` (`toolpair.claude_code`).

A file is a JSON request body, a JSON message list, or JSONL (one message per line, or
one request body / message list per line); ``-`` reads stdin. Exit status: 0 valid (or
repaired), 1 violations (left), 2 a file could not be read, parsed or written.

Framework dumps (pydantic-ai ``ModelMessagesTypeAdapter`` JSON, LangChain
``messages_to_dict`` output, OpenAI Agents SDK session items as a JSON list with
``--format openai-agents`` or a ``SQLiteSession`` database file with ``--session-id``)
are read through the framework's integration package when that framework is installed:
the integration module exposes ``load_dump(obj) -> (messages, codec) | None`` and
``dump_messages(messages) -> obj``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any, Literal

from toolpair import __version__, _api, _coverage
from toolpair._coverage import NothingJudged
from toolpair._model import Block, Codec, Fix, InvalidHistory, Message, Repaired, Violation
from toolpair.formats import CODECS, LIST_KEYS, detect
from toolpair.providers import PROVIDERS, get_profile

#: Framework dump formats: ``--format`` name -> the integration module exposing
#: ``load_dump`` / ``dump_messages``.
FRAMEWORKS: dict[str, str] = {
    "pydantic-ai": "toolpair.integrations.pydantic_ai",
    "langchain": "toolpair.integrations.langchain",
    "openai-agents": "toolpair.integrations.openai_agents",
}
#: The provider a framework dump is checked against when --provider is omitted.
FRAMEWORK_PROVIDER = "portable"
#: The demo transcripts shipped in the package, in the order `toolpair demo` shows them.
DEMOS = ("anthropic", "bedrock", "openai", "openai-responses", "gemini", "mistral")

_MISTRAL_MODEL = re.compile(r"(mistral|ministral|magistral|codestral|devstral|pixtral|open-mi)")
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
_BODY_KEYS = ("messages", "input", "contents")


class ReadError(Exception):
    """A file that cannot be read or parsed: exit status 2."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")


# -- reading ------------------------------------------------------------------------


@dataclass(slots=True)
class Style:
    """How a JSON text was written, so a rewrite looks the same."""

    indent: str | int | None = None
    separators: tuple[str, str] = (", ", ": ")
    ensure_ascii: bool = True
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False

    def dumps(self, obj: Any, *, indent: bool = True) -> str:
        return json.dumps(
            obj,
            indent=self.indent if indent else None,
            separators=self.separators,
            ensure_ascii=self.ensure_ascii,
        )


#: A JSON string, or a separator outside strings with the blank that follows it.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|([,:])([ \t]?)')


def _style_of(text: str, *, jsonl: bool = False) -> Style:
    style = Style(ensure_ascii=text.isascii())
    sample = text[:65536]
    if not jsonl:
        m = re.search(r"^[\[{][ \t]*\r?\n([ \t]+)\S", sample.lstrip())
        if m:
            ws = m.group(1)
            style.indent = "\t" if ws.startswith("\t") else len(ws)
    found: dict[str, str] = {}
    for m in _TOKENS.finditer(sample, 0, 8192):
        sep = m.group(1)
        if sep is not None and sep not in found:
            found[sep] = sep + m.group(2)
            if len(found) == 2:
                break
    key_sep = ": " if found.get(":", ": ") == ": " else ":"
    if style.indent is not None:
        style.separators = (",", key_sep)
    else:
        style.separators = (", " if found.get(",", ", ") == ", " else ",", key_sep)
    return style


@dataclass(slots=True)
class Unit:
    """One history to check or repair: the whole JSON document, the messages of a
    one-message-per-line JSONL file, or one line of a one-request-per-line file."""

    obj: Any
    #: The line this unit sits on (a request-per-line file), else None.
    line: int | None = None
    #: For a message-per-line file, the line of each message.
    lines: list[int] | None = None
    #: A request line's original text (kept only when repairing).
    raw: str = ""


@dataclass(slots=True)
class Document:
    name: str
    kind: Literal["json", "jsonl-messages", "jsonl-requests"]
    style: Style
    #: The units, lazily for a request-per-line file so that `check` streams it.
    units: Iterator[Unit]
    #: The original text of each line (JSONL, kept only when repairing), or of the file.
    raw_lines: list[str] = field(default_factory=list)
    text: str = ""


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReadError(where, f"not UTF-8 text (byte {e.start})") from None


def _loads(text: str, where: str, line: int | None = None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if line is None:
            raise ReadError(f"{where}:{e.lineno}:{e.colno}", f"not valid JSON: {e.msg}") from None
        raise ReadError(f"{where}:{line}", f"not valid JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise ReadError(
            where if line is None else f"{where}:{line}", "JSON nested too deep"
        ) from None


def _is_body(obj: Any) -> bool:
    return isinstance(obj, Mapping) and any(k in obj for k in _BODY_KEYS)


def read_document(name: str, stream: IO[bytes], *, keep_raw: bool) -> Document:
    """Read a JSON or JSONL file once. A JSONL file is parsed line by line; a file with
    one request per line is yielded a line at a time."""
    forced_jsonl = name.lower().endswith(_JSONL_SUFFIXES)
    lineno = 0
    head: list[bytes] = []
    first = b""
    for raw in stream:
        lineno += 1
        head.append(raw)
        if raw.strip():
            first = raw
            break
    if not first:
        raise ReadError(name, "empty file")
    bom = head[0].startswith(b"\xef\xbb\xbf")
    if bom:
        head[0] = head[0][3:]
        if (first is not head[0] and len(head) == 1) or len(head) == 1:
            first = head[0]
    newline = "\r\n" if first.endswith(b"\r\n") else "\n"
    first_text = _decode(first, f"{name}:{lineno}")
    first_obj: Any = None
    first_ok = False
    if not forced_jsonl:
        try:
            first_obj = json.loads(first_text)
            first_ok = True
        except (json.JSONDecodeError, RecursionError):
            first_ok = False
    else:
        first_obj = _loads(first_text, name, lineno)
        first_ok = True
    second: bytes = b""
    second_no = lineno
    if first_ok:
        for raw in stream:
            second_no += 1
            if raw.strip():
                second = raw
                break
    if not forced_jsonl and (not first_ok or not second):
        # A whole-file JSON document.
        rest = b"" if first_ok else stream.read()
        data = b"".join(head) + rest
        text = _decode(data, name)
        obj = first_obj if first_ok else _loads(text, name)
        style = _style_of(text)
        style.newline = newline
        style.trailing_newline = text.endswith("\n")
        style.bom = bom
        return Document(name, "json", style, iter([Unit(obj)]), text=text if keep_raw else "")
    style = _style_of(first_text, jsonl=True)
    style.newline = newline
    style.bom = bom
    first_line = lineno

    def rest_lines() -> Iterator[tuple[int, str]]:
        if second:
            yield second_no, _decode(second, f"{name}:{second_no}")
        n = second_no
        for raw in stream:
            n += 1
            if raw.strip():
                yield n, _decode(raw, f"{name}:{n}")

    if _is_body(first_obj) or isinstance(first_obj, list):
        doc = Document(name, "jsonl-requests", style, iter(()))

        def requests() -> Iterator[Unit]:
            yield Unit(first_obj, line=first_line, raw=first_text if keep_raw else "")
            for n, text in rest_lines():
                if not text.isascii():
                    style.ensure_ascii = False
                yield Unit(_loads(text, name, n), line=n, raw=text if keep_raw else "")

        doc.units = requests()
        return doc
    messages = [first_obj]
    lines = [first_line]
    raw_lines = [first_text] if keep_raw else []
    for n, text in rest_lines():
        messages.append(_loads(text, name, n))
        lines.append(n)
        if keep_raw:
            raw_lines.append(text)
        if not text.isascii():
            style.ensure_ascii = False
    return Document(
        name, "jsonl-messages", style, iter([Unit(messages, lines=lines)]), raw_lines=raw_lines
    )


_SQLITE_MAGIC = b"SQLite format 3\x00"


def _open_source(path: str, args: argparse.Namespace) -> tuple[IO[bytes], argparse.Namespace]:
    """``_open``, except that an Agents SDK session database (SQLite) is read through its
    integration as the JSON list of the session's items (``--session-id`` picks one)."""
    stream = _open(path)
    if stream is sys.stdin.buffer or not stream.seekable():
        return stream, args
    head = stream.read(len(_SQLITE_MAGIC))
    stream.seek(0)
    if head != _SQLITE_MAGIC:
        return stream, args
    stream.close()
    module = _framework_hook("openai-agents", path)
    try:
        items = module.load_session_file(path, getattr(args, "session_id", None))
    except ValueError as e:
        hint = ""
        if str(e).startswith("not an Agents SDK session database"):
            hint = " (a LangGraph checkpoint file takes --thread ID)"
        raise ReadError(path, f"{e}{hint}") from None
    if getattr(args, "in_place", False):
        raise ReadError(path, "cannot rewrite a session database in place; use -o OUT.json")
    args = argparse.Namespace(**vars(args))
    args.format = args.format or "openai-agents"
    return io.BytesIO(json.dumps(items).encode("utf-8")), args


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from None


# -- resolving a unit's format and provider ------------------------------------------


@dataclass(slots=True)
class Resolved:
    history: Any
    format: str | Codec
    format_name: str
    provider: str
    #: For a framework dump, turns repaired native messages back into JSON data.
    dump: Callable[[Any], Any] | None = None


def _sniff_framework(obj: Any) -> str | None:
    """The framework a JSON value looks like a dump of (a cheap structural test)."""
    if not isinstance(obj, list) or not obj or not isinstance(obj[0], Mapping):
        return None
    first = obj[0]
    if first.get("kind") in ("request", "response") and isinstance(first.get("parts"), list):
        return "pydantic-ai"
    if set(first) == {"type", "data"} and isinstance(first.get("data"), Mapping):
        return "langchain"
    return None


def _framework_hook(framework: str, where: str) -> Any:
    module_name = FRAMEWORKS[framework]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ReadError(
            where,
            f"looks like a {framework} dump, but {module_name} cannot be imported ({e}); "
            f'install it with: pip install "toolpair[{framework}]"',
        ) from None
    if not callable(getattr(module, "load_dump", None)):
        raise ReadError(where, f"{module_name} does not support reading {framework} dumps")
    return module


def resolve(obj: Any, fmt: str | None, provider: str | None, where: str) -> Resolved:
    framework = fmt if fmt in FRAMEWORKS else None
    if fmt is None:
        framework = _sniff_framework(obj)
    if framework is not None:
        module = _framework_hook(framework, where)
        try:
            loaded = module.load_dump(obj)
        except Exception as e:
            raise ReadError(where, f"not a readable {framework} dump: {e}") from None
        if loaded is not None:
            messages, codec = loaded
            dump = getattr(module, "dump_messages", None)
            return Resolved(
                messages,
                codec,
                framework,
                provider or str(getattr(module, "DEFAULT_PROVIDER", FRAMEWORK_PROVIDER)),
                dump if callable(dump) else None,
            )
        if fmt is not None:
            raise ReadError(where, f"not a {framework} dump")
    if fmt is None:
        hint = provider
        if (
            hint is None
            and isinstance(obj, Mapping)
            and _MISTRAL_MODEL.match(str(obj.get("model") or ""))
        ):
            # Mistral's chat dialect looks like OpenAI's; a body names its model.
            hint = "mistral"
        try:
            fmt = detect(obj, hint)
        except InvalidHistory as e:
            raise ReadError(where, str(e)) from None
    return Resolved(obj, fmt, fmt, provider or fmt)


# -- rendering -----------------------------------------------------------------------


def _short(text: str | None, width: int = 40) -> str:
    text = " ".join((text or "").split())
    return json.dumps(text if len(text) <= width else text[: width - 1] + "…", ensure_ascii=False)


def _text_of(b: Block) -> str | None:
    if b.text is not None:
        return b.text
    n = b.native
    if isinstance(n, str):
        return n
    if isinstance(n, Mapping):
        for key in ("text", "content"):
            v: Any = n.get(key)
            if isinstance(v, str):
                return v
            if isinstance(v, list):
                return " ".join(
                    x["text"]
                    for x in v
                    if isinstance(x, Mapping) and isinstance(x.get("text"), str)
                )
    return None


def render_message(m: Message) -> str:
    """A compact one-line rendering of a message: its role and its blocks."""
    parts: list[str] = []
    for b in m.blocks:
        if b.kind == "text":
            parts.append(f"text {_short(_text_of(b))}")
        elif b.kind in ("call", "server_call"):
            parts.append(f"{b.kind} {b.name or '?'}({b.id or '-'})")
        elif b.kind in ("result", "server_result"):
            flags = "".join(
                f for f, on in ((" error", b.is_error), (" synthetic", b.synthetic)) if on
            )
            parts.append(f"{b.kind}({b.id or b.name or '-'}{flags})")
        else:
            parts.append(b.sub or b.kind)
    return f"[{m.index}] {m.role}: " + (", ".join(parts) or "(empty)")


def render_turns(
    messages: Sequence[Message], marked: set[int] | None = None, context: int | None = None
) -> list[str]:
    """One line per message, ``>`` marking the ``marked`` indices; with ``context``,
    only the marked messages and that many neighbours each side (``...`` for gaps)."""
    marked = marked or set()
    keep = list(range(len(messages)))
    if context is not None and marked:
        wanted = {j for i in marked for j in range(i - context, i + context + 1)}
        keep = [i for i in keep if i in wanted]
    out: list[str] = []
    last = -1
    for i in keep:
        if i != last + 1:
            out.append("  ...")
        out.append(("> " if i in marked else "  ") + render_message(messages[i]))
        last = i
    if context is not None and marked and last != len(messages) - 1:
        out.append("  ...")
    return out


# -- check ---------------------------------------------------------------------------


def _location(name: str, unit: Unit, index: int | None) -> str:
    if unit.line is not None:
        return f"{name}:{unit.line}"
    if unit.lines is not None and index is not None and 0 <= index < len(unit.lines):
        return f"{name}:{unit.lines[index]}"
    return name


def _invalid(name: str, unit: Unit, e: InvalidHistory) -> ReadError:
    return ReadError(_location(name, unit, e.index), f"not a history toolpair can read: {e}")


def _violation_line(loc: str, v: Violation) -> str:
    at = f" (at {v.path})" if v.path and v.path not in v.message else ""
    return f"{loc}: [{v.code}] {v.message}{at}"


def _named(r: Resolved, explicit_provider: bool) -> str:
    how = "" if explicit_provider else ", implied by the format"
    return f"{r.format_name} format, {r.provider} rules{how}"


def _err(msg: str) -> None:
    print(f"toolpair: {msg}", file=sys.stderr)


def cmd_check(args: argparse.Namespace) -> int:
    status = 0
    out_json: list[dict[str, Any]] = []
    for name in args.files:
        try:
            n = _check_file(name, args, out_json)
        except ReadError as e:
            _err(str(e))
            status = 2
            continue
        if n and status == 0:
            status = 1
    if args.json:
        json.dump(out_json, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    return status


def _check_file(name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]) -> int:
    if getattr(args, "thread", None) is not None:
        return _check_thread(name, args, out_json)
    from toolpair import _sessions_cli

    if _sessions_cli.wants(name, args.format):
        return _sessions_cli.check_file(name, args, out_json)
    stream, args = _open_source(name, args)
    shown = "<stdin>" if name == "-" else name
    total = 0
    units = 0
    described: set[str] = set()
    try:
        doc = read_document(shown, stream, keep_raw=False)
        for unit in doc.units:
            units += 1
            r = resolve(unit.obj, args.format, args.provider, _location(shown, unit, None))
            _judged(r, args, _location(shown, unit, None))
            described.add(_named(r, args.provider is not None))
            try:
                violations = _api.validate(r.history, r.provider, model=args.model, format=r.format)
            except NothingJudged as e:
                raise ReadError(
                    _location(shown, unit, None), f"nothing judged, not reported valid: {e}"
                ) from None
            except InvalidHistory as e:
                raise _invalid(shown, unit, e) from None
            total += len(violations)
            for v in violations:
                loc = _location(shown, unit, v.index)
                if args.json:
                    out_json.append(
                        violation_item(
                            v,
                            file=shown,
                            line=_line(unit, v.index),
                            provider=r.provider,
                            format=r.format_name,
                        )
                    )
                else:
                    print(_violation_line(loc, v))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if not args.json:
        what = "; ".join(sorted(described))
        count = "valid" if not total else f"{total} violation{'s' if total != 1 else ''}"
        per = f" in {units} histories" if doc.kind == "jsonl-requests" else ""
        print(f"{shown}: {count}{per} ({what})")
    return total


#: Where ``check --thread`` finds LangGraph (imported only when the option is given).
LANGGRAPH = "toolpair.integrations.langgraph"


def _check_thread(name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]) -> int:
    """``check FILE --thread ID``: FILE is a LangGraph SQLite checkpoint file; the
    thread's latest checkpoint is checked (with the results of its unfinished step)."""
    where = f"{name} (thread {args.thread})"
    try:
        module = importlib.import_module(LANGGRAPH)
    except ImportError as e:
        raise ReadError(
            where,
            f"--thread reads LangGraph checkpoints, but {LANGGRAPH} cannot be imported ({e}); "
            'install it with: pip install "toolpair[langgraph]" langgraph-checkpoint-sqlite',
        ) from None
    provider = args.provider or module.DEFAULT_PROVIDER
    try:
        messages, codec = module.load_thread(name, args.thread, provider=provider)
    except ImportError as e:
        raise ReadError(where, f"cannot read LangGraph checkpoints ({e})") from None
    except (LookupError, OSError, ValueError) as e:
        raise ReadError(where, str(e)) from None
    except Exception as e:  # sqlite3.DatabaseError and the saver's own errors
        raise ReadError(where, f"not a LangGraph SQLite checkpoint file: {e}") from None
    try:
        violations = _api.validate(messages, provider, model=args.model, format=codec)
    except InvalidHistory as e:
        raise ReadError(where, f"not a history toolpair can read: {e}") from None
    for v in violations:
        if args.json:
            out_json.append(
                violation_item(
                    v, file=name, thread=args.thread, provider=provider, format="langgraph"
                )
            )
        else:
            print(_violation_line(f"{where}: message {v.index}", v))
    if not args.json:
        count = "valid" if not violations else f"{len(violations)} violation"
        count += "s" if len(violations) > 1 else ""
        print(f"{where}: {count} ({len(messages)} messages, {provider} rules)")
    return len(violations)


def violation_item(v: Violation, **where: Any) -> dict[str, Any]:
    """A violation as ``check --json`` prints it, with where it was found."""
    return {
        "code": v.code,
        "message": v.message,
        "index": v.index,
        "ids": list(v.ids),
        "path": v.path,
        **where,
    }


def _line(unit: Unit, index: int) -> int | None:
    if unit.line is not None:
        return unit.line
    if unit.lines is not None and 0 <= index < len(unit.lines):
        return unit.lines[index]
    return None


# -- repair --------------------------------------------------------------------------


def _judged(r: Resolved, args: argparse.Namespace, where: str) -> None:
    """A detected format that explains nothing, or almost nothing, of the document: the
    rules would skip it all, so no verdict is given (exit 2), and what was skipped is
    said. A format given with --format is taken at its word."""
    if args.format is not None or not isinstance(r.format, str):
        return
    items = r.history
    if isinstance(items, Mapping):
        items = items.get(LIST_KEYS.get(r.format, "messages"))
    try:
        _coverage.guard(items, r.format)
    except NothingJudged as e:
        what = "nothing" if e.coverage.nothing else "almost nothing"
        raise ReadError(
            where, f"{what} judged, not reported valid: {e} (force one with --format)"
        ) from None


def _repair_unit(shown: str, unit: Unit, args: argparse.Namespace) -> tuple[Resolved, Repaired]:
    r = resolve(unit.obj, args.format, args.provider, _location(shown, unit, None))
    _judged(r, args, _location(shown, unit, None))
    try:
        return r, _api.repair(r.history, r.provider, model=args.model, format=r.format)
    except InvalidHistory as e:
        raise _invalid(shown, unit, e) from None


def _encode_output(r: Resolved, rep: Repaired, where: str) -> Any:
    if r.dump is None:
        return rep.messages
    if not callable(r.dump):
        raise ReadError(where, f"cannot write {r.format_name} dumps")
    return r.dump(rep.messages)


def cmd_repair(args: argparse.Namespace) -> int:
    from toolpair import _sessions_cli

    name: str = args.file
    if _sessions_cli.wants(name, args.format):
        return _sessions_cli.repair(args)
    shown = "<stdin>" if name == "-" else name
    if args.in_place and name == "-":
        _err("--in-place needs a file, not stdin")
        return 2
    stream, args = _open_source(name, args)
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
            loc = _location(shown, unit, None)
            if rep.fixes:
                print(f"{loc}: {_named(r, args.provider is not None)}", file=sys.stderr)
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
            backup = _backup(Path(name))
            atomic_write(Path(name), data)
            print(
                f"{shown}: {summary}; written in place, original kept as {backup}", file=sys.stderr
            )
        elif args.output and args.output != "-":
            atomic_write(Path(args.output), data)
            print(f"{shown}: {summary}; written to {args.output}", file=sys.stderr)
        else:
            _write_stdout(data)
            print(f"{shown}: {summary}", file=sys.stderr)
    except OSError as e:
        _err(f"cannot write: {e}")
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
    if _is_body(out):
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


def _backup(path: Path) -> Path:
    """Keep the original next to the file: ``FILE.bak``, or ``FILE.bak.N`` when that is
    taken. A hard link where possible (the rename that follows leaves it the old
    content), else a synced copy."""
    backup = path.with_name(path.name + ".bak")
    n = 0
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.bak.{n}")
    try:
        os.link(path, backup)
    except OSError:
        atomic_write(backup, [path.read_bytes()], mode_from=path)
    return backup


def atomic_write(path: Path, data: Iterable[bytes], *, mode_from: Path | None = None) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old file or the new
    one: a temp file in the same directory, fsync, rename, fsync of the directory."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in data:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        source = mode_from or (path if path.exists() else None)
        if source is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(source).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


# -- demo ----------------------------------------------------------------------------


def load_demo(name: str) -> Any:
    """The poisoned demo transcript for ``name`` (a provider and wire format)."""
    if name not in DEMOS:
        raise ValueError(f"no demo for {name!r}; known: {', '.join(DEMOS)}")
    text = resources.files("toolpair").joinpath("demo").joinpath(f"{name}.json").read_text("utf-8")
    return json.loads(text)


def cmd_rules(args: argparse.Namespace) -> int:
    from toolpair import rules

    if args.markdown:
        sys.stdout.write(rules.markdown())
        return 0
    if args.model and not args.provider:
        _err("--model needs a PROVIDER")
        return 2
    providers = [args.provider] if args.provider else [p for p in PROVIDERS if p != "portable"]
    for provider in providers:
        profile = get_profile(provider, args.model)
        model = f", model {args.model}" if args.model else ""
        print(f"{provider}{model}: {rules.traits(profile)}")
        for r in rules.rules_for(provider, args.model):
            print(f"  {r.ref:<4} {r.code:<46} {r.status:<10} {r.text}")
            if r.applies != "every model":
                print(f"  {'':<4} {'':<46} applies to: {r.applies}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    names = args.providers or list(DEMOS)
    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        _err(f"no demo for {', '.join(unknown)}; known: {', '.join(DEMOS)}")
        return 2
    status = 0
    for name in names:
        body = load_demo(name)
        parsed = _api.parse(body, name, name, {})
        violations = parsed.profile.rules(parsed.messages, parsed.ctx)
        print(f"== {name}: a poisoned {name} request (demo/{name}.json)")
        for line in render_turns(parsed.messages, {v.index for v in violations}):
            print(f"  {line}")
        print(f"-- toolpair check: {len(violations)} violation(s), as {name} words them")
        for v in violations:
            print(f"  {_violation_line(f'message {v.index}', v)}")
        rep = _api.repair(body, name, format=name)
        print(f"-- toolpair repair: {len(rep.fixes)} fix(es)")
        for f in rep.fixes:
            print(f"  {f}")
        fixed = _api.parse(rep.messages, name, name, {})
        before = {id(m) for m in parsed.raw}
        touched = {m.index for m in fixed.messages if id(m.native) not in before}
        for line in render_turns(fixed.messages, touched):
            print(f"  {line}")
        after = _api.validate(rep.messages, name, format=name)
        if after:
            status = 1
            print(f"-- re-check: {len(after)} violation(s) left")
            for v in after:
                print(f"  {_violation_line(f'message {v.index}', v)}")
        else:
            print(f"-- re-check: valid for {name}")
        print()
    print("Try it on your own transcripts: toolpair check FILE; toolpair repair FILE -o OUT")
    return status


# -- entry point ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    from toolpair import _sessions_cli

    formats = [*CODECS, *FRAMEWORKS, "claude-code"]
    p = argparse.ArgumentParser(
        prog="toolpair",
        description="Check and repair the tool calls and results of agent transcripts.",
    )
    p.add_argument("--version", action="version", version=f"toolpair {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--provider",
            choices=PROVIDERS,
            help="the provider whose rules apply (default: the one the format implies; "
            "portable for framework dumps)",
        )
        sp.add_argument("--format", choices=formats, help="the message format (default: detected)")
        sp.add_argument(
            "--model",
            metavar="MODEL",
            help="the model id, as you pass it to the provider: its family's own rules "
            "apply (default: the strictest rules of any model behind that API)",
        )
        sp.add_argument(
            "--session-id",
            metavar="ID",
            help="for an Agents SDK SQLite session file: the session to read "
            "(default: the only one)",
        )

    c = sub.add_parser(
        "check",
        help="report what a provider would reject",
        description="Report every violation, worded as the provider words it. "
        "Exit 0 valid, 1 violations, 2 unreadable file.",
    )
    c.add_argument("files", nargs="+", metavar="FILE", help="JSON or JSONL; - for stdin")
    common(c)
    c.add_argument("--json", action="store_true", help="print a JSON array of violations")
    c.add_argument(
        "--thread",
        metavar="ID",
        help="FILE is a LangGraph SQLite checkpoint file: check this thread's latest "
        "checkpoint (needs toolpair[langgraph] and langgraph-checkpoint-sqlite; default "
        "rules: the pairing rules of LangGraph's message list)",
    )
    c.set_defaults(func=cmd_check)

    r = sub.add_parser(
        "repair",
        help="write a repaired copy",
        description="Repair a transcript, writing it in the shape and format it was read "
        "(to stdout by default). Fixes go to stderr. Exit 0 valid after repair, 1 "
        "violations left, 2 unreadable or unwritable file.",
    )
    r.add_argument("file", metavar="FILE", help="JSON or JSONL; - for stdin")
    common(r)
    dest = r.add_mutually_exclusive_group()
    dest.add_argument("-o", "--output", metavar="OUT", help="write here (atomically)")
    dest.add_argument(
        "-i",
        "--in-place",
        action="store_true",
        help="rewrite FILE atomically, keeping the original as FILE.bak",
    )
    r.add_argument(
        "--allow-partial",
        action="store_true",
        help="with --in-place on a Claude Code session: write a repair that leaves "
        "violations (by default such a session is not written, exit 1)",
    )
    r.set_defaults(func=cmd_repair)

    ru = sub.add_parser(
        "rules",
        help="print the rules a provider (and model) holds a history to",
        description="Print every rule toolpair checks for PROVIDER (all of them without "
        "one): its code, status, and the provider's own text. --model applies that model "
        "family's rules; --markdown prints the whole rule reference.",
    )
    ru.add_argument("provider", nargs="?", choices=PROVIDERS, metavar="PROVIDER")
    ru.add_argument("--model", metavar="MODEL", help="the model id, as you pass it")
    ru.add_argument("--markdown", action="store_true", help="the rule reference page")
    ru.set_defaults(func=cmd_rules)

    d = sub.add_parser(
        "demo",
        help="run on the poisoned transcripts shipped with toolpair",
        description="Show violations, repair and re-check on one poisoned history per "
        "provider, shipped inside the package.",
    )
    d.add_argument("providers", nargs="*", metavar="PROVIDER", help=f"any of {', '.join(DEMOS)}")
    d.set_defaults(func=cmd_demo)
    _sessions_cli.add_commands(sub, common)

    px = sub.add_parser(
        "proxy",
        help="a reverse proxy that repairs (or rejects) every request it forwards",
        description="Forward every request to one Anthropic-, OpenAI- or Gemini-compatible "
        "endpoint, judging the history of each chat completions, messages, responses and "
        "generateContent request by the rules of the API it copies. A valid body is "
        "forwarded byte-identical; responses and event streams pass through untouched. "
        "Point a client at it: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 or "
        "OPENAI_BASE_URL=http://127.0.0.1:8787/v1.",
    )
    px.add_argument("--upstream", required=True, metavar="URL", help="the endpoint to forward to")
    px.add_argument(
        "--mode",
        choices=("repair", "reject", "observe"),
        default="repair",
        help="repair a broken history (default), reject it with the API's own 400, or only log it",
    )
    px.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    px.add_argument("--port", type=int, default=8787, help="port (default 8787; 0 picks one)")
    px.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="judge every request by these rules (e.g. portable) instead of those of the "
        "API each path belongs to",
    )
    px.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long to wait on the upstream (connect and each read; default 600)",
    )
    px.set_defaults(func=cmd_proxy)
    return p


def cmd_proxy(args: argparse.Namespace) -> int:
    from toolpair import proxy

    log = logging.getLogger("toolpair")
    log.disabled = False  # main() silences it for the file commands; here it is the report
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    try:
        proxy.serve(
            args.upstream,
            mode=args.mode,
            host=args.host,
            port=args.port,
            provider=args.provider,
            timeout=args.timeout,
        )
    except ValueError as e:
        _err(str(e))
        return 2
    except OSError as e:
        _err(f"cannot listen on {args.host}:{args.port}: {e}")
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # The CLI reports fixes itself; the library's summary warning would repeat them.
    log = logging.getLogger("toolpair")
    was_disabled = log.disabled
    log.disabled = True
    try:
        status: int = args.func(args)
        return status
    except ReadError as e:
        _err(str(e))
        return 2
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        log.disabled = was_disabled


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
