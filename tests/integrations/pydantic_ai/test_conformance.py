"""pydantic-ai holds the conformance suite (`toolpair.conformance`) through
`PydanticAICodec` and the real Anthropic, OpenAI (Chat and Responses) and Bedrock model
classes (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import PydanticAIAdapter


class TestPydanticAIConformance(Conformance):
    adapter = PydanticAIAdapter()
