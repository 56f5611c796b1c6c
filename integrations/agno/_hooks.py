"""The canonical poisoned history in agno messages (the ``poisoned_framework_history``
fixture of ``toolpair.testing``)."""

from __future__ import annotations

import json

from agno.models.message import Message

from toolpair import Codec
from toolpair.integrations._poisoned import INTERRUPTED, PREAMBLE, QUESTION, RESULT, calls
from toolpair.integrations.agno._codec import AgnoCodec

__all__ = ["poisoned_history"]


def _call(call_id: str, name: str, args: dict[str, object]) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def poisoned_history() -> tuple[list[Message], Codec]:
    """A fresh poisoned history and its codec: two parallel calls, the first never
    answered, the second's result stored after a user message."""
    answered, tool, output = RESULT
    return [
        Message(role="user", content=QUESTION),
        Message(
            role="assistant",
            content=PREAMBLE,
            tool_calls=[_call(*call) for call in calls()],
        ),
        Message(role="user", content=INTERRUPTED),
        Message(role="tool", tool_call_id=answered, tool_name=tool, content=output),
    ], AgnoCodec()
