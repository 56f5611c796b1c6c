"""The OpenAI Agents SDK holds the conformance suite (`toolpair.conformance`) through
its Responses input items, `repair_items`, `trim_filter` and real ``Runner.run`` calls
on the OpenAIResponsesModel and OpenAIChatCompletionsModel (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import OpenAIAgentsAdapter


class TestOpenAIAgentsConformance(Conformance):
    adapter = OpenAIAgentsAdapter()
    # An agent run per example: fewer than the pure properties get.
    wire_examples = 40
