"""A scripted Gemini API on loopback, for driving the real Gemini CLI.

The model's moves are written in the prompt: a user text holding
``CALL:[{"name": ..., "args": {...}}, ...]`` is answered with those function calls (in
parallel, the first signed with a thought signature as Gemini 3 does); a turn of
function responses is answered with a text that quotes each response, so a test can
see which results reached the model; any other prompt gets a short text. Every request
body is kept (`requests`), in the order it came.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.loopback import QuietHandler, running

CALL = re.compile(r"CALL:(\[.*\])", re.S)
SIGNATURE = "c2lnbmVkLWJ5LXRoZS1tb2Nr"  # base64 of "signed-by-the-mock"


def _last_user(body: dict[str, Any]) -> dict[str, Any]:
    contents = body.get("contents") or [{}]
    last: dict[str, Any] = contents[-1]
    return last


def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's parts for one request."""
    parts = _last_user(body).get("parts") or []
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    names = {
        d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []
    }
    if (
        responses
        and "complete_task" in names
        and not any(r.get("name") == "complete_task" for r in responses)
    ):
        # A subagent ends only by calling its completion tool.
        return [{"functionCall": {"name": "complete_task", "args": {"result": "subagent done"}}}]
    if responses:
        quoted = "; ".join(
            f"{r.get('name')}: {json.dumps(r.get('response'), sort_keys=True)[:120]}"
            for r in responses
        )
        return [{"text": f"Got {len(responses)} result(s). {quoted}"}]
    text = "".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str))
    m = CALL.search(text)
    if m:
        calls = json.loads(m.group(1))
        out = []
        for i, c in enumerate(calls):
            part: dict[str, Any] = {"functionCall": {"name": c["name"], "args": c["args"]}}
            if i == 0:
                part["thoughtSignature"] = SIGNATURE
            out.append(part)
        return out
    return [{"text": "OK."}]


def _response(parts: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


class MockGemini:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        mock = self

        class Handler(QuietHandler):
            # A connection per request, as this mock has always answered the Gemini CLI
            # (BaseHTTPRequestHandler's default), not the shared handler's keep-alive.
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:
                body = self.json_body()
                path = self.path
                model = re.search(r"models/([^:/?]+)", path)
                name = model.group(1) if model else "gemini"
                if ":countTokens" in path:
                    return self._json({"totalTokens": 10})
                if "contents" not in body:
                    return self._json({}, 404)
                with mock._lock:
                    mock.requests.append(body)
                    mock.paths.append(path)
                reply = _response(answer(body), name)
                if ":streamGenerateContent" in path:
                    data = f"data: {json.dumps(reply)}\r\n\r\n".encode()
                    self.answer(200, data, "text/event-stream")
                else:
                    self._json(reply)

            def do_GET(self) -> None:
                self._json({"models": []})

            def _json(self, obj: Any, status: int = 200) -> None:
                self.answer(status, json.dumps(obj).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def chat_requests(self) -> list[dict[str, Any]]:
        """The requests that carried the conversation (not side calls with no tools)."""
        with self._lock:
            return [r for r in self.requests if r.get("tools")]


@contextmanager
def serve() -> Iterator[MockGemini]:
    mock = MockGemini()
    with running(mock.server):
        yield mock
