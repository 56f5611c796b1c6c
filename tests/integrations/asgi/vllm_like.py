"""A vLLM-like Starlette app (its routes check no pairing) with ToolpairMiddleware added
as vLLM adds ``--middleware`` classes (no arguments; configured from the environment),
served by uvicorn on an ephemeral loopback port, printed on its first line.
``GET /seen`` gives back every request the app received (headers, body);
``POST /refuse/v1/messages`` refuses every body with Anthropic's 400, gzip-encoded."""

from __future__ import annotations

import base64
import gzip
import json
import socket
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolpair.integrations.asgi import ToolpairMiddleware

SEEN: list[dict[str, Any]] = []


async def record(request: Request) -> Any:
    raw = await request.body()
    SEEN.append(
        {
            "path": request.url.path,
            "headers": [[k, v] for k, v in request.headers.items()],
            "body": base64.b64encode(raw).decode(),
        }
    )
    return JSONResponse({"ok": True})


async def refuse(request: Request) -> Any:
    await request.body()
    error = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "messages.1: refused here"},
    }
    return Response(
        gzip.compress(json.dumps(error).encode()),
        status_code=400,
        headers={"content-encoding": "gzip", "content-type": "application/json"},
    )


async def refuse_at_length(request: Request) -> Any:
    """A 422 whose error body is 200 KiB, sent in 50 parts."""
    await request.body()
    message = "x" * (200 * 1024)
    data = json.dumps({"error": {"message": message}}).encode()

    async def parts() -> Any:
        step = len(data) // 50 + 1
        for i in range(0, len(data), step):
            yield data[i : i + step]

    return StreamingResponse(parts(), status_code=422, media_type="application/json")


async def seen(request: Request) -> Any:
    return JSONResponse(SEEN)


app = Starlette(
    routes=[
        Route("/v1/chat/completions", record, methods=["POST"]),
        Route("/v1/messages", record, methods=["POST"]),
        Route("/v1/messages/count_tokens", record, methods=["POST"]),
        Route("/v1/files", record, methods=["POST"]),
        Route("/refuse/v1/messages", refuse, methods=["POST"]),
        Route("/long/v1/messages", refuse_at_length, methods=["POST"]),
        Route("/seen", seen),
    ]
)
app.add_middleware(ToolpairMiddleware)

if __name__ == "__main__":
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    sys.exit(0)
