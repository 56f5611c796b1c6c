"""The codec for SDK items bound for Chat Completions: the core's Responses codec (whose
checker for Chat's rules over Responses items, `toolpair.formats._checks.responses_chat`,
clears a valid history in one pass), split where the SDK's converter starts a new
assistant message, so that a long broken history is repaired a piece at a time."""

from __future__ import annotations

from typing import Any

from toolpair.formats.responses import ResponsesCodec

_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _side(item: Any) -> str:
    """Which side of the conversation an item is on: outputs and user-side messages
    ("u"), everything the model produced ("a")."""
    if type(item) is not dict:
        return "u"
    t = item.get("type")
    if t in _OUTPUTS:
        return "u"
    if t is None or t == "message":
        return "a" if item.get("role") == "assistant" else "u"
    return "a"


class ChatItemsCodec(ResponsesCodec):
    """Responses items as the SDK's Chat Completions converter sends them: ``side``
    splits a history where an assistant turn follows a user-side item."""

    side = staticmethod(_side)  # type: ignore[assignment]
    pieces = frozenset({"openai"})
    # A framework's items: the pieces' H4 scan reads the wire formats' thinking only,
    # and its checker is told a piece follows a user-side item.
    reads_thinking = False

    def role_before(self, native: Any) -> str | None:
        return "user"


CHAT_CODEC = ChatItemsCodec()
