"""Strands holds the conformance suite (`toolpair.conformance`) through its Converse
messages, `ToolpairModel` and the real model classes' request formatting (`st_adapter`)."""

from __future__ import annotations

from st_adapter import StrandsAdapter

from toolpair.testing import Conformance


class TestStrandsConformance(Conformance):
    adapter = StrandsAdapter()
