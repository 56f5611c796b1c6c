"""Portable: the canonical form valid on every provider at once, for histories that
may fail over from one provider to another. Its rules are the union of every profile's,
hosts included; its layout takes the strictest choice of each."""

from __future__ import annotations

from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair.providers._base import Context, Profile
from toolpair.providers.anthropic import Anthropic
from toolpair.providers.bedrock import Bedrock
from toolpair.providers.deepseek import DeepSeek, DeepSeekResponses
from toolpair.providers.gemini import Gemini
from toolpair.providers.mistral import Mistral
from toolpair.providers.moonshot import Moonshot
from toolpair.providers.openai import OpenAIChat
from toolpair.providers.responses import Responses
from toolpair.providers.vertex import Vertex
from toolpair.providers.zhipu import Zhipu

MEMBERS: tuple[Profile, ...] = (
    Anthropic(),
    Bedrock(),
    OpenAIChat(),
    Responses(),
    Gemini(),
    Mistral(),
    Vertex(),
    DeepSeek(),
    DeepSeekResponses(),
    Moonshot(),
    Zhipu(),
)


class Portable(Mistral):
    """Ids follow Mistral's rule (exactly 9 alphanumerics), which every other provider
    also accepts."""

    name = "portable"
    # Its own checker (a framework's), not Mistral's: its rules are not a subset of those.
    fast_key = "portable"
    results_only = True
    bridge_after_results = True
    strict_alternation = True
    first_user = True
    first_not_call = True
    drop_empty = True
    reasoning_adjacency = True
    reasoning_ends_calls = True
    # Vertex refuses ids on Gemini function calls and responses.
    ids_allowed = False
    calls_only = True
    fc_needs_reasoning = True

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out: list[Violation] = []
        for member in MEMBERS:
            out.extend(member.rules(messages, ctx))
        return out
