"""Google ADK holds the conformance suite (`toolpair.conformance`) on its request
contents, through `AdkCodec` and ADK's real Gemini model class (`adk_adapter`)."""

from __future__ import annotations

from adk_adapter import AdkAdapter

from toolpair.testing import Conformance


class TestGoogleAdkConformance(Conformance):
    adapter = AdkAdapter()
