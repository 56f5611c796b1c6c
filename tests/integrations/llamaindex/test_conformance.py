"""LlamaIndex holds the conformance suite (`toolpair.conformance`) through
`LlamaIndexCodec` and the real Anthropic and OpenAI LLM classes (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import LlamaIndexAdapter


class TestLlamaIndexConformance(Conformance):
    adapter = LlamaIndexAdapter()
    # The fake servers make a send cheap: as many wire examples as the step-by-step
    # histories always had.
    wire_examples = 150
