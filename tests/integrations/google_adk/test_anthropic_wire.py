"""ADK's AnthropicLlm (2.x, anthropic SDK on httpx2) with a mock transport capturing the
Messages request: the plugin judges the contents with Anthropic's rules and what goes
out is valid, the interrupted call kept and answered."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anthropic", reason="AnthropicLlm needs the anthropic SDK")
anthropic_llm = pytest.importorskip("google.adk.models.anthropic_llm")

import anthropic  # noqa: E402
import httpx2  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402

import toolpair  # noqa: E402
from tests.support.replies import anthropic_message  # noqa: E402
from toolpair.integrations.google_adk import ToolpairPlugin, detect  # noqa: E402

from .harness import PLACEHOLDER, agent, half_answered, interrupted, run, runner, seed  # noqa: E402

pytestmark = pytest.mark.anyio


def claude(bodies: list) -> anthropic_llm.AnthropicLlm:
    def handler(request):
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=anthropic_message())

    client = anthropic.AsyncAnthropic(
        api_key="sk-test", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    )
    return anthropic_llm.AnthropicLlm(model="claude-sonnet-4-5", client=client)


async def _send(events, plugins=None):
    bodies: list = []
    service = InMemorySessionService()
    await seed(service, events)
    await run(runner(agent(claude(bodies)), service, plugins))
    return bodies[0]


def _results(body):
    return [
        (b["tool_use_id"], b.get("content"), b.get("is_error"))
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


def test_detected_as_anthropic():
    assert detect(claude([])) == ("anthropic", "claude-sonnet-4-5")


async def test_interrupted_call_kept_and_answered():
    bare = await _send(interrupted())
    # ADK drops the unanswered call for Claude: valid, but the call is gone.
    assert toolpair.validate(bare, "anthropic") == []
    assert _results(bare) == []
    body = await _send(interrupted(), [ToolpairPlugin()])
    assert toolpair.validate(body, "anthropic") == []
    uses = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_use"]
    assert [(u["id"], u["name"]) for u in uses] == [("c1", "get_weather")]
    assert [r[0] for r in _results(body)] == ["c1"]
    assert PLACEHOLDER in json.dumps(_results(body)[0][1])


async def test_half_answered_parallel_calls():
    body = await _send(half_answered(), [ToolpairPlugin()])
    assert toolpair.validate(body, "anthropic") == []
    assert sorted(r[0] for r in _results(body)) == ["c1", "c2"]
