"""The conformance suite run on the wire formats themselves, with no framework: an
application whose history is already a provider's request (its "formatter" sends the
list as the body) holds the same contract as a framework integration. This also proves
the suite's properties pass on the core's own codecs, so a failure in a framework env
points at that framework."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._gen import render, simple_problems
from toolpair._model import Codec
from toolpair.formats import CODECS
from toolpair.testing import Adapter, Conformance


class WireAdapter(Adapter):
    """Histories in one wire format; sending one is wrapping it in a request body."""

    def __init__(self, fmt: str, provider: str) -> None:
        self.fmt = fmt
        self.name = fmt
        self.providers = (provider,)
        self.wire_providers = (provider,)
        self.fast_providers = (provider,)

    def codec(self, provider: str) -> Codec:
        return CODECS[self.fmt]

    def build(self, history: list[Any]) -> list[Any]:
        return render(history, self.fmt)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        key = "input" if self.fmt == "openai-responses" else "messages"
        return {"model": "m", key: list(messages)}

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(list(messages), self.fmt, provider)


class TestAnthropicMessages(Conformance):
    adapter = WireAdapter("anthropic", "anthropic")


class TestOpenAIChat(Conformance):
    adapter = WireAdapter("openai", "openai")
