"""The ASGI middleware that judges request bodies on the wire (pure ASGI, standard
library): exported as ``toolpair.integrations.asgi.ToolpairMiddleware`` for vLLM and any
ASGI app, and the front half of ``toolpair proxy``.

For a POST to a route `toolpair.gateway.wire.route` knows, the body is read whole
(bounded in size, in time, and in the total held at once by this middleware), decoded
from its ``Content-Encoding``, judged, and handed on: byte-identical when valid,
repaired (and re-encoded, with a new ``Content-Length`` and no ``Transfer-Encoding``)
when not, or answered with the API's own 400 in reject mode. Everything else (other
paths and methods, websockets, lifespan) passes straight through. The response is never
altered or delayed; with a corpus folder (``record_dir``) its status is noted, and a 4xx
error body copied (bounded) as it passes, to record where the provider and toolpair
disagree (`toolpair.corpus`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolpair.corpus import Recorder, disagreement, error_text
from toolpair.gateway import wire
from toolpair.gateway.metrics import CONTENT_TYPE, DEFAULT_PATH, Metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("toolpair")

MiB = 1024 * 1024
#: Defaults a user would expect of a gateway for LLM requests: the hosted APIs take
#: bodies of a few tens of MiB (images, documents inline).
MAX_BODY = 64 * MiB
MAX_BUFFERED = 512 * MiB
BODY_TIMEOUT = 60.0
#: Bodies larger than this are judged off the event loop, so one large history does
#: not stall every other connection.
_OFF_LOOP = 1 * MiB


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {value!r}") from None
    if number <= 0:
        raise ValueError(f"{name} must be positive, not {value!r}")
    return number


class ToolpairMiddleware:
    """Judge the request body of the routes `toolpair.gateway.wire.route` knows; pass
    everything else straight through.

    Configured by keyword arguments, else the environment (vLLM adds middleware with no
    arguments): ``mode`` / ``TOOLPAIR_MODE`` (``repair``, ``reject``, ``observe``),
    ``provider`` / ``TOOLPAIR_PROVIDER`` (the rules; by default those of the API each
    path belongs to), ``max_body`` / ``TOOLPAIR_MAX_BODY`` (bytes of one body, decoded
    or not: 413 beyond, before reading it), ``max_buffered`` / ``TOOLPAIR_MAX_BUFFERED``
    (bytes held by all requests being judged at once: 503 beyond), ``body_timeout`` /
    ``TOOLPAIR_BODY_TIMEOUT`` (seconds to wait for each part of a body: 408 beyond),
    ``record_dir`` / ``TOOLPAIR_RECORD_DIR`` (record each request where the provider's
    answer and toolpair's verdict on the body sent disagree, as an anonymised case, at
    most ``record_per_hour`` / ``TOOLPAIR_RECORD_PER_HOUR`` (60) per hour: docs/corpus.md),
    ``metrics`` / ``TOOLPAIR_METRICS`` (true, or the path: serve Prometheus metrics at
    that path, ``/toolpair/metrics`` by default; the path is answered here and never
    reaches the app).

    Every repaired, rejected or observed-broken request is one `toolpair.events` event
    with source ``source`` (``asgi``; ``proxy`` behind ``toolpair proxy``) and ``host``.
    """

    def __init__(
        self,
        app: ASGIApp,
        mode: str | None = None,
        provider: str | None = None,
        *,
        max_body: int | None = None,
        max_buffered: int | None = None,
        body_timeout: float | None = None,
        record_dir: str | os.PathLike[str] | None = None,
        record_per_hour: int | None = None,
        metrics: bool | str | None = None,
        source: str = "asgi",
        host: str | None = None,
    ) -> None:
        self.app = app
        self.source = source
        self.host = host
        if metrics is None:
            env = (os.environ.get("TOOLPAIR_METRICS") or "").strip()
            metrics = env if env.startswith("/") else env.lower() in ("1", "true", "yes", "on")
        #: The metrics this middleware counts (None when not asked for).
        self.metrics: Metrics | None = Metrics() if metrics else None
        self.metrics_path = metrics if isinstance(metrics, str) else DEFAULT_PATH
        chosen = (mode or os.environ.get("TOOLPAIR_MODE") or "repair").strip().lower()
        if chosen not in wire.MODES:
            raise ValueError(
                f"TOOLPAIR_MODE must be one of {', '.join(wire.MODES)}, not {chosen!r}"
            )
        self.mode: wire.Mode = chosen
        named = provider or os.environ.get("TOOLPAIR_PROVIDER") or None
        if named is not None:
            from toolpair.providers import PROVIDERS

            if named not in PROVIDERS:
                raise ValueError(
                    f"TOOLPAIR_PROVIDER must be one of {', '.join(PROVIDERS)}, not {named!r}"
                )
        self.provider = named
        self.max_body = int(max_body or _env_number("TOOLPAIR_MAX_BODY", MAX_BODY))
        self.max_buffered = int(max_buffered or _env_number("TOOLPAIR_MAX_BUFFERED", MAX_BUFFERED))
        self.body_timeout = body_timeout or _env_number("TOOLPAIR_BODY_TIMEOUT", BODY_TIMEOUT)
        #: Bytes held right now by requests being read and judged.
        self.buffered = 0
        self.recorder = recorder(record_dir, record_per_hour)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        metrics = self.metrics
        if metrics is None or scope["type"] != "http":
            await self._handle(scope, receive, send)
            return
        if scope.get("path") == self.metrics_path:
            await self._serve_metrics(scope, send, metrics)
            return
        started = time.perf_counter()
        status = 0

        async def timed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                metrics.http(method, status, time.perf_counter() - started)
            await send(message)

        method = str(scope.get("method", ""))
        try:
            await self._handle(scope, receive, timed)
        finally:
            if not status:  # the client left, or the app failed before answering
                metrics.http(method, 0, time.perf_counter() - started)

    async def _serve_metrics(self, scope: Scope, send: Send, metrics: Metrics) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _answer_body(send, 405, b"", extra=[(b"allow", b"GET, HEAD")])
            return
        body = metrics.render().encode()
        await _answer_body(
            send,
            200,
            b"" if scope.get("method") == "HEAD" else body,
            content_type=CONTENT_TYPE.encode(),
            length=len(body),
        )

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        route = wire.route(path)
        if route is None:
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers", []))
        length = _content_length(headers)
        if length is not None and length > self.max_body:
            # Before reading a byte: the server sends no 100 Continue for a body that
            # is refused (the app never called receive).
            await _answer(send, 413, route.format, "request body too large", close=True)
            return
        held = 0
        try:
            raw, held = await self._read(receive, route.format, send, length)
            if raw is None:
                return
            encoding = _header(headers, b"content-encoding")
            judged: list[tuple[wire.Verdict, bytes]] = []
            version = _header(headers, b"anthropic-version")
            body = await self._judged(
                scope, raw, encoding, route.format, send, judged, api_version=version
            )
        finally:
            self.buffered -= held
        if body is None:
            return
        if body is not raw:
            scope = dict(scope)
            scope["headers"] = [
                (k, v)
                for k, v in headers
                if k.lower() not in (b"content-length", b"transfer-encoding")
            ] + [(b"content-length", str(len(body)).encode())]
        if self.recorder is not None and judged:
            await self._recording(scope, body, route, judged[0], receive, send)
            return
        await self._forward(scope, body, receive, send)

    async def _forward(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """The app, given ``body`` as the whole request body."""
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            # After the body, the app waits on the client (a disconnect).
            return await receive()

        await self.app(scope, replay, send)

    async def _read(
        self, receive: Receive, format: str, send: Send, length: int | None
    ) -> tuple[bytes | None, int]:
        """The whole body (None when answered or the client left), and the bytes it
        holds of the shared budget (given back by the caller)."""
        held = 0

        async def refuse(status: int, message: str) -> tuple[None, int]:
            await _answer(send, status, format, message, close=True)
            return None, held

        if length is not None:
            if self.buffered + length > self.max_buffered:
                return await refuse(503, "too many request bodies held at once; retry")
            held = length
            self.buffered += length
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.body_timeout)
            except asyncio.TimeoutError:
                return await refuse(408, "request body not received in time")
            if message["type"] == "http.disconnect":
                return None, held  # the client left before sending its body
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > self.max_body:
                    return await refuse(413, "request body too large")
                if size > held:
                    if self.buffered + size - held > self.max_buffered:
                        return await refuse(503, "too many request bodies held at once; retry")
                    self.buffered += size - held
                    held = size
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks), held

    async def _judged(
        self,
        scope: Scope,
        raw: bytes,
        encoding: str | None,
        format: str,
        send: Send,
        judged: list[tuple[wire.Verdict, bytes]] | None = None,
        *,
        api_version: str | None = None,
    ) -> bytes | None:
        """The body to hand on (``raw`` itself when unchanged), or None when answered.
        ``judged`` receives the verdict and the decoded body it was given;
        ``api_version`` is the request's ``anthropic-version`` header."""
        path = scope.get("path", "")
        plain = raw
        if encoding is not None and encoding.strip().lower() not in ("", "identity"):
            try:
                decoded = wire.decode_body(raw, encoding, self.max_body)
            except wire.BodyTooLarge:
                await _answer(send, 413, format, "request body too large", close=True)
                return None
            if decoded is None:
                logger.warning(
                    "toolpair did not judge %s: Content-Encoding %s could not be decoded",
                    wire.printable(path, 200),
                    wire.printable(encoding, 40),
                )
                return raw
            plain = decoded
        on_event = self.metrics.event if self.metrics is not None else None
        try:
            if len(plain) > _OFF_LOOP:
                verdict = await asyncio.to_thread(
                    wire.judge,
                    plain,
                    path,
                    self.mode,
                    provider=self.provider,
                    source=self.source,
                    host=self.host,
                    on_event=on_event,
                    api_version=api_version,
                )
            else:
                verdict = wire.judge(
                    plain,
                    path,
                    self.mode,
                    provider=self.provider,
                    source=self.source,
                    host=self.host,
                    on_event=on_event,
                    api_version=api_version,
                )
        except Exception as e:  # never a 500 the app would not have given
            logger.warning(
                "toolpair did not judge %s: %s; it goes on as sent",
                wire.printable(path, 200),
                type(e).__name__,
            )
            return raw
        if self.metrics is not None:
            self.metrics.judged(format, _outcome(verdict))
        if verdict is None:
            return raw
        if judged is not None:
            judged.append((verdict, plain))
        if verdict.action == "reject":
            await _answer_body(send, verdict.status, verdict.body)
            return None
        if not verdict.changed:
            return raw
        if plain is raw:
            return verdict.body
        return wire.encode_body(verdict.body, encoding or "")

    async def _recording(
        self,
        scope: Scope,
        body: bytes,
        route: wire.Route,
        judged: tuple[wire.Verdict, bytes],
        receive: Receive,
        send: Send,
    ) -> None:
        """Hand the request on as `__call__` does, noting the answer as it passes (never
        holding a message back), then record a disagreement off the event loop."""
        verdict, plain = judged
        # What went out, decoded: the repaired body, else the one received.
        sent = verdict.body if verdict.changed else plain
        valid = not verdict.violations and not any(f.kind == "unrepaired" for f in verdict.fixes)
        answer = _Answer()

        async def noted(message: Message) -> None:
            answer.note(message)
            await send(message)

        await self._forward(scope, body, receive, noted)
        if disagreement(valid, answer.status) is None:
            return
        error = answer.error_text()
        if error_text(error).startswith("toolpair"):
            return  # a gateway's own answer (toolpair proxy's), not the provider's
        await asyncio.to_thread(self._record, sent, verdict, route, valid, answer.status, error)

    def _record(
        self,
        sent: bytes,
        verdict: wire.Verdict,
        route: wire.Route,
        valid: bool,
        status: int,
        error: str,
    ) -> None:
        if self.recorder is None:
            return
        self.recorder.observe_bytes(
            sent,
            provider=verdict.provider,
            model=route.model,
            host=self.host,
            valid=valid,
            status=status,
            error=error,
            source=self.source,
            format=verdict.format,
        )


