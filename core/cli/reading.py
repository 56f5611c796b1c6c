"""Reading what the commands are given: JSON or JSONL documents (with the style they
were written in, so that a rewrite looks the same), framework dumps through their
integration, and which format and provider a history is judged as."""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from toolpair._frameworks import INTEGRATIONS
from toolpair._model import Codec, InvalidHistory
from toolpair.engine import coverage
from toolpair.engine.coverage import NothingJudged
from toolpair.formats import LIST_KEYS, detect

#: Framework dump formats: ``--format`` name -> the integration module exposing
#: ``load_dump`` / ``dump_messages`` (read off the one registry).
FRAMEWORKS: dict[str, str] = {f.extra: f.module for f in INTEGRATIONS.values() if f.dumps}


#: The provider a framework dump is checked against when --provider is omitted.
FRAMEWORK_PROVIDER = "portable"


_MISTRAL_MODEL = re.compile(r"(mistral|ministral|magistral|codestral|devstral|pixtral|open-mi)")


_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")


_BODY_KEYS = ("messages", "input", "contents")


class ReadError(Exception):
    """A file that cannot be read or parsed: exit status 2."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.reason = message


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


def is_body(obj: Any) -> bool:
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

    if is_body(first_obj) or isinstance(first_obj, list):
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


def open_source(path: str, args: argparse.Namespace) -> tuple[IO[bytes], argparse.Namespace]:
    """``open_stream``, except that an Agents SDK session database (SQLite) is read through its
    integration as the JSON list of the session's items (``--session-id`` picks one)."""
    stream = open_stream(path)
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


def open_stream(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    if os.path.isdir(path):
        raise ReadError(
            path,
            "is a directory, not a session folder toolpair knows; to check every session "
            "under it, use `toolpair scan DIR`",
        )
    try:
        return open(path, "rb")
    except OSError as e:
        raise ReadError(path, e.strerror or str(e)) from None


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
            f"install it from a toolpair checkout with: {install_hint(framework)}",
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


def location(name: str, unit: Unit, index: int | None) -> str:
    if unit.line is not None:
        return f"{name}:{unit.line}"
    if unit.lines is not None and index is not None and 0 <= index < len(unit.lines):
        return f"{name}:{unit.lines[index]}"
    return name


def invalid(name: str, unit: Unit, e: InvalidHistory) -> ReadError:
    return ReadError(location(name, unit, e.index), f"not a history toolpair can read: {e}")


def named(r: Resolved, explicit_provider: bool, model: str | None = None) -> str:
    how = "" if explicit_provider else ", implied by the format"
    of = f" for model {model}" if model else ""
    return f"{r.format_name} format, {r.provider} rules{of}{how}"


def install_hint(extra: str, *more: str) -> str:
    """How to install an extra: toolpair is installed from its repository, not PyPI."""
    return " ".join([f'pip install ".[{extra}]"', *more])


#: What the model ids of each API start with, as users write them (after any
#: ``vendor/`` path): a model that matches none is not one toolpair can place there.
_VENDOR_MODELS: dict[str, re.Pattern[str]] = {
    "anthropic": re.compile(r"claude"),
    "openai": re.compile(r"(gpt|o\d|chatgpt|codex|computer-use|ft:gpt|text-|davinci)"),
    "gemini": re.compile(r"(gemini|gemma|learnlm)"),
    "mistral": _MISTRAL_MODEL,
    "deepseek": re.compile(r"deepseek"),
    "moonshot": re.compile(r"(kimi|moonshot)"),
    "zhipu": re.compile(r"(glm|chatglm|codegeex)"),
}
_VENDOR_MODELS["openai-responses"] = _VENDOR_MODELS["openai"]
_VENDOR_MODELS["vertex"] = _VENDOR_MODELS["gemini"]
_VENDOR_MODELS["deepseek-responses"] = _VENDOR_MODELS["deepseek"]


def model_known(provider: str, model: str) -> bool:
    """Whether ``model`` is a model of ``provider`` as toolpair reads model ids."""
    if provider == "bedrock":
        low = model.strip().lower()
        # An opaque ARN (an application inference profile) names no model: the strict set
        # is exactly what applies to it.
        if low.startswith("arn:") or "arn:" in low:
            return True
        from toolpair.providers import get_profile

        return get_profile("bedrock", model) is not get_profile("bedrock")
    pattern = _VENDOR_MODELS.get(provider)
    if pattern is None:  # portable: any model, its rules are the union anyway
        return True
    name = model.strip().lower().rsplit("/", 1)[-1].removeprefix("openai.")
    return pattern.match(name) is not None


#: (provider, model) pairs already warned about in this run: one warning, not one a file.
_WARNED: set[tuple[str, str]] = set()


def forget_warnings() -> None:
    """A new run warns afresh (the command may run several times in one process)."""
    _WARNED.clear()


def checked_model(provider: str, model: str | None, otherwise: str | None = None) -> str | None:
    """``--model`` for ``provider``: the model itself when toolpair can place it there;
    else a warning naming the model (once a run), and None (no model: ``otherwise`` if the
    caller has one, the strictest rules of that API if not)."""
    if model is None or model_known(provider, model):
        return model
    if (provider, model) in _WARNED:
        return None
    _WARNED.add((provider, model))
    fallback = (
        f"the session's own model {otherwise} applies"
        if otherwise
        else f"the strictest {provider} rules apply, as with no --model"
    )
    err(
        f"warning: --model {model} is not a model toolpair knows for {provider}; it is ignored "
        f"and {fallback} (see: toolpair rules {provider})"
    )
    return None


def err(msg: str) -> None:
    print(f"toolpair: {msg}", file=sys.stderr)


def unit_line(unit: Unit, index: int) -> int | None:
    if unit.line is not None:
        return unit.line
    if unit.lines is not None and 0 <= index < len(unit.lines):
        return unit.lines[index]
    return None


def judged(r: Resolved, args: argparse.Namespace, where: str) -> None:
    """A detected format that explains nothing, or almost nothing, of the document: the
    rules would skip it all, so no verdict is given (exit 2), and what was skipped is
    said. A format given with --format is taken at its word."""
    if args.format is not None or not isinstance(r.format, str):
        return
    items = r.history
    if isinstance(items, Mapping):
        items = items.get(LIST_KEYS.get(r.format, "messages"))
    try:
        coverage.guard(items, r.format)
    except NothingJudged as e:
        what = "nothing" if e.coverage.nothing else "almost nothing"
        raise ReadError(
            where, f"{what} judged, not reported valid: {e} (force one with --format)"
        ) from None
