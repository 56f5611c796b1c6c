"""``toolpair proxy``: a reverse proxy that sends every request out paired.

    toolpair proxy --upstream URL [--mode repair|reject|observe] [--host 127.0.0.1] [--port 8787]

It stands in front of one Anthropic-, OpenAI- or Gemini-compatible endpoint, hosted or
private, so that a program that never imports toolpair (a coding agent pointed at it
with ``ANTHROPIC_BASE_URL`` or ``OPENAI_BASE_URL``) sends paired histories.

It is `toolpair.gateway.asgi.ToolpairMiddleware` in front of a small forwarding app
(`Forwarder`), served by uvicorn (with httptools) and forwarding with one pooled
``httpx.AsyncClient`` (keep-alive, TLS reuse, HTTP/2 where ``h2`` is installed and asked
for): HTTP parsing, limits and timeouts are the job of libraries hardened for it. They
come with the ``proxy`` extra and are imported only when the proxy runs.

- The body of a POST to a chat completions, messages, responses, generateContent or
  token-counting path is judged; a valid body is forwarded byte-identical.
- Everything else (other paths, methods, bodies) is forwarded untouched, streaming.
- Responses are never read: their bytes are relayed as they arrive (server-sent events
  stream unbuffered); a client that leaves cancels its upstream request at once.
- Requests go only to the configured upstream, under its base path: the request path is
  normalised (``.``, ``..``, their percent-encodings) before it is judged or forwarded,
  and the Host header routes nothing.
- The upstream's status passes through; an upstream that cannot be reached answers 502,
  one that does not answer in time 504.
- Headers (and the credentials in them) are forwarded and never logged; nor are query
  strings or bodies.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import posixpath
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from toolpair.gateway import wire
from toolpair.gateway.asgi import (
    BODY_TIMEOUT,
    MAX_BODY,
    MAX_BUFFERED,
    Message,
    Receive,
    Scope,
    Send,
    ToolpairMiddleware,
    recorder,
)
from toolpair.gateway.metrics import DEFAULT_PATH

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("toolpair")

#: The install line printed when the extra is missing: toolpair is installed from its
#: repository, not PyPI.
INSTALL = 'pip install ".[proxy]" (from a toolpair checkout)'

#: Headers that belong to one connection, not to the message (RFC 9110 7.6.1), plus the
#: ones the client library sets itself.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "expect",
    }
)
_ENV = "TOOLPAIR_PROXY_SETTINGS"


@dataclass(frozen=True)
class Settings:
    """Everything ``toolpair proxy`` is told, with the defaults of its flags."""

    upstream: str
    mode: wire.Mode | None = "repair"  # None: no judging (the benchmarks' pass-through)
    provider: str | None = None
    host: str = "127.0.0.1"
    port: int = 8787
    #: The upstream: connect, and each read (a stream's gap between two events).
    timeout: float = 600.0
    connect_timeout: float | None = None
    read_timeout: float | None = None
    #: The client side.
    max_body: int = MAX_BODY
    max_buffered: int = MAX_BUFFERED
    max_connections: int = 1000
    header_timeout: float = 30.0
    body_timeout: float = BODY_TIMEOUT
    keepalive_timeout: float = 75.0
    workers: int = 1
    http2: bool = False
    #: The corpus folder (`toolpair.corpus`): None records nothing.
    record_dir: str | None = None
    record_per_hour: int = 60
    #: Serve Prometheus metrics at ``metrics_path`` (answered by the proxy, never
    #: forwarded).
    metrics: bool = False
    metrics_path: str = DEFAULT_PATH


class Upstream:
    """The one endpoint a proxy forwards to."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("--upstream must be an http:// or https:// URL with a host")
        if parts.username is not None or parts.password is not None:
            # Never printed, never sent in a way the operator did not choose: the
            # clients' own credentials are forwarded as they send them.
            raise ValueError(
                "--upstream must not carry a user or password (user:password@host); "
                "clients' own credential headers are forwarded"
            )
        if parts.query or parts.fragment:
            raise ValueError("--upstream must not carry a query or fragment")
        parts.port  # noqa: B018 - a malformed port raises ValueError here, not per request
        self.url = url
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base = parts.path.rstrip("/")

    def target(self, path: str) -> str | None:
        """The upstream URL path for a request's decoded ``path``: dot segments
        resolved inside the request's own path (a ``..`` at its top stays there), so it
        can never leave the base path. None for a target that is not a path."""
        if not path.startswith("/"):
            return None
        return self.base + quote(normalised(path), safe="/:@!$&'()*+,;=-._~")


def normalised(path: str) -> str:
    """A decoded request path with its dot segments resolved, as it is forwarded."""
    clean = posixpath.normpath(path.replace("\\", "/"))
    clean = "/" + clean.lstrip("/") if clean != "." else "/"
    if path.endswith("/") and not clean.endswith("/"):
        clean += "/"
    return clean


