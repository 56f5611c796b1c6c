"""What the conformance suite cannot know about pydantic-ai's hooks: the poisoned
history's message kinds, and that a dump in pydantic-ai's shape with an unknown part is
an error rather than someone else's JSON."""

from __future__ import annotations

import pytest

from toolpair.integrations.pydantic_ai import load_dump, poisoned_history


def test_the_poisoned_history_is_made_of_pydantic_ai_messages() -> None:
    history, _ = poisoned_history()
    assert [m.kind for m in history] == ["request", "response", "request"]


def test_a_broken_dump_raises() -> None:
    with pytest.raises(ValueError):
        load_dump([{"kind": "request", "parts": [{"part_kind": "no-such-part"}]}])
