"""ToolpairMiddleware in front of a real Starlette app with vLLM's routes (which check no
pairing and stream events), added the way vLLM adds ``--middleware`` classes
(``app.add_middleware(cls)``, no arguments, configuration from the environment), driven
by httpx's ASGITransport."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

import toolpair
from tests.support.histories import DANGLING_CHAT
from toolpair.integrations.asgi import ToolpairMiddleware

DANGLING_ANTHROPIC: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
    },
    {"role": "user", "content": "and?"},
]


def make_app(seen: list[bytes]) -> Starlette:
    async def record(request: Request) -> Any:
        raw = await request.body()
        seen.append(raw)
        body = json.loads(raw)
        assert int(request.headers["content-length"]) == len(raw)
        if body.get("stream"):

            async def events() -> Any:
                for i in range(3):
                    yield f"data: {i}\n\n".encode()
                    await asyncio.sleep(0.05)
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        return JSONResponse({"ok": True}, headers={"x-upstream": "vllm"})

    async def models(request: Request) -> Any:
        return JSONResponse({"data": []})

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", record, methods=["POST"]),
            Route("/v1/messages", record, methods=["POST"]),
            Route("/v1/responses", record, methods=["POST"]),
            Route("/v1/models", models),
        ]
    )
    # vLLM's build_app: a class is added with no arguments.
    app.add_middleware(ToolpairMiddleware)
    return app


async def _post(app: Starlette, path: str, body: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as c:
        return await c.post(path, content=body if isinstance(body, bytes) else json.dumps(body))


def test_repair_mode_repairs_chat_and_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLPAIR_MODE", raising=False)
    seen: list[bytes] = []
    app = make_app(seen)
    r = asyncio.run(
        _post(app, "/v1/chat/completions", {"model": "qwen3", "messages": DANGLING_CHAT})
    )
    assert r.status_code == 200 and r.headers["x-upstream"] == "vllm"
    body = {"model": "qwen3", "max_tokens": 10, "messages": DANGLING_ANTHROPIC}
    r = asyncio.run(_post(app, "/v1/messages", body))
    assert r.status_code == 200
    chat, msgs = (json.loads(s) for s in seen)
    assert toolpair.validate(chat, "openai") == []
    assert chat["messages"][2]["tool_call_id"] == "call_1"
    assert toolpair.validate(msgs, "anthropic") == []
    assert msgs["messages"][2]["content"][0]["tool_use_id"] == "toolu_01"


def test_valid_bodies_and_other_routes_are_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "repair")
    seen: list[bytes] = []
    app = make_app(seen)
    raw = b'{"model" : "qwen3",  "messages": [{"role":"user","content":"hi \\u00e9"}]}'
    assert asyncio.run(_post(app, "/v1/chat/completions", raw)).status_code == 200
    assert seen == [raw]

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as c:
            return await c.get("/v1/models")

    assert asyncio.run(get()).json() == {"data": []}


def test_reject_mode_answers_in_the_providers_envelope(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "reject")
    seen: list[bytes] = []
    app = make_app(seen)
    r = asyncio.run(_post(app, "/v1/chat/completions", {"model": "m", "messages": DANGLING_CHAT}))
    [v] = toolpair.validate(DANGLING_CHAT, "openai")
    assert r.status_code == 400
    assert r.json() == {
        "error": {
            "message": v.message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": None,
        }
    }
    body = {"model": "m", "max_tokens": 10, "messages": DANGLING_ANTHROPIC}
    r = asyncio.run(_post(app, "/v1/messages", body))
    assert r.status_code == 400
    assert r.json()["type"] == "error"
    assert r.json()["error"]["message"].startswith("messages.1: `tool_use` ids were found")
    orphan = [
        {"role": "user", "content": "x"},
        {"type": "function_call_output", "call_id": "c9", "output": "y"},
    ]
    r = asyncio.run(_post(app, "/v1/responses", {"model": "m", "input": orphan}))
    assert r.status_code == 400 and r.json()["error"]["param"] == "input"
    assert seen == []
    # A stored response holds the call: the output is not an orphan.
    r = asyncio.run(
        _post(
            app, "/v1/responses", {"model": "m", "input": orphan, "previous_response_id": "resp_1"}
        )
    )
    assert r.status_code == 200 and len(seen) == 1


def test_observe_mode_logs_and_forwards_unchanged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "observe")
    seen: list[bytes] = []
    app = make_app(seen)
    raw = json.dumps({"model": "m", "messages": DANGLING_CHAT}).encode()
    # Observe mode logs its event at INFO.
    with caplog.at_level(logging.INFO, logger="toolpair"):
        assert asyncio.run(_post(app, "/v1/chat/completions", raw)).status_code == 200
    assert seen == [raw]
    [line] = [r.getMessage() for r in caplog.records if r.name == "toolpair"]
    assert line.startswith("toolpair observed a history (openai format) for openai (m) via asgi")
    assert "rules: openai.missing_result; ids: call_1" in line


def test_provider_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "reject")
    monkeypatch.setenv("TOOLPAIR_PROVIDER", "mistral")
    seen: list[bytes] = []
    app = make_app(seen)
    valid_for_openai = [
        *DANGLING_CHAT[:2],
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    assert toolpair.validate(valid_for_openai, "openai") == []
    r = asyncio.run(
        _post(app, "/v1/chat/completions", {"model": "m", "messages": valid_for_openai})
    )
    assert r.status_code == 400
    assert "must be a-z, A-Z, 0-9, with a length of 9" in r.json()["error"]["message"]
    monkeypatch.setenv("TOOLPAIR_PROVIDER", "nonsense")
    with pytest.raises(ValueError, match="TOOLPAIR_PROVIDER must be one of"):
        ToolpairMiddleware(make_app([]))
    monkeypatch.setenv("TOOLPAIR_MODE", "fix-everything")
    with pytest.raises(ValueError, match="TOOLPAIR_MODE must be one of"):
        ToolpairMiddleware(make_app([]))


def test_streaming_responses_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPAIR_MODE", "repair")
    seen: list[bytes] = []
    app = make_app(seen)

    async def stream() -> list[tuple[float, bytes]]:
        transport = httpx.ASGITransport(app=app)
        got: list[tuple[float, bytes]] = []
        loop = asyncio.get_running_loop()
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as c:
            body = {"model": "m", "messages": DANGLING_CHAT, "stream": True}
            async with c.stream("POST", "/v1/chat/completions", json=body) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                async for chunk in r.aiter_raw():
                    got.append((loop.time(), chunk))
        return got

    got = asyncio.run(stream())
    assert b"".join(c for _, c in got) == b"data: 0\n\ndata: 1\n\ndata: 2\n\ndata: [DONE]\n\n"
    assert toolpair.validate(json.loads(seen[0]), "openai") == []
