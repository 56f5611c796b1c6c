"""Which provider's rules a pydantic-ai model is held to."""

from __future__ import annotations

from typing import Any

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

PORTABLE = "portable"


def provider_for(model: Any) -> str:
    """The toolpair provider name for ``model``.

    A fallback model may be served by any of its models, so it is held to the rules of
    all of them at once ("portable"), as is any model toolpair has no profile for.
    """
    seen: set[int] = set()
    while model is not None and id(model) not in seen:
        seen.add(id(model))
        for cls in type(model).__mro__:
            name = cls.__name__
            if name == "FallbackModel":
                return PORTABLE
            if name in _BY_CLASS:
                return _BY_CLASS[name]
        # Wrappers (instrumentation, user WrapperModels) are held to what they wrap.
        model = getattr(model, "wrapped", None)
    return PORTABLE
