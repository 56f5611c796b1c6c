"""``toolpair proxy``: a reverse proxy that sends every request out paired.

    toolpair proxy --upstream URL [--mode repair|reject|observe] [--host 127.0.0.1] [--port 8787]

It stands in front of one Anthropic-, OpenAI- or Gemini-compatible endpoint, hosted or
private, so that a program that never imports toolpair (a coding agent pointed at it
with ``ANTHROPIC_BASE_URL`` or ``OPENAI_BASE_URL``) sends paired histories. Standard
library only: a threading HTTP/1.1 server and ``http.client``.

- The body of a POST to a chat completions, messages, responses or generateContent path
  is judged by `toolpair.gateway.wire`; a valid body is forwarded byte-identical.
- Everything else (other paths, methods, bodies) is forwarded untouched.
- Responses are never read: their bytes are relayed as they arrive, so server-sent
  events stream unbuffered.
- Requests go only to the configured upstream: a request target that is not a path
  (an absolute URI, CONNECT) is refused, and the Host header routes nothing.
- The upstream's status passes through; an upstream that cannot be reached answers 502,
  one that does not answer in time 504.
- Headers (and the credentials in them) are forwarded and never logged.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from toolpair.gateway import wire

logger = logging.getLogger("toolpair")

#: Headers that belong to one connection, not to the request (RFC 9110 7.6.1), plus the
#: ones the proxy sets itself.
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
        # Answered by this server itself; the body is already read when it is forwarded.
        "expect",
    }
)
#: Small reads keep an event stream flowing as it is produced; larger ones cost nothing
#: more, since ``read1`` returns what is there.
_CHUNK = 65536
_MAX_BODY = 256 * 1024 * 1024


class Upstream:
    """The one endpoint a proxy forwards to."""

    def __init__(self, url: str, timeout: float = 600.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http:// or https:// URL, not {url!r}")
        if parts.query or parts.fragment:
            raise ValueError("upstream URL must not carry a query or fragment")
        self.url = url
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.base = parts.path.rstrip("/")
        self.netloc = parts.netloc.rsplit("@", 1)[-1]
        self.timeout = timeout
        self._ssl = ssl.create_default_context() if self.https else None

    def connect(self) -> http.client.HTTPConnection:
        if self._ssl is not None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self._ssl
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)


class ProxyServer(ThreadingHTTPServer):
    """One thread per client connection, keep-alive; no shared state but the config."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: tens of clients connecting at once (a
    # coding agent's parallel requests, a load run) would be reset before accept().
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        upstream: Upstream,
        mode: wire.Mode | None = "repair",
        provider: str | None = None,
    ) -> None:
        if mode is not None and mode not in wire.MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {', '.join(wire.MODES)}")
        self.upstream = upstream
        #: None forwards every body unjudged (the benchmarks' bare pass-through).
        self.mode = mode
        self.provider = provider
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        # The request line only (never headers); at DEBUG so a busy proxy stays quiet.
        logger.debug("proxy: " + format, *args)

    def do_GET(self) -> None:
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def do_CONNECT(self) -> None:
        self._plain(405, "toolpair proxy: CONNECT is not supported (this is not an open proxy)")

    # -- helpers -------------------------------------------------------------------

    def _plain(self, status: int, message: str, format: str | None = None) -> None:
        body = wire.encode(wire.error_envelope(format or "openai", message, status))
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _read_body(self) -> bytes | None:
        te = self.headers.get("transfer-encoding", "").lower()
        if "chunked" in te:
            parts = []
            total = 0
            while True:
                size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass  # trailers are dropped
                    break
                total += size
                if total > _MAX_BODY:
                    return None
                parts.append(self.rfile.read(size))
                self.rfile.readline(8)
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        if length > _MAX_BODY:
            return None
        return self.rfile.read(length) if length else b""

    def _forward(self) -> None:
        if not self.path.startswith("/") or self.path.startswith("//"):
            # An absolute URI or authority form: this proxy sends only to its upstream.
            self.close_connection = True
            self._plain(400, "toolpair proxy: request target must be a path")
            return
        try:
            body = self._read_body()
        except ValueError:
            self.close_connection = True
            self._plain(400, "toolpair proxy: malformed chunked request body")
            return
        if body is None:
            self.close_connection = True
            self._plain(413, "toolpair proxy: request body too large")
            return
        route = wire.route(self.path) if self.command == "POST" else None
        server = self.server
        if route is not None and server.mode is not None and body:
            verdict = wire.judge(body, self.path, server.mode, provider=server.provider)
            if verdict is not None:
                if verdict.action == "reject":
                    self._answer(verdict.status, verdict.body)
                    return
                body = verdict.body
        self._relay(body, route.format if route else None)

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _relay(self, body: bytes, format: str | None) -> None:
        up = self.server.upstream
        drop = _HOP | {
            h.strip().lower() for h in self.headers.get("connection", "").split(",") if h.strip()
        }
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in drop]
        headers.append(("Host", up.netloc))
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(body))))
        conn = up.connect()
        try:
            try:
                conn.putrequest(
                    self.command, up.base + self.path, skip_host=True, skip_accept_encoding=True
                )
                for k, v in headers:
                    conn.putheader(k, v)
                conn.endheaders(body or None)
                resp = conn.getresponse()
            except TimeoutError:
                self.close_connection = True
                self._plain(504, "toolpair proxy: the upstream did not answer in time", format)
                return
            except (OSError, http.client.HTTPException) as e:
                self.close_connection = True
                self._plain(
                    502, f"toolpair proxy: the upstream failed ({type(e).__name__})", format
                )
                return
            self._stream(resp)
        finally:
            conn.close()

    def _stream(self, resp: http.client.HTTPResponse) -> None:
        self.send_response_only(resp.status, resp.reason)
        length = resp.getheader("content-length")
        framed = self.command == "HEAD" or resp.status in (204, 304) or resp.status < 200
        drop = _HOP | {h.strip().lower() for h in (resp.getheader("connection") or "").split(",")}
        for k, v in resp.getheaders():
            if k.lower() not in drop:
                self.send_header(k, v)
        chunked = length is None and not framed
        if length is not None:
            self.send_header("Content-Length", length)
        elif chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if framed:
            return
        try:
            while True:
                data = resp.read1(_CHUNK)
                if not data:
                    break
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                else:
                    self.wfile.write(data)
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            # The upstream cut the stream (or the client left): end this connection
            # without the final chunk, so the client sees a broken stream, not a
            # complete one.
            self.close_connection = True
            return
        if length is not None and resp.length:
            self.close_connection = True  # fewer bytes than announced
            return
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


def serve(
    upstream: str,
    *,
    mode: wire.Mode = "repair",
    host: str = "127.0.0.1",
    port: int = 8787,
    provider: str | None = None,
    timeout: float = 600.0,
    ready: threading.Event | None = None,
) -> None:
    """Run the proxy until interrupted."""
    server = ProxyServer((host, port), Upstream(upstream, timeout), mode, provider)
    bound, bound_port = server.server_address[:2]
    bound_host = bound.decode() if isinstance(bound, bytes) else str(bound)
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(
        f"toolpair proxy: listening on http://{shown}:{bound_port} -> {upstream} "
        f"(mode {mode}, rules {provider or 'of each API'})",
        flush=True,
    )
    if ready is not None:
        ready.set()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
