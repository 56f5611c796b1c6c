"""LitellmModel to Anthropic (and Gemini, Mistral), the body captured at LiteLLM's HTTP
layer: the SDK's chat conversion plus LiteLLM's translation leave a bare tool_use or an
orphan tool_result (400) for Anthropic, bad ids for Mistral, and drop an unanswered call
for Gemini; with toolpair the items are judged by the downstream provider's rules first."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("litellm")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
from agents import Agent, RunConfig, Runner, function_tool
from agents.extensions.models.litellm_model import LitellmModel

import toolpair
from toolpair.integrations.openai_agents import with_toolpair

from .harness import chat_body, fc, message, out, user

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


def _reply(url: str, tool: bool) -> dict:
    if "generativelanguage" in url:
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": "done"}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
        }
    if "mistral" in url:
        return chat_body([message("done")], "mistral-large-latest")
    return _anthropic_reply(tool)


@pytest.fixture
def litellm_bodies(monkeypatch):
    """Every body LiteLLM sends (Anthropic Messages, Gemini generateContent, Mistral
    chat), answered by a scripted reply in that API's shape."""
    bodies: list[dict] = []
    script: list[bool] = []

    async def send(self, request, *args, **kwargs):
        body = json.loads(request.content)
        bodies.append(body)
        tool = script.pop(0) if script else False
        return httpx.Response(200, json=_reply(str(request.url), tool), request=request)

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
async def test_litellm_anthropic(case, litellm_bodies):
    bodies, _ = litellm_bodies
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


async def test_litellm_parallel_calls_from_the_model(litellm_bodies):
    bodies, script = litellm_bodies
    script[:] = [True, False]
    model = LitellmModel("anthropic/claude-sonnet-4-5", api_key="x")
    agent = Agent(name="a", tools=[lookup])
    await Runner.run(agent, "weather?", run_config=with_toolpair(RunConfig(model=model)))
    assert len(bodies) == 2
    for body in bodies:
        assert toolpair.validate(body, "anthropic") == []


async def test_litellm_model_string_through_the_sdks_multi_provider(litellm_bodies, monkeypatch):
    """`Agent(model="litellm/anthropic/...")`: the SDK's MultiProvider builds the
    LitellmModel; the provider with_toolpair installs wraps it and judges the items by
    Anthropic's rules."""
    bodies, _ = litellm_bodies
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    agent = Agent(name="a", tools=[lookup], model="litellm/anthropic/claude-sonnet-4-5")
    items = list(CASES["dangling call"])
    await Runner.run(agent, items)
    assert toolpair.validate(bodies[-1], "anthropic")
    await Runner.run(agent, items, run_config=with_toolpair())
    assert toolpair.validate(bodies[-1], "anthropic") == []


async def test_litellm_mistral_ids_are_rewritten_for_both_halves(litellm_bodies):
    """Mistral wants 9-character alphanumeric ids and no user message right after tool
    results: judged by Mistral's rules, call and output get the same new id."""
    bodies, _ = litellm_bodies
    model = LitellmModel("mistral/mistral-large-latest", api_key="x")
    agent = Agent(name="a", tools=[lookup])
    items = list(CASES["split batch"])
    await Runner.run(agent, items, run_config=RunConfig(model=model))
    assert toolpair.validate(bodies[-1], "mistral")
    await Runner.run(agent, items, run_config=with_toolpair(RunConfig(model=model)))
    assert toolpair.validate(bodies[-1], "mistral", model="mistral-large-latest") == []
    calls = [c["id"] for m in bodies[-1]["messages"] for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert sorted(calls) == sorted(results) and all(len(i) == 9 for i in calls)


async def test_litellm_gemini_keeps_the_unanswered_call(litellm_bodies):
    """To Gemini the SDK drops a call that has no output (the request is accepted, and
    the model no longer knows it made the call); judged by Gemini's rules the call is
    kept with the neutral error result."""
    bodies, _ = litellm_bodies
    model = LitellmModel("gemini/gemini-2.5-flash", api_key="x")
    agent = Agent(name="a", tools=[lookup])
    items = list(CASES["split batch"])

    def calls(body):
        return [p for c in body["contents"] for p in c["parts"] if "function_call" in p]

    await Runner.run(agent, items, run_config=RunConfig(model=model))
    assert len(calls(bodies[-1])) == 1
    await Runner.run(agent, items, run_config=with_toolpair(RunConfig(model=model)))
    assert len(calls(bodies[-1])) == 2
    assert toolpair.validate(bodies[-1], "gemini", model="gemini-2.5-flash") == []
