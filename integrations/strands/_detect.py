"""The provider (and model id) a Strands model class talks to."""

from __future__ import annotations

from typing import Any

from toolpair.integrations._base import Target
from toolpair.integrations._hosts import by_class, litellm_target

#: Strands model class name -> toolpair provider. Matched along the MRO so a user's
#: subclass of a provider model is judged as that provider; LiteLLMModel routes by its
#: model id's ``provider/`` segment.
_CLASSES = {
    "LiteLLMModel": "litellm",
    "BedrockModel": "bedrock",
    "AnthropicModel": "anthropic",
    "OpenAIModel": "openai",
    "OpenAIResponsesModel": "openai-responses",
    "GeminiModel": "gemini",
    "MistralModel": "mistral",
}

#: Without a recognised class, the rules every provider shares.
FALLBACK = "portable"


def _model_id(model: Any) -> str | None:
    try:
        config = model.get_config()
    except Exception:  # a model whose config cannot be read still gets repaired
        return None
    if isinstance(config, dict):
        value = config.get("model_id")
    else:
        value = getattr(config, "model_id", None)
    return value if isinstance(value, str) else None


def detect_provider(model: Any) -> tuple[str, str | None]:
    """``(provider, model_id)`` for a Strands ``Model`` instance."""
    target = target_of(model)
    return target.provider, target.model


def target_of(model: Any) -> Target:
    """What a request to the Strands ``Model`` ``model`` is judged for."""
    inner = getattr(model, "inner", None)
    if inner is not None and type(model).__name__ == "ToolpairModel":
        model = inner
    model_id = _model_id(model)
    found = by_class(model, _CLASSES)
    if found is None:
        return Target(FALLBACK, model_id)
    if found[1] == "litellm":
        # LiteLLM routes by the prefix; a bare id is an OpenAI model to it.
        provider, bare = litellm_target(model_id) if model_id else ("openai", None)
        return Target(provider, bare)
    return Target(found[1], model_id)
