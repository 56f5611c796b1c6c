"""Offline capture of the exact request bodies ChatAnthropic and ChatOpenAI send.

The real chat model classes run end to end through ``invoke``; only the HTTP transport
is replaced, by one that records the JSON body and answers with a minimal valid reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import httpx
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from toolpair.conformance import anthropic_reply, chat_reply, responses_reply, sdk_http

# The anthropic SDK moved from httpx to httpx2 (2.x); its transports and requests are
# those of whichever HTTP package its own base client imports.
ANTHROPIC_HTTP: Any = sdk_http("anthropic")


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
            return ANTHROPIC_HTTP.Response(200, json=anthropic_reply(self._record(request)))

        model = ChatAnthropic(model="claude-sonnet-4-5", api_key="x", max_retries=0, **kwargs)
        http_client = anthropic.DefaultHttpxClient(transport=ANTHROPIC_HTTP.MockTransport(handler))
        params = dict(model._client_params)
        # ChatAnthropic has no http_client field: seed its cached client instead.
        model.__dict__["_client"] = anthropic.Anthropic(**params, http_client=http_client)
        return model

    def openai(self, *, responses: bool = False, **kwargs: Any) -> ChatOpenAI:
        def handler(request: httpx.Request) -> httpx.Response:
            body = self._record(request)
            reply = responses_reply(body) if responses else chat_reply(body)
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
