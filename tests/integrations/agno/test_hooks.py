"""What the conformance suite cannot know about agno's hook: the poisoned history's
message roles."""

from __future__ import annotations

from toolpair.integrations.agno import poisoned_history


def test_the_poisoned_history_is_made_of_agno_messages() -> None:
    history, _ = poisoned_history()
    assert [m.role for m in history] == ["user", "assistant", "user", "tool"]