#: The most of a 4xx error body copied for the corpus (an API's error is a few hundred
#: bytes; a case keeps at most 4000 characters of it).
ERROR_COPY = 64 * 1024


class _Answer:
    """The status of a response, and the start of its body when it is a 4xx (decoded
    from its Content-Encoding when recorded)."""

    __slots__ = ("encoding", "error", "status")

    def __init__(self) -> None:
        self.status = 0
        self.error = bytearray()
        self.encoding: str | None = None

    def note(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "http.response.start":
            self.status = int(message.get("status", 0))
            self.encoding = _header(list(message.get("headers", [])), b"content-encoding")
        elif kind == "http.response.body" and 400 <= self.status < 500:
            room = ERROR_COPY - len(self.error)
            if room > 0:
                self.error += bytes(message.get("body", b""))[:room]

    def error_text(self) -> str:
        data = bytes(self.error)
        if self.encoding and self.encoding.strip().lower() not in ("", "identity"):
            try:
                decoded = wire.decode_body(data, self.encoding, ERROR_COPY * 16)
            except wire.BodyTooLarge:
                decoded = None
            data = decoded if decoded is not None else b""
        return data.decode("utf-8", "replace")


def recorder(
    directory: str | os.PathLike[str] | None, per_hour: int | None = None
) -> Recorder | None:
    """The corpus recorder of a gateway: ``directory``, else ``TOOLPAIR_RECORD_DIR``;
    ``per_hour``, else ``TOOLPAIR_RECORD_PER_HOUR``, else 60. None when neither names a
    folder."""
    directory = directory or os.environ.get("TOOLPAIR_RECORD_DIR") or None
    if directory is None:
        return None
    if per_hour is None:
        value = os.environ.get("TOOLPAIR_RECORD_PER_HOUR", "").strip() or "60"
        try:
            per_hour = int(value)
        except ValueError:
            raise ValueError(
                f"TOOLPAIR_RECORD_PER_HOUR must be a whole number, not {value!r}"
            ) from None
    return Recorder(directory, per_hour=per_hour)


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    value = _header(headers, b"content-length")
    if value is None or not value.strip().isdigit():
        return None  # the server has already refused a malformed one
    return int(value)


async def _answer(send: Send, status: int, format: str, message: str, close: bool) -> None:
    body = wire.encode(wire.error_envelope(format, f"toolpair: {message}", status))
    await _answer_body(send, status, body, close)


def _outcome(verdict: wire.Verdict | None) -> str:
    if verdict is None:
        return "unjudged"
    if verdict.action == "reject":
        return "rejected"
    if verdict.changed:
        return "repaired"
    return "observed" if verdict.violations else "valid"


async def _answer_body(
    send: Send,
    status: int,
    body: bytes,
    close: bool = False,
    *,
    content_type: bytes = b"application/json",
    length: int | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body) if length is None else length).encode()),
        *(extra or []),
    ]
    if close:
        # The rest of the body is not read: the connection cannot carry another request.
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
