"""LiteLLMModel is routed the way LiteLLM routes its model string: by the one reading
every integration shares (``_hosts.litellm_target``), so a Claude model on Vertex is
held to Anthropic's rules, as the LiteLLM guardrail holds it."""

from __future__ import annotations

import os

import pytest

from toolpair.integrations._hosts import litellm_target

# litellm fetches its model price map from the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from toolpair.integrations.strands import detect_provider

pytest.importorskip("litellm", reason="the strands[litellm] extra is newest-env only")

MODELS = [
    "vertex_ai/claude-sonnet-4-5@20250929",
    "vertex_ai/gemini-2.5-pro",
    "anthropic/claude-sonnet-4-5",
    "bedrock/us.anthropic.claude-3-5-sonnet",
    "openai/gpt-4o",
    "ollama/llama3",
    "gpt-4o",
]


@pytest.mark.parametrize("model_id", MODELS)
def test_litellm_model_follows_the_one_routing(model_id: str) -> None:
    from strands.models.litellm import LiteLLMModel

    assert detect_provider(LiteLLMModel(model_id=model_id)) == litellm_target(model_id)


def test_claude_on_vertex_is_anthropic() -> None:
    from strands.models.litellm import LiteLLMModel

    found = detect_provider(LiteLLMModel(model_id="vertex_ai/claude-sonnet-4-5@20250929"))
    assert found == ("anthropic", "claude-sonnet-4-5@20250929")
