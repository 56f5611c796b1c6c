"""Which provider (and which model) an Agents SDK model really talks to.

The SDK hands every model the same Responses items; what the far end accepts depends on
the model class (Responses, Chat Completions, LiteLLM, any-llm), the host its client
points at, and the model id. toolpair judges the items with that provider's rules.
"""

from __future__ import annotations

import os
from typing import Any

from toolpair.integrations._hosts import litellm_target, provider_at
from toolpair.providers import PROVIDERS

#: Profiles the lead is adding, and what to use until this toolpair has them.
_FALLBACK = {"vertex": "gemini", "deepseek": "openai", "deepseek-responses": "openai-responses"}


def known(provider: str) -> str:
    """``provider`` if this toolpair has its profile, else the closest one it has."""
    if provider in PROVIDERS:
        return provider
    return known(_FALLBACK[provider]) if provider in _FALLBACK else "portable"


def _responses_default() -> bool:
    try:
        from agents.models import _openai_shared
    except ImportError:  # pragma: no cover - the SDK is what this module is for
        return True
    return bool(_openai_shared.get_use_responses_by_default())


def _default_model() -> str | None:
    name = os.environ.get("OPENAI_DEFAULT_MODEL")
    if name:
        return name
    try:
        from agents.models.default_models import get_default_model
    except ImportError:
        return None
    return str(get_default_model())


def detect(model: Any) -> tuple[str, str | None]:
    """``(provider, model id)`` for a model as the SDK resolves it: a string (with or
    without ``litellm/`` / ``any-llm/``), a ``Model`` object, or None (the SDK default).
    The provider may be a profile this toolpair does not have yet; `known` maps it."""
    if model is None:
        model = _default_model()
        if model is None:
            return ("openai-responses" if _responses_default() else "openai"), None
    if isinstance(model, str):
        prefix, _, rest = model.partition("/")
        if prefix in ("litellm", "any-llm") and rest:
            return litellm_target(rest)
        if prefix == "openai" and rest:
            model = rest
        return ("openai-responses" if _responses_default() else "openai"), model
    inner = getattr(model, "toolpair_inner", None)
    if inner is not None:
        return detect(inner)
    names = {c.__name__ for c in type(model).__mro__}
    model_id = getattr(model, "model", None)
    model_id = model_id if isinstance(model_id, str) else None
    if "OpenAIResponsesModel" in names or "OpenAIChatCompletionsModel" in names:
        responses = "OpenAIResponsesModel" in names
        client = getattr(model, "_client", None)
        host = provider_at(getattr(client, "base_url", None), responses=responses)
        if host is not None and host != "portable":
            return host, model_id
        if host == "portable":
            return "portable", model_id
        return ("openai-responses" if responses else "openai"), model_id
    if "LitellmModel" in names or "AnyLLMModel" in names:
        if model_id is None:
            return "portable", None
        base = getattr(model, "base_url", None)
        provider, mid = litellm_target(model_id)
        if base and provider in ("openai", "portable"):
            provider = provider_at(base, responses=False) or provider
        return provider, mid
    return "portable", model_id
