"""LlamaIndex holds the conformance suite (`toolpair.conformance`) through
`LlamaIndexCodec` and the real Anthropic and OpenAI LLM classes (`li_adapter`)."""

from __future__ import annotations

from li_adapter import LlamaIndexAdapter

from toolpair.testing import Conformance


class TestLlamaIndexConformance(Conformance):
    adapter = LlamaIndexAdapter()
    # Histories step by step from LlamaIndex's pieces meet the formatter more often
    # than the other properties' examples (their shapes are cheap to send).
    wire_examples = 100
