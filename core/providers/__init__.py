"""Provider profiles: one module per provider, registered here by name."""

from __future__ import annotations

from toolpair.providers._base import Context, Profile
from toolpair.providers.anthropic import Anthropic
from toolpair.providers.bedrock import Bedrock
from toolpair.providers.gemini import Gemini
from toolpair.providers.mistral import Mistral
from toolpair.providers.openai import OpenAIChat
from toolpair.providers.portable import Portable
from toolpair.providers.responses import Responses

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (Anthropic(), Bedrock(), OpenAIChat(), Responses(), Gemini(), Mistral(), Portable())
}
#: The provider names `validate` and `repair` accept.
PROVIDERS: tuple[str, ...] = tuple(PROFILES)


def get_profile(provider: str) -> Profile:
    try:
        return PROFILES[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}") from None


__all__ = ["PROFILES", "PROVIDERS", "Context", "Profile", "get_profile"]
