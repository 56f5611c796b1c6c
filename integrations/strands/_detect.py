"""The provider (and model id) a Strands model class talks to."""

from __future__ import annotations

from typing import Any

from toolpair.integrations._hosts import LITELLM_PROVIDERS

#: Strands model class name -> toolpair provider. Matched along the MRO so a user's
#: subclass of a provider model is judged as that provider.
_CLASSES = {
    "BedrockModel": "bedrock",
    "AnthropicModel": "anthropic",
    "OpenAIModel": "openai",
    "OpenAIResponsesModel": "openai-responses",
    "GeminiModel": "gemini",
    "MistralModel": "mistral",
}

#: LiteLLM routes by the model string's prefix; what it sends is OpenAI Chat shaped,
#: but the API behind the prefix is the one that rejects a history.
_LITELLM_PREFIXES = LITELLM_PROVIDERS

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
    inner = getattr(model, "inner", None)
    if inner is not None and type(model).__name__ == "ToolpairModel":
        model = inner
    model_id = _model_id(model)
    for klass in type(model).__mro__:
        if klass.__name__ == "LiteLLMModel":
            prefix = model_id.split("/", 1)[0] if model_id and "/" in model_id else "openai"
            provider = _LITELLM_PREFIXES.get(prefix, FALLBACK)
            bare = model_id.split("/", 1)[1] if model_id and "/" in model_id else model_id
            return provider, bare
        provider = _CLASSES.get(klass.__name__)
        if provider is not None:
            return provider, model_id
    return FALLBACK, model_id
