"""Builders for the Agents SDK tests: real SDK models on a mock HTTP transport that
records every request body, scripted server replies, and the poisoned item lists.
Kept in one module so a shared conformance suite can reuse them."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import openai
from agents import set_tracing_disabled

from tests.support.replies import output_message

try:  # openai >= 3 is built on httpx2; older releases on httpx
    import httpx2 as hx
except ImportError:  # pragma: no cover - depends on the installed openai
    import httpx as hx  # type: ignore[no-redef]

set_tracing_disabled(True)

OPENAI_MAJOR = int(openai.__version__.split(".")[0])
_ids = itertools.count(1)


def call(name: str, args: dict[str, Any] | None = None, call_id: str | None = None) -> dict:
    """A scripted function call the mock server answers with."""
    n = next(_ids)
    return {
        "type": "function_call",
        "id": f"fc_{n:04d}",
        "call_id": call_id or f"call_{n:04d}",
        "name": name,
        "arguments": json.dumps(args or {}),
        "status": "completed",
    }


def reasoning(text: str = "thinking") -> dict:
    n = next(_ids)
    return {
        "type": "reasoning",
        "id": f"rs_{n:04d}",
        "summary": [{"type": "summary_text", "text": text}],
    }


def message(text: str) -> dict:
    return output_message(text, f"msg_{next(_ids):04d}")


def _usage_responses() -> dict:
    return {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def responses_body(output: list[dict], model: str = "gpt-5") -> dict:
    n = next(_ids)
    return {
        "id": f"resp_{n:04d}",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": _usage_responses(),
    }


def chat_body(output: list[dict], model: str = "gpt-4o") -> dict:
    """A chat.completion answering with ``output`` (Responses-style items: function
    calls become tool_calls, a message its text)."""
    text = None
    tool_calls = []
    for item in output:
        if item["type"] == "function_call":
            tool_calls.append(
                {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]},
                }
            )
        elif item["type"] == "message":
            text = item["content"][0]["text"]
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": msg,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }


def _sse(events: list[dict]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def responses_stream(output: list[dict], model: str = "gpt-5") -> bytes:
    """The SSE stream of a Responses call that yields ``output``."""
    body = responses_body(output, model)
    seq = itertools.count()
    created = {**body, "status": "in_progress", "output": []}
    events: list[dict] = [
        {"type": "response.created", "response": created, "sequence_number": next(seq)}
    ]
    for i, item in enumerate(output):
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": i,
                "item": item,
                "sequence_number": next(seq),
            }
        )
        events.append(
            {
                "type": "response.output_item.done",
                "output_index": i,
                "item": item,
                "sequence_number": next(seq),
            }
        )
    events.append({"type": "response.completed", "response": body, "sequence_number": next(seq)})
    return _sse(events)


def chat_stream(output: list[dict], model: str = "gpt-4o") -> bytes:
    """The SSE stream of a chat completion that yields ``output``."""
    body = chat_body(output, model)
    msg = body["choices"][0]["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": 1, "model": model}
    chunks = []
    delta: dict[str, Any] = {"role": "assistant"}
    if msg.get("content"):
        delta["content"] = msg["content"]
    chunks.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    for k, tc in enumerate(msg.get("tool_calls", [])):
        d = {"tool_calls": [{"index": k, **tc}]}
        chunks.append({**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]})
    finish = body["choices"][0]["finish_reason"]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**base, "choices": [], "usage": body["usage"]})
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return text.encode()


@dataclass
class Server:
    """A scripted OpenAI-compatible server: each request gets the next reply; every
    request body is recorded in ``bodies``."""

    replies: list[list[dict]]
    kind: str = "responses"  # or "chat"
    model: str = "gpt-5"
    bodies: list[dict] = field(default_factory=list)
    #: Called with each body before answering; may raise to fail the request.
    check: Callable[[dict], None] | None = None

    def handler(self, request: Any) -> Any:
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.check is not None:
            self.check(body)
        out = self.replies.pop(0) if self.replies else [message("done")]
        stream, whole = (
            (chat_stream, chat_body) if self.kind == "chat" else (responses_stream, responses_body)
        )
        if body.get("stream"):
            return hx.Response(
                200,
                content=stream(out, self.model),
                headers={"content-type": "text/event-stream"},
            )
        return hx.Response(200, json=whole(out, self.model))

    def client(self, base_url: str = "https://example.test/v1") -> openai.AsyncOpenAI:
        http = hx.AsyncClient(transport=hx.MockTransport(self.handler))
        return openai.AsyncOpenAI(api_key="x", base_url=base_url, http_client=http, max_retries=0)

    def responses_model(self, model: str | None = None, base_url: str | None = None) -> Any:
        from agents import OpenAIResponsesModel

        kw = {} if base_url is None else {"base_url": base_url}
        return OpenAIResponsesModel(model or self.model, openai_client=self.client(**kw))

    def chat_model(self, model: str | None = None, base_url: str | None = None) -> Any:
        from agents import OpenAIChatCompletionsModel

        kw = {} if base_url is None else {"base_url": base_url}
        return OpenAIChatCompletionsModel(model or self.model, openai_client=self.client(**kw))

    @property
    def last(self) -> dict:
        return self.bodies[-1]


def sent_items(body: dict) -> list[dict]:
    """The Responses ``input`` of a recorded body."""
    return body["input"]


# -- poisoned item lists ----------------------------------------------------------


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def out(call_id: str, text: str = "ok") -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def fc(call_id: str, name: str = "lookup", item_id: str | None = None) -> dict:
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}
    if item_id is not None:
        item["id"] = item_id
    return item


def rs(item_id: str) -> dict:
    return {"type": "reasoning", "id": item_id, "summary": []}


def history_with_tools(turns: int) -> list[dict]:
    """A valid history: ``turns`` user questions, each answered after one reasoning
    item, one call and its output, then a message."""
    items: list[dict] = []
    for t in range(turns):
        items.append(user(f"question {t}"))
        items.append(rs(f"rs_h{t}"))
        items.append(fc(f"call_h{t}", item_id=f"fc_h{t}"))
        items.append(out(f"call_h{t}", f"result {t}"))
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_h{t}",
                "content": [{"type": "output_text", "text": f"answer {t}", "annotations": []}],
            }
        )
    return items


def reasoning_of(history: list[dict]) -> dict[str, str]:
    """fc_ item id -> the id of the reasoning item right before it in ``history``
    (for a batch, the reasoning item before the batch)."""
    tied: dict[str, str] = {}
    last_rs: str | None = None
    for item in history:
        t = item.get("type")
        if t == "reasoning":
            last_rs = item.get("id")
        elif t == "function_call":
            if last_rs is not None and item.get("id"):
                tied[item["id"]] = last_rs
        else:
            last_rs = None
    return tied


def calls_cut_from_reasoning(sent: list[dict], history: list[dict]) -> list[str]:
    """The fc_ ids in ``sent`` whose reasoning item (as ``history`` stored it) was not
    sent: the API rejects them with "...provided without its required 'reasoning'
    item" (the core validator cannot see this; it needs the stored history)."""
    tied = reasoning_of(history)
    sent_rs = {i.get("id") for i in sent if i.get("type") == "reasoning"}
    return [
        i["id"]
        for i in sent
        if i.get("type") == "function_call" and i.get("id") in tied and tied[i["id"]] not in sent_rs
    ]


async def stored(session: Any) -> list[dict]:
    return list(await session.get_items())


def provider_for(srv: Server) -> Any:
    """A ModelProvider resolving every model name to ``srv``'s Responses (or chat)
    model, as MultiProvider resolves names to OpenAI's."""
    from agents.models.interface import ModelProvider

    class _Provider(ModelProvider):
        def __init__(self) -> None:
            self.models: dict[Any, Any] = {}

        def get_model(self, model_name: str | None) -> Any:
            if model_name not in self.models:
                make = srv.responses_model if srv.kind == "responses" else srv.chat_model
                self.models[model_name] = make(model_name or srv.model)
            return self.models[model_name]

    return _Provider()
