"""The Strands adapter for the conformance suite (`toolpair.conformance`).

Strands' history is Converse-shaped dicts for every model class, read by the core's
``bedrock`` codec with each provider's rules. The wire is the real model class's own
``format_request`` (BedrockModel, AnthropicModel, OpenAIModel), which returns exactly
the body it sends (the HTTP-level tests in test_wire.py capture the same bodies through
real agent runs); repair is what `ToolpairModel` sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._model import Codec
from toolpair.conformance import Adapter, Unsendable
from toolpair.formats import CODECS
from toolpair.integrations.strands import ToolpairModel, repair_messages
from toolpair.testing import generate

from . import harness as h

MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}


class StrandsAdapter(Adapter):
    name = "strands"
    models = MODEL_IDS
    providers = ("anthropic", "bedrock", "openai", "gemini", "mistral", "portable")
    wire_providers = ("anthropic", "bedrock", "openai")

    def __init__(self) -> None:
        capture = h.Capture()
        self._models = {p: make(capture) for p, make in h.MODELS.items()}
        self._wrapped = {p: ToolpairModel(m) for p, m in self._models.items()}

    def codec(self, provider: str) -> Codec:
        return CODECS["bedrock"]

    def build(self, history: list[Any]) -> list[Any]:
        # Strands' ToolResult always carries its status (its formatters index it).
        out = generate.render(history, "bedrock")
        for m in out:
            for b in m["content"]:
                if "toolResult" in b:
                    b["toolResult"].setdefault("status", "success")
        return out

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        try:
            return self._models[provider].format_request(list(messages))
        except TypeError as e:
            # Strands 1.0's OpenAIModel refuses a reasoningContent block outright.
            raise Unsendable(str(e)) from e

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        wrapped = self._wrapped.get(provider)
        if wrapped is not None:
            return wrapped.repair(messages)
        fixed = repair_messages(messages, provider, model=self.model(provider))
        return list(fixed.messages)

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        # Strands' OpenAIModel formats a user turn's text before its tool messages
        # (`results_first` is ToolpairModel's answer), so for OpenAI the verdict on such
        # a turn cannot match the wire. Strands 1.0's refuses reasoning blocks.
        if provider == "openai" and any(
            "reasoningContent" in b for m in messages for b in m["content"]
        ):
            try:
                self.send(messages, provider)
            except Unsendable:
                return False
        return provider != "openai" or not any(
            m["role"] == "user"
            and any("toolResult" in b for b in m["content"])
            and any("toolResult" not in b for b in m["content"])
            for m in messages
        )
