"""Judging request bodies on the wire: the shared engine of the gateway integrations
(`toolpair proxy`, the ASGI middleware, the LiteLLM guardrail).

A request is routed by its path to the wire format it is in and the hosted API whose
rules apply (an OpenAI-compatible endpoint gets OpenAI's rules, an Anthropic-compatible
one Anthropic's), then, by mode:

- ``repair``: a valid body passes byte-identical; a broken one is repaired and
  re-encoded.
- ``reject``: a broken body is answered with a 400 in that API's own error envelope,
  worded as that API words it; nothing is sent upstream.
- ``observe``: the body passes unchanged; what the API would refuse is logged.

Only the request is judged: responses (and their event streams) are never read.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpair import _api, events
from toolpair._model import Fix, InvalidHistory, Violation

# Re-exported: the escaping every gateway log line goes through.
from toolpair.events import printable as printable
from toolpair.events import shown_ids as shown_ids

logger = logging.getLogger("toolpair")

Mode = Literal["repair", "reject", "observe"]
MODES: tuple[Mode, ...] = ("repair", "reject", "observe")

#: The hosted API whose rules a wire format gets when nothing else is said: an endpoint
#: that copies a format (vLLM, Ollama, LM Studio, any compatible ``api_base``) checks
#: nothing itself, and the hosted API is where its traffic goes on a failover.
RULES_OF_FORMAT: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
}

_GEMINI = re.compile(r"/models/([^/:]+):(?:(?:stream)?[gG]enerateContent|countTokens)$")


@dataclass(frozen=True, slots=True)
class Route:
    """What a request path is: its wire format, and the model when the path names it."""

    format: str
    model: str | None = None


def route(path: str) -> Route | None:
    """The wire format a POST to ``path`` carries, or None for a path not judged.

    Paths are matched by their end, so any prefix (``/v1``, ``/openai/v1``, a gateway's
    own mount point) works. ``path`` is the decoded path, as the app behind routes it
    (an ASGI scope's ``path``). The token-counting endpoints are judged like the request
    whose history they measure: compaction code counts exactly the history it is about
    to cut, and the API refuses a broken one there too.
    """
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return Route("openai")
    if path.endswith(("/messages", "/messages/count_tokens")):
        return Route("anthropic")
    if path.endswith(("/responses", "/responses/input_tokens")):
        return Route("openai-responses")
    m = _GEMINI.search(path)
    if m:
        return Route("gemini", m.group(1))
    return None


@dataclass(slots=True)
class Verdict:
    """What to do with one request.

    ``action`` is ``pass`` (send ``body``, which is the very bytes received when nothing
    changed), ``reject`` (answer ``status`` with ``body``, an error envelope, and send
    nothing upstream). ``changed`` says whether ``body`` differs from the request's.
    """

    action: Literal["pass", "reject"]
    body: bytes
    format: str
    provider: str
    status: int = 200
    changed: bool = False
    fixes: list[Fix] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)


#: The error type each API gives a status (Anthropic's, OpenAI's, Gemini's words): a
#: gateway's own 502 must not read as the client's fault.
_ERROR_TYPES: dict[int, tuple[str, str, str]] = {
    400: ("invalid_request_error", "invalid_request_error", "INVALID_ARGUMENT"),
    408: ("timeout_error", "timeout_error", "DEADLINE_EXCEEDED"),
    413: ("request_too_large", "invalid_request_error", "INVALID_ARGUMENT"),
    502: ("api_error", "server_error", "UNAVAILABLE"),
    503: ("overloaded_error", "server_error", "UNAVAILABLE"),
    504: ("timeout_error", "server_error", "DEADLINE_EXCEEDED"),
}


def error_envelope(format: str, message: str, status: int = 400) -> dict[str, Any]:
    """An error body in the shape the API of ``format`` answers ``status`` with."""
    anthropic, openai, gemini = _ERROR_TYPES.get(
        status, ("api_error", "server_error", "INTERNAL") if status >= 500 else _ERROR_TYPES[400]
    )
    if format == "anthropic":
        return {"type": "error", "error": {"type": anthropic, "message": message}}
    if format == "gemini":
        return {"error": {"code": status, "message": message, "status": gemini}}
    if status != 400:
        return {"error": {"message": message, "type": openai, "param": None, "code": None}}
    param = "input" if format == "openai-responses" else "messages"
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": None,
        }
    }


def encode(body: Any) -> bytes:
    """A JSON body as sent upstream: compact, UTF-8."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _Numbers:
    """Numbers as the client wrote them. A number that Python would write back another
    way (``1.10``, ``1e5``, ``1e400``, ``-0``, ``NaN``) is parsed as a unique marker
    string, and `write` puts the client's own text back in its place: a repaired body
    is valid JSON, and says what the client said."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._tag = secrets.token_hex(6)

    def _mark(self, text: str) -> str:
        self.texts.append(text)
        return f"\ue000{self._tag}:{len(self.texts) - 1}\ue001"

    def float(self, text: str) -> Any:
        value = float(text)
        return value if repr(value) == text else self._mark(text)

    def int(self, text: str) -> Any:
        value = int(text)
        return value if str(value) == text else self._mark(text)

    def write(self, body: Any) -> bytes:
        try:
            out = encode(body)
        except UnicodeEncodeError:  # a lone surrogate the client sent escaped
            out = json.dumps(body, separators=(",", ":")).encode("ascii")
        if not self.texts:
            return out
        marker = re.compile(f'"\ue000{self._tag}:(\\d+)\ue001"'.encode())
        return marker.sub(lambda m: self.texts[int(m.group(1))].encode(), out)


def parse(raw: bytes) -> tuple[Any, Callable[[Any], bytes]] | None:
    """A JSON body and the function that writes it back (numbers as the client wrote
    them), or None for a body that is not UTF-8 JSON toolpair can hold: nested deeper
    than the interpreter recurses, an integer too long to read, another charset."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None  # UTF-16/32 or a legacy charset: the app reads it as it does
    numbers = _Numbers()
    try:
        body = json.loads(
            text, parse_float=numbers.float, parse_int=numbers.int, parse_constant=numbers._mark
        )
    except RecursionError:
        logger.warning("toolpair did not judge a body nested too deep to read; it goes on as sent")
        return None
    except ValueError:
        return None  # not JSON: the app answers it in its own words
    return body, numbers.write


#: Content-Encoding values a request body is judged in (gzip and deflate from the
#: standard library; br and zstd where their library is installed).
ENCODINGS = ("gzip", "x-gzip", "deflate", "br", "zstd")


class BodyTooLarge(Exception):
    """A compressed body that inflates past the limit."""


def decode_body(data: bytes, encoding: str, limit: int) -> bytes | None:
    """``data`` decoded from ``encoding``, None where it cannot be (unknown or
    unavailable codec, corrupt data); `BodyTooLarge` past ``limit`` bytes."""
    encoding = encoding.strip().lower()
    try:
        if encoding in ("gzip", "x-gzip", "deflate"):
            wbits = 31 if encoding != "deflate" else (15 if data[:1] == b"\x78" else -15)
            d = zlib.decompressobj(wbits)
            out = d.decompress(data, limit + 1)
            if len(out) > limit or d.unconsumed_tail:
                raise BodyTooLarge
            if not d.eof:
                return None
            return out
        if encoding == "br":
            import brotli  # type: ignore[import-not-found,unused-ignore]

            b = brotli.Decompressor()
            out = b.process(data, output_buffer_limit=limit + 1)
            if len(out) > limit or not b.is_finished():
                raise BodyTooLarge if len(out) > limit else ValueError
            return bytes(out)
        if encoding == "zstd":
            import zstandard  # type: ignore[import-not-found,unused-ignore]

            with zstandard.ZstdDecompressor().stream_reader(data) as r:
                out = r.read(limit + 1)
            if len(out) > limit:
                raise BodyTooLarge
            return bytes(out)
    except BodyTooLarge:
        raise
    except Exception:  # corrupt data, a codec's own error: the app answers it as it does
        return None
    return None


def encode_body(data: bytes, encoding: str) -> bytes:
    """``data`` in ``encoding`` again (a repaired body goes on as it came)."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        import gzip

        return gzip.compress(data, mtime=0)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "br":
        import brotli

        return bytes(brotli.compress(data))
    import zstandard

    return bytes(zstandard.ZstdCompressor().compress(data))


def judge(
    raw: bytes,
    path: str,
    mode: Mode = "repair",
    *,
    provider: str | None = None,
    source: str = "asgi",
    host: str | None = None,
    on_event: Callable[[events.RepairEvent], None] | None = None,
    api_version: str | None = None,
) -> Verdict | None:
    """The verdict on a POST body sent to ``path``, or None where toolpair has nothing
    to say (a path it does not judge, a body that is not a JSON request with a message
    list, one nested too deep to read): such a request goes on untouched.

    ``provider`` names the rules (``portable``, ``deepseek``...); by default, those of
    the hosted API the path's format belongs to. Never raises for any body.

    A repaired, rejected or observed-broken request is reported as one event
    (`toolpair.events`) with ``source`` and ``host``; ``on_event`` receives it too.
    ``api_version`` is the request's ``anthropic-version`` header (Anthropic's format
    only: the rules of API version 2026-10-21 hold where it names that version).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    r = route(path)
    if r is None:
        return None
    parsed = parse(raw)
    if parsed is None:
        return None
    body, write = parsed
    if not isinstance(body, dict):
        return None
    inner = body.get("generateContentRequest")
    if r.format == "gemini" and "contents" not in body and isinstance(inner, dict):
        # countTokens with the full request it measures: that request is judged, and
        # a repaired one goes back in its place.
        def nested(repaired: Any) -> bytes:
            return write({**body, "generateContentRequest": repaired})

        target: dict[str, Any] = inner
        writer: Callable[[Any], bytes] = nested
    else:
        target, writer = body, write
    with events.scope(
        source, mode=mode, model=_model_of(target, r.model), host=host, on_event=on_event
    ):
        version = api_version if r.format == "anthropic" else None
        return _judge(target, raw, r.format, mode, provider, r.model, path, writer, version)


