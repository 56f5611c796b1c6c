"""Anthropic's API version 2026-10-21 through the ASGI middleware: the version is the
request's ``anthropic-version`` header (the body never names it). The real anthropic SDK
(2.x, which sends 2026-10-21 by default) talks to a Starlette app through httpx2's ASGI
transport, so the header is the one the SDK puts on the wire."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import toolpair
from tests.support.histories import CITED, NOTE
from toolpair.integrations.asgi import ToolpairMiddleware

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": [CITED]},
    {"role": "assistant", "content": [{"type": "text", "text": "here"}, NOTE]},
    {"role": "user", "content": "thanks"},
]
REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-opus-4-8",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def make_app(seen: list[tuple[str | None, dict[str, Any]]]) -> Starlette:
    async def messages(request: Request) -> Any:
        seen.append((request.headers.get("anthropic-version"), json.loads(await request.body())))
        return JSONResponse(REPLY)

    app = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])
    app.add_middleware(ToolpairMiddleware)
    return app


def test_the_sdk_s_version_header_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "repair")
    seen: list[tuple[str | None, dict[str, Any]]] = []
    app = make_app(seen)
    client = anthropic.AsyncAnthropic(
        api_key="k",
        base_url="http://api",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)),
    )

    async def send() -> Any:
        return await client.messages.create(
            model="claude-opus-4-8",
            max_tokens=10,
            messages=HISTORY,  # type: ignore[arg-type]
        )

    assert asyncio.run(send()).content[0].text == "ok"
    version, body = seen[-1]
    assert version == anthropic._constants.ANTHROPIC_API_VERSION == "2026-10-21"
    # Repaired for that version: the user text without its citations, the assistant's
    # plain-text document as its words; the result is what that version takes.
    assert body["messages"][0]["content"] == [{"type": "text", "text": "as the notes say"}]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "here"},
        {"type": "text", "text": "n"},
    ]
    assert toolpair.validate(body, "anthropic", api_version=version) == []


def test_the_old_version_sends_the_body_as_it_came(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "reject")
    seen: list[tuple[str | None, dict[str, Any]]] = []
    app = make_app(seen)
    raw = json.dumps({"model": "claude-opus-4-8", "max_tokens": 10, "messages": HISTORY})

    async def post(version: str | None) -> httpx.Response:
        headers = {"anthropic-version": version} if version else {}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as c:
            return await c.post("/v1/messages", content=raw, headers=headers)

    for version in ("2023-06-01", None):
        r = asyncio.run(post(version))
        assert r.status_code == 200 and seen[-1][1]["messages"] == HISTORY
    r = asyncio.run(post("2026-10-21"))
    assert r.status_code == 400 and r.json()["type"] == "error"
    assert r.json()["error"]["message"] == (
        "messages.0.content.0.citations: `citations` are not allowed in `user` messages"
    )
