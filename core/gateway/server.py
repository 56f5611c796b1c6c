"""uvicorn, as ``toolpair proxy`` runs it (imported only when the proxy runs: it needs
the ``proxy`` extra).

uvicorn's httptools protocol has a keep-alive timeout but none for a request's head: a
client that sends half a header would hold its connection forever. `Protocol` adds one,
and keeps an absolute-form request target visible to the app, which refuses it.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class Protocol(HttpToolsProtocol):
    """HTTP/1.1 over httptools, with a time limit on receiving each request's head
    (from the connection's start, then from each request's first byte)."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._head_timeout: float = getattr(config, "toolpair_header_timeout", 30.0)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        # httptools keeps only the path of an absolute-form target ("GET http://host/p"):
        # such a request is for an open proxy, which this is not; the app refuses it.
        origin_form = self.url.startswith(b"/")
        super().on_headers_complete()
        if not origin_form and self.scope.get("type") == "http":
            self.scope["path"] = self.url.decode("latin-1")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self._head_timeout, self._expire)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _expire(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()


def bind(host: str, port: int) -> socket.socket:
    """The listening socket (bound before the banner, so ``--port 0`` can say its port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets that say they
    # are TCP. Without it, a response's head and body are two writes, and a keep-alive
    # client's delayed ACK stalls the second by 40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


#: uvicorn's own messages at WARNING, no access log: a request line carries the query
#: string (a Gemini ``?key=``), and nothing here logs request content.
_LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(message)s"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "stream": "ext://sys.stderr",
        }
    },
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        "uvicorn.error": {"level": "WARNING"},
        "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}


def run(
    app: Any,
    sock: socket.socket,
    *,
    workers: int,
    max_connections: int,
    header_timeout: float,
    keepalive_timeout: float,
) -> None:
    """Serve ``app`` (with several ``workers``, the import string of its factory) on
    ``sock`` until interrupted."""
    config = uvicorn.Config(
        app,
        factory=workers > 1,
        http=Protocol,
        loop="auto",
        workers=workers,
        log_config=_LOGGING,
        access_log=False,
        proxy_headers=False,  # X-Forwarded-* from a client would be believed
        server_header=False,
        limit_concurrency=max_connections,
        timeout_keep_alive=int(max(1, keepalive_timeout)),
        timeout_graceful_shutdown=5,
        lifespan="on",
    )
    config.toolpair_header_timeout = header_timeout  # type: ignore[attr-defined]
    if workers > 1:
        from uvicorn.supervisors import Multiprocess

        try:
            supervisor = Multiprocess(config, sockets=[sock])
        except TypeError:  # older uvicorn releases take the worker's target
            supervisor = Multiprocess(  # type: ignore[call-arg,unused-ignore]
                config, target=uvicorn.Server(config).run, sockets=[sock]
            )
        supervisor.run()
    else:
        uvicorn.Server(config).run(sockets=[sock])
