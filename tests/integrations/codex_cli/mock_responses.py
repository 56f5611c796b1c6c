"""A scripted OpenAI Responses API on loopback, for driving the real Codex CLI.

The model's moves are written in the prompt: a user text holding
``CALL:[{"name": ..., "args": {...}}, ...]`` is answered with those function calls (in
parallel), ``PATCH:<text>`` with one ``apply_patch`` custom tool call whose input is the
text; a request whose last item is a tool output is answered with a text quoting how many
outputs reached the model; any other prompt gets a short text. Every request body is
kept (`requests`), in the order it came. Streams the server-sent events Codex reads
(``response.created``, ``response.output_item.done``, ``response.completed``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALL = re.compile(r"CALL:(\[.*?\])(?:\s|$)", re.S)
PATCH = re.compile(r"PATCH:(.*)\Z", re.S)
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [] if isinstance(c, dict) and "text" in c)


def answer(body: dict[str, Any], ids: Iterator[int]) -> list[dict[str, Any]]:
    """The output items of one response."""
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    last = items[-1] if items else {}
    if last.get("type") in OUTPUTS:
        n = 0
        for it in reversed(items):
            if it.get("type") not in OUTPUTS:
                break
            n += 1
        return [_message(f"Got {n} result(s).", next(ids))]
    users = [i for i in items if i.get("type", "message") == "message" and i.get("role") == "user"]
    text = _text(users[-1]) if users else ""
    m = CALL.search(text)
    if m:
        out = []
        for c in json.loads(m.group(1)):
            k = next(ids)
            out.append(
                {
                    "type": "function_call",
                    "id": f"fc_mock{k:04d}",
                    "call_id": f"call_mock{k:04d}",
                    "name": c["name"],
                    "arguments": json.dumps(c["args"]),
                    "status": "completed",
                }
            )
        return out
    m = PATCH.search(text)
    if m:
        k = next(ids)
        return [
            {
                "type": "custom_tool_call",
                "id": f"ctc_mock{k:04d}",
                "call_id": f"call_mock{k:04d}",
                "name": "apply_patch",
                "input": m.group(1).strip() + "\n",
                "status": "completed",
            }
        ]
    return [_message("OK.", next(ids))]


def _message(text: str, k: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_mock{k:04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class MockResponses:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not self.path.rstrip("/").endswith("/responses"):
                    return self._json({"error": {"message": "not found"}}, 404)
                with mock._lock:
                    mock.requests.append(body)
                    k = next(mock._ids)
                    items = answer(body, mock._ids)
                rid = f"resp_mock{k:04d}"
                events = [("response.created", {"response": {"id": rid}})]
                events += [("response.output_item.done", {"item": it}) for it in items]
                usage = {
                    "input_tokens": 10,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 15,
                }
                events.append(("response.completed", {"response": {"id": rid, "usage": usage}}))
                data = b"".join(
                    f"event: {e}\ndata: {json.dumps({'type': e, **d})}\n\n".encode()
                    for e, d in events
                )
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._json({"object": "list", "data": [], "models": []})

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"


@contextmanager
def serving() -> Iterator[MockResponses]:
    mock = MockResponses()
    t = threading.Thread(target=mock.server.serve_forever, daemon=True)
    t.start()
    try:
        yield mock
    finally:
        mock.server.shutdown()
        mock.server.server_close()
