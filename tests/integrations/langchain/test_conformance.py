"""LangChain holds the conformance suite (`toolpair.conformance`): generated histories
in ``BaseMessage`` types, checked through `LangChainCodec` for every provider profile,
and sent through the real ChatAnthropic / ChatOpenAI request path (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import LangChainAdapter


class TestLangChainConformance(Conformance):
    adapter = LangChainAdapter()
    # As many wire examples as LangChain's own histories always had.
    wire_examples = 100
