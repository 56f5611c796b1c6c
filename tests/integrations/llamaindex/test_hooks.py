"""What the conformance suite cannot know about LlamaIndex's hook: the poisoned
history's message roles."""

from __future__ import annotations

from toolpair.integrations.llamaindex import poisoned_history


def test_the_poisoned_history_is_made_of_chat_messages() -> None:
    history, _ = poisoned_history()
    assert [m.role.value for m in history] == ["user", "assistant", "user", "tool"]
