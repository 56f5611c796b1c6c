"""ADK's real LiteLlm (``openai/gpt-4o``) sending to a loopback fake OpenAI server (a
stdlib http.server thread recording each Chat Completions request body): a broken
session goes out repaired in OpenAI Chat shape, a valid one unchanged."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

# litellm fetches its model price map from the network at import unless told otherwise,
# and a proxy in the environment must not see the loopback traffic.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1"]))
os.environ["no_proxy"] = os.environ["NO_PROXY"]
pytest.importorskip("litellm", reason="LiteLlm needs litellm")

from google.adk.models.lite_llm import LiteLlm
from google.adk.sessions import InMemorySessionService

import toolpair
from tests.support.loopback import QuietHandler, serve
from toolpair.integrations.google_adk import ToolpairPlugin, detect

from . import harness as h

pytestmark = pytest.mark.anyio
_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class _Server:
    def __init__(self) -> None:
        bodies: list[dict[str, Any]] = []
        self.bodies = bodies

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                bodies.append({"path": self.path, **json.loads(self.body())})
                self.answer(200, json.dumps(_COMPLETION).encode())

        self.httpd = serve(Handler)
        self.port = self.httpd.server_address[1]


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def lite(server: _Server) -> LiteLlm:
    return LiteLlm(
        model="openai/gpt-4o", api_base=f"http://127.0.0.1:{server.port}/v1", api_key="sk-test"
    )


async def _send(server: _Server, events: list[Any], plugins: list[Any] | None = None) -> Any:
    server.bodies.clear()
    service = InMemorySessionService()
    await h.seed(service, events)
    await h.run(h.runner(h.agent(lite(server)), service, plugins))
    body = server.bodies[0]
    assert body["path"] == "/v1/chat/completions" and body["model"] == "gpt-4o"
    return body


def _calls(body: dict[str, Any]) -> list[str]:
    return [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]


def _tool_messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_detected_as_openai(server: _Server) -> None:
    assert detect(lite(server)) == ("openai", "gpt-4o")


async def test_interrupted_call_kept_and_answered(server: _Server) -> None:
    bare = await _send(server, h.interrupted())
    if h.ADK >= (2, 10):
        # ADK drops the unanswered call: valid, but the model never learns of it.
        assert _calls(bare) == [] and toolpair.validate(bare, "openai") == []
    else:
        v = toolpair.validate(bare, "openai")
        assert [(x.code, x.index, x.ids) for x in v] == [("openai.missing_result", 2, ("c1",))]
        assert v[0].message.startswith("An assistant message with 'tool_calls' must be followed")
    body = await _send(server, h.interrupted(), [ToolpairPlugin()])
    assert toolpair.validate(body, "openai") == []
    assert _calls(body) == ["c1"]
    [(cid, content)] = _tool_messages(body)
    assert cid == "c1" and h.PLACEHOLDER in content


async def test_half_answered_parallel_calls(server: _Server) -> None:
    bare = await _send(server, h.half_answered())
    if h.ADK < (2, 10):
        assert [x.ids for x in toolpair.validate(bare, "openai")] == [("c2",)]
    body = await _send(server, h.half_answered(), [ToolpairPlugin()])
    assert toolpair.validate(body, "openai") == []
    assert _calls(body) == ["c1", "c2"]
    tools = dict(_tool_messages(body))
    assert sorted(tools) == ["c1", "c2"]
    assert "sunny" in tools["c1"] and h.PLACEHOLDER in tools["c2"]


async def test_valid_session_goes_out_unchanged(server: _Server) -> None:
    bare = await _send(server, h.valid())
    assert toolpair.validate(bare, "openai") == []
    plugin = ToolpairPlugin()
    body = await _send(server, h.valid(), [plugin])
    assert body["messages"] == bare["messages"]
    assert plugin.last is None
