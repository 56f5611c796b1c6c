"""A scripted OpenAI Responses API on loopback, for driving the real Codex CLI.

The model's moves are written in the prompt: a user text holding
``CALL:[{"name": ..., "args": {...}}, ...]`` is answered with those function calls (in
parallel), ``PATCH:<text>`` with one ``apply_patch`` custom tool call whose input is the
text, ``SHELL:<command>`` with one call of whichever shell tool the request offers; a
request whose last item is a tool output is answered with a text quoting how many
outputs reached the model; any other prompt gets a short text. Every request body is
kept (`requests`), in the order it came. Streams the server-sent events Codex reads
(``response.created``, ``response.output_item.done``, ``response.completed``), and for a
provider configured with ``wire_api = "chat"`` (Codex before 0.171) the Chat Completions
chunks (``/v1/chat/completions``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.loopback import QuietHandler, running
from tests.support.replies import output_message

CALL = re.compile(r"CALL:(\[.*?\])(?:\s|$)", re.S)
SHELL = re.compile(r"SHELL:(.*)\Z", re.S)
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
    m = SHELL.search(text)
    if m:
        name, args = _shell_call(body.get("tools") or [], m.group(1).strip())
        k = next(ids)
        return [
            {
                "type": "function_call",
                "id": f"fc_mock{k:04d}",
                "call_id": f"call_mock{k:04d}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        ]
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


def _shell_call(tools: list[Any], command: str) -> tuple[str, dict[str, Any]]:
    """The shell tool the request offers, and its arguments for ``command``."""
    names = {(t.get("function") or t).get("name") for t in tools if isinstance(t, dict)}
    if "exec_command" in names:
        return "exec_command", {"cmd": command}
    if "shell_command" in names:
        return "shell_command", {"command": command}
    return "shell", {"command": ["bash", "-lc", command]}


def answer_chat(body: dict[str, Any], ids: Iterator[int]) -> dict[str, Any]:
    """The assistant message of one Chat Completions request."""
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last = msgs[-1] if msgs else {}
    if last.get("role") == "tool":
        n = 0
        for m in reversed(msgs):
            if m.get("role") != "tool":
                break
            n += 1
        return {"role": "assistant", "content": f"Got {n} result(s)."}
    users = [m for m in msgs if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    text = content if isinstance(content, str) else _text({"content": content})
    m = SHELL.search(text)
    if m:
        name, args = _shell_call(body.get("tools") or [], m.group(1).strip())
        k = next(ids)
        call = {"id": f"call_mock{k:04d}", "type": "function"}
        call["function"] = {"name": name, "arguments": json.dumps(args)}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "OK."}


def _chunks(msg: dict[str, Any], k: int) -> bytes:
    base = {"id": f"chatcmpl-mock{k:04d}", "object": "chat.completion.chunk", "model": "mock"}
    delta: dict[str, Any] = {"role": "assistant"}
    if msg.get("content"):
        delta["content"] = msg["content"]
    if msg.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(msg["tool_calls"])]
    reason = "tool_calls" if msg.get("tool_calls") else "stop"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]},
    ]
    out = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
    return out + b"data: [DONE]\n\n"


def _message(text: str, k: int) -> dict[str, Any]:
    return output_message(text, f"msg_mock{k:04d}")


class MockResponses:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        mock = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.json_body()
                if self.path.rstrip("/").endswith("/chat/completions"):
                    with mock._lock:
                        mock.requests.append(body)
                        k = next(mock._ids)
                        msg = answer_chat(body, mock._ids)
                    return self._stream(_chunks(msg, k))
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
                self._stream(data)

            def _stream(self, data: bytes) -> None:
                self.answer(200, data, "text/event-stream")

            def do_GET(self) -> None:
                self._json({"object": "list", "data": [], "models": []})

            def _json(self, obj: Any, status: int = 200) -> None:
                self.answer(status, json.dumps(obj).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"


@contextmanager
def serving() -> Iterator[MockResponses]:
    mock = MockResponses()
    with running(mock.server):
        yield mock
