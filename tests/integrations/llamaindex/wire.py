"""Fake Anthropic and OpenAI servers behind httpx mock transports.

The real provider LLM classes and SDKs build and send each request; the transport
records the JSON body and answers from a script. Like the real APIs, it answers 400
when the body breaks the pairing rules. Those rules are checked here by a small checker
written from the provider documentation, independently of toolpair, so a test that
"fails without toolpair" fails on an independent verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.replies import anthropic_error, chat_error

# -- independent pairing checks (the subset of the rules these tests exercise) -------


def anthropic_errors(body: dict[str, Any]) -> list[str]:
    """Anthropic Messages pairing rules A1 (every tool_use answered in the next
    message), A2 (results first), A3 (a result answers the previous message), A5 (one
    result per call)."""
    errors: list[str] = []
    messages = body["messages"]
    for i, msg in enumerate(messages):
        content = msg["content"] if isinstance(msg["content"], list) else []
        if msg["role"] == "assistant":
            uses = [b["id"] for b in content if b.get("type") == "tool_use"]
            if not uses:
                continue
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            nxt_content = nxt["content"] if nxt and isinstance(nxt["content"], list) else []
            leading: list[str] = []
            for b in nxt_content:
                if b.get("type") != "tool_result":
                    break
                leading.append(b["tool_use_id"])
            missing = [u for u in uses if u not in leading]
            if nxt is None or nxt["role"] != "user" or missing:
                errors.append(f"messages.{i}: tool_use without tool_result: {missing or uses}")
        else:
            prev = messages[i - 1] if i > 0 else None
            prev_content = prev["content"] if prev and isinstance(prev["content"], list) else []
            prev_uses = {b["id"] for b in prev_content if b.get("type") == "tool_use"}
            seen: set[str] = set()
            for j, b in enumerate(content):
                if b.get("type") != "tool_result":
                    continue
                if b["tool_use_id"] not in prev_uses:
                    errors.append(f"messages.{i}.content.{j}: unexpected tool_use_id")
                if b["tool_use_id"] in seen:
                    errors.append(f"messages.{i}.content.{j}: multiple tool_result")
                seen.add(b["tool_use_id"])
    return errors


def openai_errors(body: dict[str, Any]) -> list[str]:
    """OpenAI Chat rules O1 (tool messages right after, one per call), O2 (a tool
    message follows tool_calls), O3 (its id is among them), O4 (no duplicates)."""
    errors: list[str] = []
    messages = body["messages"]
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg["role"] == "tool":
            errors.append(f"messages.[{i}]: tool message without preceding tool_calls")
            i += 1
            continue
        calls = [c["id"] for c in msg.get("tool_calls") or []] if msg["role"] == "assistant" else []
        i += 1
        if not calls:
            continue
        answered: list[str] = []
        while i < len(messages) and messages[i]["role"] == "tool":
            tid = messages[i].get("tool_call_id")
            if tid not in calls:
                errors.append(f"messages.[{i}]: tool_call_id {tid} not found in tool_calls")
            elif tid in answered:
                errors.append(f"messages.[{i}]: duplicate tool_call_id {tid}")
            answered.append(tid)
            i += 1
        missing = [c for c in calls if c not in answered]
        if missing:
            errors.append(f"tool_call_ids did not have response messages: {missing}")
    return errors


# -- scripted replies ---------------------------------------------------------------


@dataclass
class Reply:
    """One scripted assistant turn: text and/or tool calls (id, name, arguments)."""

    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


def say(text: str) -> Reply:
    return Reply(text=text)


def call(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    return Reply(calls=list(calls))


@dataclass
class FakeServer:
    """Records every request body; answers with the next scripted reply, or with the
    provider's 400 when the body breaks its pairing rules."""

    script: list[Reply]
    check: Callable[[dict[str, Any]], list[str]]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[list[str]] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        errors = self.check(body)
        if errors:
            self.rejected.append(errors)
            return self.error(errors)
        reply = self.script.pop(0) if self.script else say("done")
        if body.get("stream"):
            return httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content="".join(self.sse(reply)).encode(),
            )
        return httpx.Response(200, json=self.json(reply))

    def error(self, errors: list[str]) -> httpx.Response:
        return httpx.Response(400, json=self.error_body("; ".join(errors)))

    @staticmethod
    def error_body(message: str) -> dict[str, Any]:
        raise NotImplementedError

    def json(self, reply: Reply) -> dict[str, Any]:
        raise NotImplementedError

    def sse(self, reply: Reply) -> Iterable[str]:
        raise NotImplementedError

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)


def _event(name: str | None, data: Any) -> str:
    head = f"event: {name}\n" if name else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n"


def accept_all(body: dict[str, Any]) -> list[str]:
    """A server that only records (for comparing verdicts on whatever was sent)."""
    return []


def _anthropic_content(reply: Reply) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for cid, name, args in reply.calls:
        content.append({"type": "tool_use", "id": cid, "name": name, "input": args})
    return content


@dataclass
class FakeAnthropic(FakeServer):
    check: Callable[[dict[str, Any]], list[str]] = anthropic_errors
    error_body = staticmethod(anthropic_error)

    def json(self, reply: Reply) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": _anthropic_content(reply),
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }

    def sse(self, reply: Reply) -> Iterable[str]:
        start = self.json(reply) | {"content": [], "stop_reason": None}
        yield _event("message_start", {"type": "message_start", "message": start})
        for i, block in enumerate(_anthropic_content(reply)):
            if block["type"] == "text":
                first = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                first = block | {"input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield _event(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": first},
            )
            yield _event(
                "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
            )
            yield _event("content_block_stop", {"type": "content_block_stop", "index": i})
        stop = "tool_use" if reply.calls else "end_turn"
        yield _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        )
        yield _event("message_stop", {"type": "message_stop"})


def _openai_tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in reply.calls
    ]


@dataclass
class FakeOpenAI(FakeServer):
    check: Callable[[dict[str, Any]], list[str]] = openai_errors
    error_body = staticmethod(chat_error)

    def json(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = _openai_tool_calls(reply)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def sse(self, reply: Reply) -> Iterable[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            return _event(
                None,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "gpt-4o",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                },
            )

        yield chunk({"role": "assistant", "content": reply.text or ""})
        for k, tc in enumerate(_openai_tool_calls(reply)):
            yield chunk({"tool_calls": [tc | {"index": k}]})
        yield chunk({}, "tool_calls" if reply.calls else "stop")
        yield _event(None, "[DONE]")


def anthropic_llm(server: FakeAnthropic) -> Any:
    """The real llama-index Anthropic LLM whose SDK clients send through ``server``."""
    import anthropic
    from llama_index.llms.anthropic import Anthropic

    llm = Anthropic(model="claude-sonnet-4-5", api_key="sk-test", max_retries=0)
    transport = server.transport()
    llm._client = anthropic.Anthropic(
        api_key="sk-test", max_retries=0, http_client=httpx.Client(transport=transport)
    )
    llm._aclient = anthropic.AsyncAnthropic(
        api_key="sk-test", max_retries=0, http_client=httpx.AsyncClient(transport=transport)
    )
    return llm


def openai_llm(server: FakeOpenAI) -> Any:
    """The real llama-index OpenAI LLM whose SDK clients send through ``server``."""
    from llama_index.llms.openai import OpenAI

    transport = server.transport()
    return OpenAI(
        model="gpt-4o",
        api_key="sk-test",
        max_retries=0,
        http_client=httpx.Client(transport=transport),
        async_http_client=httpx.AsyncClient(transport=transport),
    )
