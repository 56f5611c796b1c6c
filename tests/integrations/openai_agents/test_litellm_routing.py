"""``litellm/...`` model strings and LitellmModel objects are routed the way LiteLLM
routes the string: by the one reading every integration shares
(``_hosts.litellm_target``), so a Claude model on Vertex is held to Anthropic's rules,
as the LiteLLM guardrail holds it."""

from __future__ import annotations

import os

import pytest

from toolpair.integrations._hosts import litellm_target

# litellm fetches its model price map from the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from toolpair.integrations.openai_agents import detect_provider

MODELS = [
    "vertex_ai/claude-sonnet-4-5@20250929",
    "vertex_ai/gemini-2.5-pro",
    "anthropic/claude-sonnet-4-5",
    "bedrock/us.anthropic.claude-3-5-sonnet",
    "openai/gpt-4o",
    "ollama/llama3",
    "gpt-4o",
]


@pytest.mark.parametrize("model", MODELS)
def test_litellm_strings_follow_the_one_routing(model: str) -> None:
    assert detect_provider(f"litellm/{model}") == litellm_target(model)


@pytest.mark.parametrize("model", MODELS)
def test_litellm_model_objects_follow_the_one_routing(model: str) -> None:
    try:
        from agents.extensions.models.litellm_model import LitellmModel
    except ImportError as e:  # the SDK raises ImportError when litellm is missing
        pytest.skip(f"LitellmModel needs litellm: {e}")
    assert detect_provider(LitellmModel(model=model)) == litellm_target(model)


def test_claude_on_vertex_is_anthropic() -> None:
    found = detect_provider("litellm/vertex_ai/claude-sonnet-4-5@20250929")
    assert found == ("anthropic", "claude-sonnet-4-5@20250929")
