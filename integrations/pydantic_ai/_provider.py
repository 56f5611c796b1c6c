"""Which provider's rules a pydantic-ai model is held to, and which model it is."""

from __future__ import annotations

from typing import Any

from toolpair.integrations._hosts import CHAT_HOSTS, DEEPSEEK, at_deepseek, provider_at

#: Matched by class name along the MRO, so the optional SDK behind each model class is
#: never imported just to ask, and subclasses (OpenRouterModel is an OpenAIChatModel)
#: inherit their base's rules.
_BY_CLASS = {
    "AnthropicModel": "anthropic",
    "BedrockConverseModel": "bedrock",
    "OpenAIChatModel": "openai",
    "OpenAIModel": "openai",  # the 1.x name of OpenAIChatModel
    "OpenAIResponsesModel": "openai-responses",
    "GoogleModel": "gemini",
    "GeminiModel": "gemini",
    "MistralModel": "mistral",
}

#: pydantic-ai's provider names for OpenAI-compatible hosts with rules of their own.
_CHAT_HOST_NAMES = {"moonshotai": "moonshot", "zai": "zhipu"}

#: The provider names pydantic-ai gives Google Cloud (Vertex AI): "google-vertex" on 1.x
#: (and the old GeminiModel), "google-cloud" on 2.x.
_VERTEX_NAMES = frozenset({"google-vertex", "google-cloud"})

PORTABLE = "portable"


def _attr(model: Any, name: str) -> Any:
    # Some of these are properties that reach into an SDK client; a model built without
    # one (a test double, a half-configured provider) must not make detection fail.
    try:
        return getattr(model, name, None)
    except Exception:
        return None


def _host(model: Any, provider: str) -> str:
    """The host profile where the model says which host it talks to, else ``provider``."""
    system = _attr(model, "system")
    if provider == "gemini":
        # GoogleModel decides the transport from its client (a Vertex client passed to
        # GoogleProvider keeps the name "google"); the provider name covers GeminiModel.
        client = _attr(model, "client")
        if _attr(client, "vertexai") is True or system in _VERTEX_NAMES:
            return "vertex"
    elif provider in DEEPSEEK:
        base_url = _attr(model, "base_url")
        if system == "deepseek" or (isinstance(base_url, str) and at_deepseek(base_url)):
            return DEEPSEEK[provider]
        if provider == "openai":
            # Moonshot (Kimi) and Zhipu (GLM): by provider, or by base URL.
            host = _CHAT_HOST_NAMES.get(system) if isinstance(system, str) else None
            host = host or provider_at(base_url, responses=False)
            if host in CHAT_HOSTS:
                return host
    return provider


def _unwrapped(model: Any) -> Any:
    """The model behind wrappers (instrumentation, user WrapperModels); None for a
    FallbackModel, which may be served by any of its models."""
    seen: set[int] = set()
    while model is not None and id(model) not in seen:
        seen.add(id(model))
        for cls in type(model).__mro__:
            name = cls.__name__
            if name == "FallbackModel":
                return None
            if name in _BY_CLASS:
                return model
        model = getattr(model, "wrapped", None)
    return None


def provider_for(model: Any) -> str:
    """The toolpair provider name for ``model``.

    A fallback model may be served by any of its models, so it is held to the rules of
    all of them at once ("portable"), as is any model toolpair has no profile for.
    GoogleModel on Google Cloud is "vertex"; an OpenAI model class whose provider is
    DeepSeek (or whose base URL is DeepSeek's) is "deepseek" / "deepseek-responses".
    """
    inner = _unwrapped(model)
    if inner is None:
        return PORTABLE
    for cls in type(inner).__mro__:
        provider = _BY_CLASS.get(cls.__name__)
        if provider is not None:
            return _host(inner, provider)
    return PORTABLE


def model_for(model: Any) -> str | None:
    """The model id ``model`` sends (its ``model_name``, as the user wrote it: a Bedrock
    id keeps its geo prefix), or None where it cannot be told: a FallbackModel, a model
    class toolpair has no profile for."""
    inner = _unwrapped(model)
    name = _attr(inner, "model_name") if inner is not None else None
    return name if isinstance(name, str) and name else None
