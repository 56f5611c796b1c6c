"""toolpair for any ASGI server: a pure ASGI middleware that repairs (or rejects) the
history of every chat completions, messages, responses and Gemini generateContent
request before the app sees it, and never touches the response.

    vllm serve MODEL --middleware toolpair.integrations.asgi.ToolpairMiddleware

    app.add_middleware(ToolpairMiddleware)            # Starlette, FastAPI

Configured from the environment, since vLLM adds middleware with no arguments:

- ``TOOLPAIR_MODE``: ``repair`` (default), ``reject`` (a 400 in the API's own error
  envelope; the app is not called) or ``observe`` (log only).
- ``TOOLPAIR_PROVIDER``: the rules to judge by (``portable``, ``deepseek``...); by
  default those of the hosted API whose wire format the path carries.

Keyword arguments, where a server passes them, win over the environment. It needs
nothing beyond the core.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from toolpair.gateway import wire

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["ToolpairMiddleware"]


class ToolpairMiddleware:
    """Judge the request body of the routes `toolpair.gateway.wire.route` knows; pass
    everything else (other paths, methods, websockets, lifespan) straight through."""

    def __init__(self, app: ASGIApp, mode: str | None = None, provider: str | None = None):
        self.app = app
        chosen = (mode or os.environ.get("TOOLPAIR_MODE") or "repair").strip().lower()
        if chosen not in wire.MODES:
            raise ValueError(
                f"TOOLPAIR_MODE must be one of {', '.join(wire.MODES)}, not {chosen!r}"
            )
        self.mode: wire.Mode = chosen  # type: ignore[assignment]
        named = provider or os.environ.get("TOOLPAIR_PROVIDER") or None
        if named is not None:
            from toolpair.providers import PROVIDERS

            if named not in PROVIDERS:
                raise ValueError(
                    f"TOOLPAIR_PROVIDER must be one of {', '.join(PROVIDERS)}, not {named!r}"
                )
        self.provider = named

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or wire.route(scope.get("path", "")) is None
        ):
            await self.app(scope, receive, send)
            return
        # The whole body is needed to judge a history; it is handed on in one piece.
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body: nothing to serve
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        verdict = wire.judge(raw, scope["path"], self.mode, provider=self.provider)
        if verdict is not None and verdict.action == "reject":
            await send(
                {
                    "type": "http.response.start",
                    "status": verdict.status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(verdict.body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": verdict.body})
            return
        body = raw
        if verdict is not None and verdict.changed:
            body = verdict.body
            scope = dict(scope)
            scope["headers"] = [
                (k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"
            ] + [(b"content-length", str(len(body)).encode())]
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            # After the body, the app waits on the client (a disconnect).
            return await receive()

        await self.app(scope, replay, send)
