"""The canonical poisoned history in agno messages (the ``poisoned_framework_history``
fixture of ``toolpair.testing``)."""

from __future__ import annotations

import json

from agno.models.message import Message

from toolpair import Codec
from toolpair.integrations.agno._codec import AgnoCodec

__all__ = ["poisoned_history"]


def _call(call_id: str, name: str, city: str) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps({"city": city})},
    }


def poisoned_history() -> tuple[list[Message], Codec]:
    """A fresh poisoned history and its codec: two parallel calls, the first never
    answered, the second's result stored after a user message."""
    return [
        Message(role="user", content="What's the weather in Paris, and the local time in Tokyo?"),
        Message(
            role="assistant",
            content="Let me look both up.",
            tool_calls=[
                _call("wthrParis", "get_weather", "Paris"),
                _call("timeTokyo", "get_time", "Tokyo"),
            ],
        ),
        Message(role="user", content="(the weather lookup was interrupted)"),
        Message(role="tool", tool_call_id="timeTokyo", tool_name="get_time", content="09:00"),
    ], AgnoCodec()
