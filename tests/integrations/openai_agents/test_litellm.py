"""LitellmModel to Anthropic, the body captured at LiteLLM's HTTP layer: the SDK's
chat conversion plus LiteLLM's Anthropic translation leave a bare tool_use or an orphan
tool_result (400); with toolpair the items are judged by Anthropic's rules first."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("litellm")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
from agents import Agent, RunConfig, Runner, function_tool
from agents.extensions.models.litellm_model import LitellmModel
from oa_harness import fc, out, user

import toolpair
from toolpair.integrations.openai_agents import with_toolpair

pytestmark = pytest.mark.anyio


@function_tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"sunny in {city}"


def _anthropic_reply(tool: bool) -> dict:
    content = (
        [{"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"city": "Rome"}}]
        if tool
        else [{"type": "text", "text": "done"}]
    )
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


@pytest.fixture
def anthropic_bodies(monkeypatch):
    """Every Messages API body LiteLLM sends, answered by a scripted reply."""
    bodies: list[dict] = []
    script: list[bool] = []

    async def send(self, request, *args, **kwargs):
        body = json.loads(request.content)
        bodies.append(body)
        tool = script.pop(0) if script else False
        return httpx.Response(200, json=_anthropic_reply(tool), request=request)

    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    return bodies, script


CASES = {
    "dangling call": [user("hi"), fc("call_d", "lookup", "fc_d"), user("go on")],
    "orphan output": [out("call_gone", "42"), user("and now?")],
    "split batch": [
        user("weather and time?"),
        fc("call_w", "lookup", "fc_w"),
        fc("call_t", "lookup", "fc_t"),
        user("(interrupted)"),
        out("call_t", "09:00"),
    ],
}


@pytest.mark.parametrize("case", list(CASES))
async def test_litellm_anthropic(case, anthropic_bodies):
    bodies, _ = anthropic_bodies
    model = LitellmModel("anthropic/claude-sonnet-4-5", api_key="x")
    agent = Agent(name="a", tools=[lookup])
    await Runner.run(agent, list(CASES[case]), run_config=RunConfig(model=model))
    raw = bodies[-1]
    broken = toolpair.validate(raw, "anthropic")

    await Runner.run(agent, list(CASES[case]), run_config=with_toolpair(RunConfig(model=model)))
    fixed = bodies[-1]
    assert toolpair.validate(fixed, "anthropic", model="claude-sonnet-4-5") == []
    if case == "split batch":
        # The SDK pulls a result up next to its call for Anthropic models; the other
        # call of the batch still goes out bare.
        assert [v.code for v in broken] == ["anthropic.missing_result"]
    else:
        assert broken, f"LiteLLM sent {case} valid already"


async def test_litellm_parallel_calls_from_the_model(anthropic_bodies):
    bodies, script = anthropic_bodies
    script[:] = [True, False]
    model = LitellmModel("anthropic/claude-sonnet-4-5", api_key="x")
    agent = Agent(name="a", tools=[lookup])
    await Runner.run(agent, "weather?", run_config=with_toolpair(RunConfig(model=model)))
    assert len(bodies) == 2
    for body in bodies:
        assert toolpair.validate(body, "anthropic") == []


async def test_litellm_model_string_through_the_sdks_multi_provider(anthropic_bodies, monkeypatch):
    """`Agent(model="litellm/anthropic/...")`: the SDK's MultiProvider builds the
    LitellmModel; the provider with_toolpair installs wraps it and judges the items by
    Anthropic's rules."""
    bodies, _ = anthropic_bodies
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    agent = Agent(name="a", tools=[lookup], model="litellm/anthropic/claude-sonnet-4-5")
    items = list(CASES["dangling call"])
    await Runner.run(agent, items)
    assert toolpair.validate(bodies[-1], "anthropic")
    await Runner.run(agent, items, run_config=with_toolpair())
    assert toolpair.validate(bodies[-1], "anthropic") == []
