"""Every integration that reads a LiteLLM model string routes it the way LiteLLM does:
by the one reading they share (``_hosts.litellm_target``), so a Claude model on Vertex
is held to Anthropic's rules, as the LiteLLM guardrail holds it.

One module for all of them: each framework's tox env runs it beside its own folder, and
the routes of frameworks not installed there are not collected."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import pytest

from toolpair.integrations._hosts import litellm_target

# litellm fetches its model price map from the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODELS = [
    "vertex_ai/claude-sonnet-4-5@20250929",
    "vertex_ai/gemini-2.5-pro",
    "anthropic/claude-sonnet-4-5",
    "bedrock/us.anthropic.claude-3-5-sonnet",
    "openai/gpt-4o",
    "ollama/llama3",
    "gpt-4o",
]


def _needs_litellm(what: str) -> None:
    if importlib.util.find_spec("litellm") is None:
        pytest.skip(f"{what} needs litellm")


def adk(model: str) -> Any:
    _needs_litellm("ADK's LiteLlm")
    from google.adk.models.lite_llm import LiteLlm

    from toolpair.integrations.google_adk import detect

    return detect(LiteLlm(model=model))


def strands(model: str) -> Any:
    _needs_litellm("LiteLLMModel (the strands[litellm] extra)")
    from strands.models.litellm import LiteLLMModel

    from toolpair.integrations.strands import detect_provider

    return detect_provider(LiteLLMModel(model_id=model))


def agents_string(model: str) -> Any:
    from toolpair.integrations.openai_agents import detect_provider

    return detect_provider(f"litellm/{model}")


def agents_object(model: str) -> Any:
    from toolpair.integrations.openai_agents import detect_provider

    try:
        from agents.extensions.models.litellm_model import LitellmModel
    except ImportError as e:  # the SDK raises ImportError when litellm is missing
        pytest.skip(f"LitellmModel needs litellm: {e}")
    return detect_provider(LitellmModel(model=model))


#: route -> (the framework's module, how it reads a LiteLLM model string).
ROUTES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "google_adk-LiteLlm": ("google.adk", adk),
    "strands-LiteLLMModel": ("strands", strands),
    "openai_agents-litellm/": ("agents", agents_string),
    "openai_agents-LitellmModel": ("agents", agents_object),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package missing
        return False


HERE = sorted(r for r, (module, _) in ROUTES.items() if _installed(module))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("route", HERE)
def test_litellm_follows_the_one_routing(route: str, model: str) -> None:
    assert ROUTES[route][1](model) == litellm_target(model)


@pytest.mark.parametrize("route", HERE)
def test_claude_on_vertex_is_anthropic(route: str) -> None:
    found = ROUTES[route][1]("vertex_ai/claude-sonnet-4-5@20250929")
    assert found == ("anthropic", "claude-sonnet-4-5@20250929")