class Forwarder:
    """The forwarding app: each request to the upstream over one pooled client."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.upstream = Upstream(settings.upstream)
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            s = self.settings
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    s.timeout,
                    connect=s.connect_timeout or s.timeout,
                    read=s.read_timeout or s.timeout,
                ),
                limits=httpx.Limits(
                    max_connections=s.max_connections,
                    max_keepalive_connections=min(s.max_connections, 100),
                    keepalive_expiry=30.0,
                ),
                http2=s.http2,
                trust_env=False,  # no proxy variables, no .netrc: only the upstream
                follow_redirects=False,
            )
        return self._client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets: not forwarded (the server answers 403)
        await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._client is not None:
                    await self._client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        import httpx

        format = _format(scope)
        method = scope["method"]
        if scope.get("http_version") not in ("1.0", "1.1", "2"):
            # HTTP/0.9 has no headers to forward, nor a status to answer with.
            await _error(send, 505, format, "HTTP version not supported")
            return
        if method == "CONNECT":
            await _error(send, 405, format, "CONNECT is not supported (this is not an open proxy)")
            return
        target = self.upstream.target(scope.get("path", ""))
        if target is None:
            await _error(send, 400, format, "request target must be a path")
            return
        query = scope.get("query_string", b"")
        url = self.upstream.origin + target + (("?" + query.decode("latin-1")) if query else "")
        req_headers = list(scope.get("headers", []))
        drop = _HOP | _named_in_connection(req_headers)
        headers = [(k, v) for k, v in req_headers if k.decode("latin-1").lower() not in drop]
        length = _value(req_headers, b"content-length")
        chunked = _value(req_headers, b"transfer-encoding") is not None
        body_done = asyncio.Event()
        content: bytes | AsyncIterator[bytes] = b""
        if length is not None or chunked:
            first = await _receive(receive, self.settings.body_timeout)
            if first is None or first["type"] == "http.disconnect":
                return
            if not first.get("more_body", False):
                content = first.get("body", b"")
                body_done.set()
            else:
                content = self._body(first, receive, body_done)
            if length is not None:
                headers.append((b"content-length", length.encode()))
        else:
            body_done.set()
        request = httpx.Request(method, url, headers=headers, content=content)

        relay = asyncio.ensure_future(self._relay(request, scope, send, format))
        gone = asyncio.ensure_future(_disconnected(receive, body_done))
        try:
            await asyncio.wait({relay, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not relay.done():
                relay.cancel()  # the client left: the upstream request ends now
            gone.cancel()
            await asyncio.gather(relay, gone, return_exceptions=True)
        if relay.done() and not relay.cancelled() and relay.exception() is not None:
            raise relay.exception()  # type: ignore[misc]

    async def _body(
        self, first: Message, receive: Receive, done: asyncio.Event
    ) -> AsyncIterator[bytes]:
        yield first.get("body", b"")
        while True:
            message = await _receive(receive, self.settings.body_timeout)
            if message is None:
                raise _ClientBodyTimeout
            if message["type"] == "http.disconnect":
                raise _ClientGone
            yield message.get("body", b"")
            if not message.get("more_body", False):
                done.set()
                return

    async def _relay(self, request: httpx.Request, scope: Scope, send: Send, format: str) -> None:
        import httpx

        try:
            response = await self.client().send(request, stream=True)
        except (_ClientGone, _ClientBodyTimeout) as e:
            if isinstance(e, _ClientBodyTimeout):
                await _error(send, 408, format, "request body not received in time", close=True)
            return
        except httpx.TimeoutException:
            await _error(send, 504, format, "the upstream did not answer in time")
            return
        except (httpx.HTTPError, OSError) as e:
            await _error(send, 502, format, f"the upstream failed ({type(e).__name__})")
            return
        try:
            await self._stream(response, scope, send)
        finally:
            await response.aclose()

    async def _stream(self, response: httpx.Response, scope: Scope, send: Send) -> None:
        import httpx

        raw = response.headers.raw
        drop = _HOP | _named_in_connection(raw)
        headers = [(k, v) for k, v in raw if k.decode("latin-1").lower() not in drop]
        length = response.headers.get("content-length")
        # A Content-Length beside a chunked body is not passed on: the body is framed
        # by what the upstream really sent (RFC 9112 6.3).
        framed = length is not None and "transfer-encoding" not in response.headers
        bodiless = scope["method"] == "HEAD" or response.status_code in (204, 304)
        if framed or (bodiless and length is not None):
            headers.append((b"content-length", length.encode()))
        elif not bodiless and scope.get("http_version") == "1.0":
            # An HTTP/1.0 client cannot read chunked: the body is sent whole, sized.
            data = bytearray()
            async for chunk in response.aiter_raw():
                data += chunk
                if len(data) > self.settings.max_body:
                    await _error(send, 502, _format(scope), "the upstream response is too large")
                    return
            headers.append((b"content-length", str(len(data)).encode()))
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": headers}
            )
            await send({"type": "http.response.body", "body": bytes(data)})
            return
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        if bodiless:
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except (httpx.HTTPError, OSError) as e:
            # The upstream cut the response: this connection ends without the final
            # chunk (or short of its length), so the client sees a broken response.
            logger.warning(
                "toolpair proxy: the upstream cut a response short (%s)", type(e).__name__
            )
            return
        await send({"type": "http.response.body", "body": b""})


class _ClientGone(Exception):
    pass


class _ClientBodyTimeout(Exception):
    pass


async def _receive(receive: Receive, timeout: float) -> Message | None:
    try:
        return await asyncio.wait_for(receive(), timeout)
    except asyncio.TimeoutError:
        return None


async def _disconnected(receive: Receive, body_done: asyncio.Event) -> None:
    """Returns when the client disconnects (watched once its body is read)."""
    await body_done.wait()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def _value(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def _named_in_connection(headers: list[tuple[bytes, bytes]]) -> set[str]:
    named: set[str] = set()
    for k, v in headers:
        if k.lower() == b"connection":
            named.update(t.strip().lower() for t in v.decode("latin-1").split(",") if t.strip())
    return named


def _format(scope: Scope) -> str:
    r = wire.route(scope.get("path", ""))
    return r.format if r is not None else "openai"


async def _error(send: Send, status: int, format: str, message: str, close: bool = False) -> None:
    body = wire.encode(wire.error_envelope(format, f"toolpair proxy: {message}", status))
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:  # the request's body was not all read: the connection cannot go on
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Normalise:
    """Resolves dot segments in the decoded path before anything judges or forwards
    it: the middleware sees the very path the upstream will."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/"):
            path = normalised(scope["path"])
            if path != scope["path"]:
                scope = dict(scope, path=path, raw_path=quote(path).encode())
        await self.app(scope, receive, send)


