"""pydantic-ai holds the conformance suite (`toolpair.conformance`) through
`PydanticAICodec` and the real Anthropic, OpenAI (Chat and Responses) and Bedrock model
classes (`pai_adapter`)."""

from __future__ import annotations

from pai_adapter import PydanticAIAdapter

from toolpair.testing import Conformance


class TestPydanticAIConformance(Conformance):
    adapter = PydanticAIAdapter()