def _model_of(body: Mapping[str, Any], model: str | None) -> str | None:
    given = model or body.get("model", body.get("modelId"))
    return given if isinstance(given, str) else None


def _judge(
    body: dict[str, Any],
    raw: bytes,
    format: str,
    mode: Mode,
    provider: str | None,
    model: str | None,
    where: str,
    write: Callable[[Any], bytes],
    api_version: str | None = None,
) -> Verdict | None:
    try:
        return judge_body(
            body,
            raw,
            format,
            mode,
            provider=provider,
            model=model,
            where=where,
            write=write,
            api_version=api_version,
        )
    except RecursionError:
        # A tool input nested deeper than the engine recurses: passed on as it came.
        logger.warning(
            "toolpair did not judge %s: the body is nested too deep to read", printable(where)
        )
        return None


def judge_body(
    body: Mapping[str, Any],
    raw: bytes,
    format: str,
    mode: Mode,
    *,
    provider: str | None = None,
    model: str | None = None,
    where: str = "",
    write: Callable[[Any], bytes] = encode,
    api_version: str | None = None,
) -> Verdict | None:
    """`judge` for a body already parsed (``raw`` is what is sent when it is valid;
    ``write`` encodes a repaired one; ``api_version`` the request's API version header).
    Reports into the caller's `toolpair.events` scope (a repair reports itself; a
    rejected or observed-broken body is told here)."""
    rules = provider or RULES_OF_FORMAT.get(format, format)
    started = events.clock()
    # The header, never the body, names the version: passed only where one was sent.
    context: dict[str, Any] = {"api_version": api_version} if api_version else {}
    try:
        if mode == "repair":
            rep = _api.repair(body, rules, model=model, format=format, **context)
        else:
            violations = _api.validate(body, rules, model=model, format=format, **context)
    except (InvalidHistory, TypeError):
        # Not a history toolpair can read: the upstream answers it in its own words.
        return None
    if mode == "repair":
        if not rep.changed:
            return Verdict("pass", raw, format, rules, fixes=rep.fixes)
        return Verdict("pass", write(rep.messages), format, rules, changed=True, fixes=rep.fixes)
    if not violations:
        return Verdict("pass", raw, format, rules)
    told = events.active()
    if told is not None:
        told.rejected(violations, provider=rules, format=format)
        told.add_time(events.clock() - started)
    if mode == "observe":
        return Verdict("pass", raw, format, rules, violations=violations)
    envelope = encode(error_envelope(format, violations[0].message))
    return Verdict("reject", envelope, format, rules, status=400, violations=violations)
