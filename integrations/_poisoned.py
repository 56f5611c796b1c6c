"""The canonical poisoned history every integration's ``poisoned_history()`` builds in
its framework's own message types (the ``poisoned_framework_history`` fixture of
``toolpair.testing``): the story is told once here, so each framework's copy is the same
history. A user asks two things, the assistant makes two parallel calls, the first is
never answered, and the second's result arrives after a user message."""

from __future__ import annotations

from typing import Any

__all__ = ["INTERRUPTED", "PREAMBLE", "QUESTION", "RESULT", "calls"]

#: The user's opening question.
QUESTION = "What's the weather in Paris, and the local time in Tokyo?"
#: The assistant's text before its calls (where the framework's message holds one).
PREAMBLE = "Let me look both up."
#: The user message that comes between the calls and the one result.
INTERRUPTED = "(the weather lookup was interrupted)"
#: (call id, tool name, output) of the one call that is answered.
RESULT = ("timeTokyo", "get_time", "09:00")


def calls() -> list[tuple[str, str, dict[str, Any]]]:
    """(call id, tool name, arguments) of the two parallel calls, the unanswered one
    first; fresh argument dicts on every call, as each history is a fresh copy."""
    return [
        ("wthrParis", "get_weather", {"city": "Paris"}),
        ("timeTokyo", "get_time", {"city": "Tokyo"}),
    ]
