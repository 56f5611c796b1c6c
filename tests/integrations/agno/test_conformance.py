"""agno holds the conformance suite (`toolpair.conformance`) through `AgnoCodec` and
real agno agent runs on the Anthropic, OpenAI (Chat and Responses), Bedrock and Gemini
model classes (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import AgnoAdapter


class TestAgnoConformance(Conformance):
    adapter = AgnoAdapter()
    # An agent run per example: fewer than the pure properties get.
    wire_examples = 25
