"""Strands holds the conformance suite (`toolpair.conformance`) through its Converse
messages, `ToolpairModel` and the real model classes' request formatting (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import StrandsAdapter


class TestStrandsConformance(Conformance):
    adapter = StrandsAdapter()
