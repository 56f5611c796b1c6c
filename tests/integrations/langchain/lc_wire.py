"""Offline capture of the exact request bodies ChatAnthropic and ChatOpenAI send.

The real chat model classes run end to end through ``invoke``; only the HTTP transport
is replaced, by one that records the JSON body and answers with a minimal valid reply.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import httpx
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

# The anthropic SDK moved from httpx to httpx2 (2.x); its transports and requests are
# those of whichever HTTP package its own base client imports.
_base_client = importlib.import_module("anthropic._base_client")
ANTHROPIC_HTTP: Any = getattr(_base_client, "httpx2", None) or _base_client.httpx


def _anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def _responses_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": body["model"],
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 3,
            "output_tokens": 1,
            "total_tokens": 4,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


class Wire:
    """Chat models wired to a recording transport; ``bodies`` holds every request."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []

    def _record(self, request: Any) -> dict[str, Any]:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.paths.append(request.url.path)
        return body

    def anthropic(self, **kwargs: Any) -> ChatAnthropic:
        def handler(request: Any) -> Any:
            return ANTHROPIC_HTTP.Response(200, json=_anthropic_reply(self._record(request)))

        model = ChatAnthropic(model="claude-sonnet-4-5", api_key="x", max_retries=0, **kwargs)
        http_client = anthropic.DefaultHttpxClient(transport=ANTHROPIC_HTTP.MockTransport(handler))
        params = dict(model._client_params)
        # ChatAnthropic has no http_client field: seed its cached client instead.
        model.__dict__["_client"] = anthropic.Anthropic(**params, http_client=http_client)
        return model

    def openai(self, *, responses: bool = False, **kwargs: Any) -> ChatOpenAI:
        def handler(request: httpx.Request) -> httpx.Response:
            body = self._record(request)
            reply = _responses_reply(body) if responses else _chat_reply(body)
            return httpx.Response(200, json=reply)

        return ChatOpenAI(
            model="gpt-4o-mini",
            api_key="x",
            max_retries=0,
            use_responses_api=True if responses else None,
            http_client=httpx.Client(transport=httpx.MockTransport(handler)),
            **kwargs,
        )

    def send(self, model: Any, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        """Invoke ``model`` and return the body it put on the wire."""
        model.invoke(list(messages))
        return self.bodies[-1]


#: provider name -> how to build the model that speaks it on the wire.
MODELS: dict[str, Callable[[Wire], Any]] = {
    "anthropic": lambda w: w.anthropic(),
    "openai": lambda w: w.openai(),
    "openai-responses": lambda w: w.openai(responses=True),
}


def call(call_id: str, name: str = "weather", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"city": "SF"}, "id": call_id, "type": "tool_call"}


def ai(*ids: str, text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=[call(i) for i in ids])


def tool(call_id: str, text: str = "sunny", **kwargs: Any) -> ToolMessage:
    return ToolMessage(text, tool_call_id=call_id, **kwargs)


def human(text: str = "q") -> HumanMessage:
    return HumanMessage(text)
