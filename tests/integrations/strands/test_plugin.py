"""ToolpairPlugin on a real Agent: the middleware where Strands has it (1.62), the model
wrapper before; installing twice changes nothing, removing undoes it."""

from __future__ import annotations

from typing import Any

import pytest
from strands import Agent, tool

import toolpair
from toolpair.integrations.strands import ToolpairModel, ToolpairPlugin
from toolpair.integrations.strands._plugin import HAS_MIDDLEWARE

from . import harness as h

try:
    from strands.plugins import Plugin  # noqa: F401

    HAS_PLUGINS = True
except ImportError:
    HAS_PLUGINS = False

BEDROCK_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def given_the_plugin(plugin: ToolpairPlugin, model: Any, history: list[Any]) -> Agent:
    """An Agent given the plugin at construction (``plugins=``), as Strands installs it."""
    return Agent(
        model=model, messages=history, tools=[weather], plugins=[plugin], callback_handler=None
    )


def agent_with(plugin: ToolpairPlugin | None, history: list[Any]) -> tuple[Agent, h.Capture]:
    capture = h.Capture()
    model = h.bedrock_model(capture)
    agent = Agent(model=model, messages=history, tools=[weather], callback_handler=None)
    if plugin is not None:
        plugin.init_agent(agent)
    return agent, capture


def bad(body: dict[str, Any]) -> list[str]:
    return [v.code for v in toolpair.validate(body, "bedrock", model=BEDROCK_ID)]


@pytest.mark.skipif(not HAS_PLUGINS, reason="strands.plugins is 1.28 and later")
def test_plugin_given_to_the_agent_repairs_the_request() -> None:
    plugin = ToolpairPlugin()
    capture = h.Capture()
    agent = given_the_plugin(plugin, h.bedrock_model(capture), h.interrupted_loop())
    agent("next")
    assert bad(capture.last) == []
    assert [f.kind for f in plugin.last_repair.fixes] == ["synthetic_result"]
    # The middleware sees Strands' own copies: the agent keeps its model and history.
    assert isinstance(agent.model, ToolpairModel) is not HAS_MIDDLEWARE
    assert len(agent.messages[1]["content"]) == 2
    assert len(agent.messages[2]["content"]) == 1


def test_install_is_idempotent_and_reversible() -> None:
    plugin = ToolpairPlugin()
    agent, capture = agent_with(plugin, h.interrupted_loop())
    original = agent.model if HAS_MIDDLEWARE else agent.model.inner
    plugin.init_agent(agent)
    if not HAS_MIDDLEWARE:
        assert isinstance(agent.model, ToolpairModel) and agent.model.inner is original
    agent("next")
    assert bad(capture.last) == []
    # One repair per request: a second handler would have found nothing left to fix.
    assert [f.kind for f in plugin.last_repair.fixes] == ["synthetic_result"]
    plugin.remove(agent)
    assert agent.model is original
    agent.messages[:] = h.interrupted_loop()
    agent("next")
    assert bad(capture.last) == ["bedrock.missing_result"]
    plugin.init_agent(agent)
    agent.messages[:] = h.interrupted_loop()
    agent("next")
    assert bad(capture.last) == []


def test_model_route_forced() -> None:
    plugin = ToolpairPlugin(via="model")
    agent, capture = agent_with(plugin, h.dangling())
    assert isinstance(agent.model, ToolpairModel)
    agent("next")
    assert bad(capture.last) == []


@pytest.mark.skipif(not HAS_MIDDLEWARE, reason="strands.middleware is 1.62 and later")
def test_middleware_leaves_a_per_call_toolpair_model_alone() -> None:
    plugin = ToolpairPlugin(via="middleware")
    capture = h.Capture()
    agent = given_the_plugin(plugin, ToolpairModel(h.bedrock_model(capture)), h.orphan())
    agent("next")
    assert bad(capture.last) == []
    assert plugin.last_repair is None
    assert agent.model.last_repair.fixes


def test_bad_route_is_refused() -> None:
    with pytest.raises(ValueError, match="via must be"):
        ToolpairPlugin(via="hook")  # type: ignore[arg-type]


@pytest.mark.skipif(not HAS_PLUGINS, reason="strands.plugins is 1.28 and later")
def test_plugin_judges_the_model_it_finds() -> None:
    """The same plugin on an OpenAI agent repairs for OpenAI's rules, results first."""
    plugin = ToolpairPlugin()
    capture = h.Capture()
    history = [
        h.user("weather?"),
        h.calls("t1", "t2"),
        {"role": "user", "content": [h.result("t1"), {"text": "and?"}]},
        h.said("fine"),
    ]
    agent = Agent(
        model=h.openai_model(capture),
        messages=history,
        tools=[weather],
        plugins=[plugin],
        callback_handler=None,
    )
    agent("next")
    assert toolpair.validate(capture.last, "openai", model="gpt-4o") == []
    assert sorted(f.kind for f in plugin.last_repair.fixes) == ["results_first", "synthetic_result"]
    assert plugin.last_repair.provider == "openai"