def build_app(settings: Settings) -> Any:
    """The proxy as one ASGI app: path normalisation, the middleware (unless ``mode``
    is None), the forwarder."""
    forwarder: Any = Forwarder(settings)
    inner = forwarder
    if settings.mode is not None:
        inner = ToolpairMiddleware(
            forwarder,
            settings.mode,
            settings.provider,
            max_body=settings.max_body,
            max_buffered=settings.max_buffered,
            body_timeout=settings.body_timeout,
            metrics=settings.metrics_path if settings.metrics else False,
            source="proxy",
            host=urlsplit(settings.upstream).hostname,
        )
        # The proxy records into --record only, not the environment's folder (which
        # names the ASGI middleware's).
        inner.recorder = (
            recorder(settings.record_dir, settings.record_per_hour)
            if settings.record_dir is not None
            else None
        )
    app = _Normalise(inner)
    return app


def app_from_environment() -> Any:
    """The app of each worker process (``--workers N``), from the settings the main
    process left in the environment."""
    return build_app(Settings(**json.loads(os.environ[_ENV])))


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(settings: Settings, ready: Any = None) -> None:
    """Run the proxy until interrupted. Raises ImportError naming the extra when
    uvicorn or httpx is missing, ValueError for a bad setting, OSError when the
    address cannot be bound."""
    if settings.mode is not None and settings.mode not in wire.MODES:
        raise ValueError(f"unknown mode {settings.mode!r}; known: {', '.join(wire.MODES)}")
    Upstream(settings.upstream)  # refuse a bad upstream before binding
    if settings.metrics:
        if settings.mode is None:
            raise ValueError("--metrics needs a mode: the metrics are the middleware's")
        if settings.workers > 1:
            # Each worker process would count its own and a scrape reach one of them.
            raise ValueError("--metrics counts in one process: use it with --workers 1")
        if not settings.metrics_path.startswith("/"):
            raise ValueError("--metrics-path must start with /")
    if settings.http2:
        # httpx needs h2 for HTTP/2: say so now, not on the first request.
        import h2  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    from toolpair.gateway import server

    sock = server.bind(settings.host, settings.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"toolpair proxy: listening on http://{shown}:{port} -> {settings.upstream} "
        f"(mode {settings.mode}, rules {settings.provider or 'of each API'}"
        f"{f', {settings.workers} workers' if settings.workers > 1 else ''}"
        f"{f', recording disagreements in {settings.record_dir}' if settings.record_dir else ''}"
        f"{f', metrics at {settings.metrics_path}' if settings.metrics else ''})",
        flush=True,
    )
    if not loopback(settings.host):
        logger.warning(
            "toolpair proxy: WARNING: bound to %s, reachable from other machines; anyone "
            "who can reach it can use the upstream with the credentials they send",
            wire.printable(settings.host),
        )
    if ready is not None:
        ready.set()
    os.environ[_ENV] = json.dumps(asdict(settings))
    app: Any = (
        "toolpair.gateway.proxy:app_from_environment"
        if settings.workers > 1
        else build_app(settings)
    )
    server.run(
        app,
        sock,
        workers=settings.workers,
        max_connections=settings.max_connections,
        header_timeout=settings.header_timeout,
        keepalive_timeout=settings.keepalive_timeout,
    )
