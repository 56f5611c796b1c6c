"""What the conformance suite cannot know about LangChain's hooks: the poisoned
history's message types, and that a dump in LangChain's shape with an unknown message
type is an error rather than someone else's JSON."""

from __future__ import annotations

import pytest

from toolpair.integrations.langchain import load_dump, poisoned_history


def test_the_poisoned_history_is_made_of_langchain_messages() -> None:
    history, _ = poisoned_history()
    assert [m.type for m in history] == ["human", "ai", "human", "tool"]


def test_a_broken_dump_raises() -> None:
    with pytest.raises(ValueError):
        load_dump([{"type": "no-such-type", "data": {"content": "hi"}}])
