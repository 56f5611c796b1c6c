"""Google ADK holds the conformance suite (`toolpair.conformance`) on its request
contents, through `AdkCodec` and ADK's real Gemini model class (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import AdkAdapter


class TestGoogleAdkConformance(Conformance):
    adapter = AdkAdapter()
