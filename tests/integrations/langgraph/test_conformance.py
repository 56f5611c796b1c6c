"""LangGraph holds the conformance suite (`toolpair.conformance`) through its own entry
points: `repair_hook` as repair, a real ``create_react_agent`` graph run as the repaired
request, `repair_hook(trim=...)` and `summarize_hook` as compaction, and the thread
codec's no-op path (`adapter`)."""

from __future__ import annotations

from toolpair.testing import Conformance

from .adapter import LangGraphAdapter


class TestLangGraphConformance(Conformance):
    adapter = LangGraphAdapter()
    # A graph run per repaired example: fewer than the pure properties get.
    wire_examples = 40
