"""LlamaIndex holds the conformance suite (`toolpair.conformance`) through
`LlamaIndexCodec` and the real Anthropic and OpenAI LLM classes (`li_adapter`)."""

from __future__ import annotations

from li_adapter import LlamaIndexAdapter

from toolpair.testing import Conformance


class TestLlamaIndexConformance(Conformance):
    adapter = LlamaIndexAdapter()
    # The fake servers make a send cheap: as many wire examples as the step-by-step
    # histories always had.
    wire_examples = 150
