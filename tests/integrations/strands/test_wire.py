"""Real Strands agents with real provider model classes; the request body each one
sends is captured at the HTTP (or botocore) layer and judged by toolpair."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from strands import Agent, tool

import toolpair
from toolpair.integrations.strands import ToolpairModel, detect_provider

from . import harness as h

MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}

#: What each provider rejects in each broken history as Strands sends it unrepaired:
#: (violation code, message index on the wire).
REJECTED = {
    ("anthropic", "dangling"): ("anthropic.missing_result", 1),
    ("anthropic", "orphan"): ("anthropic.unexpected_result", 0),
    ("anthropic", "interrupted_loop"): ("anthropic.missing_result", 1),
    ("openai", "dangling"): ("openai.missing_result", 1),
    ("openai", "orphan"): ("openai.unexpected_tool_message", 0),
    ("openai", "interrupted_loop"): ("openai.missing_result", 1),
    ("bedrock", "dangling"): ("bedrock.missing_result", 1),
    ("bedrock", "orphan"): ("bedrock.too_many_results", 0),
    # The answering turn holds one of the two results: Converse's own check refuses it,
    # in its words, at that user turn (a recorded refusal on Claude Sonnet 4.6).
    ("bedrock", "interrupted_loop"): ("bedrock.missing_result", 2),
}


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def run(provider: str, history: list[Any], wrap: bool) -> tuple[dict[str, Any], Agent, Any]:
    capture = h.Capture()
    model = h.MODELS[provider](capture)
    if wrap:
        model = ToolpairModel(model)
    agent = Agent(model=model, messages=history, tools=[weather], callback_handler=None)
    agent("next")
    return capture.last, agent, model


def strip(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "tracking_id"}


def verdict(body: dict[str, Any], provider: str) -> list[toolpair.Violation]:
    return toolpair.validate(body, provider, model=MODEL_IDS[provider])


@pytest.mark.parametrize("provider", sorted(h.MODELS))
@pytest.mark.parametrize("case", sorted(h.BROKEN))
def test_broken_history_is_rejected_without_toolpair(provider: str, case: str) -> None:
    body, _, _ = run(provider, h.BROKEN[case](), wrap=False)
    found = verdict(body, provider)
    code, index = REJECTED[provider, case]
    assert [(v.code, v.index) for v in found][:1] == [(code, index)]
    assert set(h.IDS[case]) <= set(found[0].ids)
    assert found[0].message


@pytest.mark.parametrize("provider", sorted(h.MODELS))
@pytest.mark.parametrize("case", sorted(h.BROKEN))
def test_broken_history_goes_out_repaired(provider: str, case: str) -> None:
    history = h.BROKEN[case]()
    before = copy.deepcopy(history)
    body, agent, model = run(provider, history, wrap=True)
    assert verdict(body, provider) == []
    fixes = model.last_repair.fixes
    assert fixes and {i for f in fixes for i in f.ids} >= set(h.IDS[case])
    # Nothing was written back: the agent's history starts with exactly what it had
    # (Strands 1.62 tags each message with a tracking id of its own).
    assert [strip(m) for m in agent.messages[: len(before)]] == before


@pytest.mark.parametrize("provider", sorted(h.MODELS))
def test_real_result_survives_repair(provider: str) -> None:
    body, _, _ = run(provider, h.interrupted_loop(), wrap=True)
    assert "sunny" in str(body["messages"])
    assert toolpair.Policy().placeholder in str(body["messages"])


@pytest.mark.parametrize("provider", sorted(h.MODELS))
def test_valid_history_goes_out_unchanged(provider: str) -> None:
    plain, _, _ = run(provider, h.valid(), wrap=False)
    wrapped, _, model = run(provider, h.valid(), wrap=True)
    assert verdict(plain, provider) == []
    assert wrapped == plain
    assert model.last_repair.fixes == []


def test_untouched_messages_are_the_same_objects() -> None:
    history = [*h.interrupted_loop(), h.user("q"), h.said("a")]
    model = ToolpairModel(h.bedrock_model(h.Capture()))
    out = model.repair(history)
    assert out[0] is history[0] and out[-1] is history[-1]


def test_provider_and_model_read_off_the_model_class() -> None:
    capture = h.Capture()
    assert detect_provider(h.bedrock_model(capture)) == ("bedrock", MODEL_IDS["bedrock"])
    assert detect_provider(h.anthropic_model(capture)) == ("anthropic", "claude-sonnet-4-5")
    assert detect_provider(h.openai_model(capture)) == ("openai", "gpt-4o")
    assert detect_provider(ToolpairModel(h.openai_model(capture))) == ("openai", "gpt-4o")


def test_explicit_provider_wins() -> None:
    model = ToolpairModel(h.openai_model(h.Capture()), provider="gemini", model="gemini-2.5-pro")
    assert model._target() == ("gemini", "gemini-2.5-pro")


def test_wrapping_twice_wraps_once() -> None:
    inner = h.openai_model(h.Capture())
    twice = ToolpairModel(ToolpairModel(inner))
    assert twice.inner is inner
    assert twice.get_config() == inner.get_config()


def test_openai_results_go_before_the_turns_text() -> None:
    """A restored turn holding a result and text (Strands' own restore builds these) is
    sent results first: Strands' OpenAI formatter (1.0) puts a turn's text before its
    tool messages, which parts the result from its call."""
    history = [
        h.user("weather?"),
        h.calls("t1"),
        {"role": "user", "content": [h.result("t1"), {"text": "and?"}]},
        h.said("fine"),
    ]
    body, _, model = run("openai", history, wrap=True)
    assert verdict(body, "openai") == []
    roles = [m["role"] for m in body["messages"]]
    assert roles[:4] == ["user", "assistant", "tool", "user"]
    assert [f.kind for f in model.last_repair.fixes] == ["results_first"]
