"""A fake LLM API on loopback (standard library) that records every request.

The first path segment picks how it behaves, so one server plays every upstream:

- ``/strict/...`` refuses what the hosted API refuses: it judges the body with
  toolpair's validator for the API the path belongs to and answers that API's own 400.
- ``/lax/...`` takes anything (vLLM and friends check no pairing).
- ``/refuse/...`` refuses every body with a 400 in the API's envelope whose message
  quotes the body's first text (as providers' errors quote content).
- ``/down/...`` answers 503; ``/fail/...`` answers 500.
- ``/cut/...`` starts an event stream and drops the connection half-way.
- ``/slow/...`` waits ``SLOW`` seconds before answering.

Routes: ``.../messages`` (Anthropic), ``.../chat/completions`` (OpenAI chat),
``.../responses`` (OpenAI Responses), ``.../models/M:generateContent`` (Gemini). A body
with ``"stream": true`` gets server-sent events, ``GAP`` seconds apart.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

import toolpair
from tests.support.loopback import QuietHandler
from tests.support.replies import (
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    response,
    sse,
)
from toolpair.gateway import wire

GAP = 0.15
SLOW = 3.0
EVENTS = 4


class _Backlogged(ThreadingHTTPServer):
    # The default listen backlog of 5 resets connections under the load test.
    request_queue_size = 128


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


ANTHROPIC_REPLY = anthropic_message("done")
CHAT_REPLY = chat_completion("done", model="gpt-4.1")
RESPONSES_REPLY = response("done", model="gpt-4.1")
GEMINI_REPLY = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}
    ]
}


class Upstream:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        me = self

        class Handler(QuietHandler):
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                self._reply(200, "application/json", b'{"ok":true}')

            def do_POST(self) -> None:
                raw = self.body()
                with me.lock:
                    me.seen.append(
                        Seen(
                            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw
                        )
                    )
                me.serve(self, raw)

            def _reply(self, code: int, ctype: str, data: bytes) -> None:
                self.answer(code, data, ctype)

        self.server = _Backlogged(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, prefix: str) -> str:
        return f"http://127.0.0.1:{self.port}/{prefix}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self, kind: str | None = None) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if kind is None or s.path.startswith(f"/{kind}/")]

    def clear(self) -> None:
        with self.lock:
            self.seen.clear()

    # -- behaviour -----------------------------------------------------------------

    def serve(self, h: Any, raw: bytes) -> None:
        kind = h.path.split("/")[1]
        r = wire.route(h.path)
        if kind == "down":
            h._reply(503, "application/json", b'{"error":{"message":"down"}}')
            return
        if kind == "fail":
            h._reply(500, "application/json", b'{"error":{"message":"upstream broke"}}')
            return
        if kind == "slow":
            time.sleep(SLOW)
        body = json.loads(raw) if raw else {}
        fmt = r.format if r else "openai"
        if kind == "refuse":
            quoted = json.dumps(body).split('"content": "', 1)[-1].split('"', 1)[0]
            message = f"messages.0.content: {quoted!r} was refused by this upstream"
            h._reply(400, "application/json", wire.encode(wire.error_envelope(fmt, message)))
            return
        if kind == "strict" and r is not None:
            rules = wire.RULES_OF_FORMAT[fmt]
            found = toolpair.validate(body, rules, format=fmt, model=r.model)
            if found:
                data = wire.encode(wire.error_envelope(fmt, found[0].message))
                h._reply(400, "application/json", data)
                return
        if body.get("stream") or kind == "cut" or ":streamGenerateContent" in h.path:
            self._stream(h, fmt, cut=kind == "cut")
            return
        reply = {
            "anthropic": ANTHROPIC_REPLY,
            "openai": CHAT_REPLY,
            "openai-responses": RESPONSES_REPLY,
            "gemini": GEMINI_REPLY,
        }[fmt]
        h._reply(200, "application/json", json.dumps(reply).encode())

    def _stream(self, h: Any, fmt: str, *, cut: bool) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        if cut:
            h.send_header("content-length", "100000")  # announced, never delivered
        else:
            h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        parts = [f"part{i} " for i in range(EVENTS)]
        if fmt == "anthropic":
            events = [sse([e]).encode() for e in anthropic_events(*parts)]
        else:
            events = [sse([(None, c)]).encode() for c in chat_chunks(*parts, model="gpt-4.1")]
            events.append(b"data: [DONE]\n\n")
        for i, ev in enumerate(events):
            if cut:
                h.wfile.write(ev)
                h.wfile.flush()
                if i == 2:
                    h.close_connection = True
                    h.connection.shutdown(2)
                    return
                continue
            h.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
            h.wfile.flush()
            time.sleep(GAP)
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()


class RawUpstream:
    """An upstream on a bare socket that records every byte it receives, per connection,
    and answers by the first path segment it knows (after any base path):

    - ``/early/``: a 103 Early Hints head, then the 200.
    - ``/both/``: a chunked body with a (wrong) Content-Length beside it.
    - ``/chunked/``: a chunked body.
    - ``/drip/``: an event stream of ``DRIP`` events 0.1 s apart; when the stream ends
      (its client gone) the time is kept in ``ended``.
    - anything else: a 200 with a small JSON body and a Content-Length.
    """

    DRIP = 100

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.connections: list[bytearray] = []
        self.requests: list[tuple[bytes, bytes]] = []
        self.ended: list[float] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, prefix: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{prefix}".rstrip("/")

    def clear(self) -> None:
        with self.lock:
            self.connections.clear()
            self.requests.clear()
            self.ended.clear()

    def close(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Any) -> None:
        seen = bytearray()
        with self.lock:
            self.connections.append(seen)
        buf = bytearray()
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    seen += data
                    buf += data
                head, rest = bytes(buf).split(b"\r\n\r\n", 1)
                buf = bytearray(rest)
                lines = head.split(b"\r\n")
                fields = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(b":") for line in lines[1:])
                }
                if b"content-length" in fields:
                    n = int(fields[b"content-length"])
                    while len(buf) < n:
                        data = conn.recv(65536)
                        if not data:
                            return
                        seen += data
                        buf += data
                    body, buf = bytes(buf[:n]), buf[n:]
                elif fields.get(b"transfer-encoding", b"").lower() == b"chunked":
                    while b"\r\n0\r\n\r\n" not in b"\r\n" + buf:
                        data = conn.recv(65536)
                        if not data:
                            return
                        seen += data
                        buf += data
                    body, _, tail = (b"\r\n" + bytes(buf)).partition(b"\r\n0\r\n\r\n")
                    buf = bytearray(tail)
                else:
                    body = b""
                with self.lock:
                    self.requests.append((head, body))
                path = lines[0].split(b" ")[1]
                kinds = (b"early", b"both", b"chunked", b"drip")
                self._answer(conn, next((k for k in path.split(b"/") if k in kinds), b""))
        except OSError:
            return
        finally:
            conn.close()

    def _answer(self, conn: Any, kind: bytes) -> None:
        ok = b'{"ok":true}'
        if kind == b"early":
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nlink: </x.css>; rel=preload\r\n\r\n")
            time.sleep(0.05)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(ok), ok))
        elif kind == b"both":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n"
                b"%x\r\n%s\r\n0\r\n\r\n" % (len(ok), ok)
            )
        elif kind == b"chunked":
            conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            for part in (ok[:4], ok[4:]):
                conn.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            conn.sendall(b"0\r\n\r\n")
        elif kind == b"drip":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            try:
                for i in range(self.DRIP):
                    ev = b"data: %d\n\n" % i
                    conn.sendall(b"%x\r\n%s\r\n" % (len(ev), ev))
                    time.sleep(0.1)
                conn.sendall(b"0\r\n\r\n")
            finally:
                with self.lock:
                    self.ended.append(time.monotonic())
        else:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                % (len(ok), ok)
            )
