"""The canned answers the fake provider APIs here give: each provider's reply to a
request, whole or as server-sent events, with the text and model a test names."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def anthropic_message(
    text: str = "ok", *, model: str = "claude-sonnet-4-5", id: str = "msg_1"
) -> dict[str, Any]:
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def anthropic_error(message: str) -> dict[str, Any]:
    """The Messages API's 400 body."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def anthropic_events(
    *texts: str, model: str = "claude-sonnet-4-5", id: str = "msg_1"
) -> list[tuple[str, dict[str, Any]]]:
    """A Messages stream of one text block, one delta per text."""
    start = {**anthropic_message(model=model, id=id), "content": [], "stop_reason": None}
    block = {"type": "text", "text": ""}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        *(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": t},
                },
            )
            for t in texts
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(texts)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def chat_completion(
    text: str = "ok", *, model: str = "gpt-4o", id: str = "chatcmpl-1", created: int = 1
) -> dict[str, Any]:
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def chat_error(message: str) -> dict[str, Any]:
    """The Chat Completions API's 400 body, about the messages."""
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": None,
        }
    }


def chat_chunks(
    *texts: str, model: str = "gpt-4o", id: str = "chatcmpl-1", created: int = 1
) -> list[dict[str, Any]]:
    """A Chat Completions stream: one chunk per text, then the finishing one."""
    base = {"id": id, "object": "chat.completion.chunk", "created": created, "model": model}
    return [
        *(
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": t},
                        "finish_reason": None,
                    }
                ],
            }
            for t in texts
        ),
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]


def output_message(text: str, id: str) -> dict[str, Any]:
    """A Responses API output item: the assistant's text."""
    return {
        "type": "message",
        "id": id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def response(text: str = "ok", *, model: str = "gpt-4o") -> dict[str, Any]:
    """A Responses API answer."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": model,
        "output": [output_message(text, "msg_1")],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def gemini_response(text: str = "ok") -> dict[str, Any]:
    """A generateContent answer of one text part."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }


def sse(events: Iterable[tuple[str | None, Any]], *, done: bool = False) -> str:
    """Server-sent events (``event:`` lines where named), ``[DONE]`` last if asked."""
    out = "".join((f"event: {e}\n" if e else "") + f"data: {json.dumps(d)}\n\n" for e, d in events)
    return out + ("data: [DONE]\n\n" if done else "")


CONVERSE_REPLY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    "metrics": {"latencyMs": 1},
}


class RawBody:
    """The raw body botocore reads an HTTP response from."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Any:
        yield self.data

    def read(self, *_: Any, **__: Any) -> bytes:
        return self.data


def converse_response(url: str) -> Any:
    """Bedrock Converse's answer, as a botocore ``before-send`` hook returns it (the hook
    sees the fully serialised request, so what it captures is what Converse receives)."""
    from botocore.awsrequest import AWSResponse

    data = json.dumps(CONVERSE_REPLY).encode()
    return AWSResponse(url, 200, {"content-type": "application/json"}, RawBody(data))
