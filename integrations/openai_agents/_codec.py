"""The codec for SDK items bound for Chat Completions: the core's Responses codec (whose
checker for Chat's rules over Responses items, `toolpair.formats._checks.responses_chat`,
clears a valid history in one pass), split where the SDK's converter starts a new
assistant message, so that a long broken history is repaired a piece at a time."""

from __future__ import annotations

from typing import Any

from toolpair.formats.responses import ResponsesCodec


class ChatItemsCodec(ResponsesCodec):
    """Responses items as the SDK's Chat Completions converter sends them: ``side``
    splits a history where an assistant turn follows a user-side item."""

    # Only these outputs become the converter's tool messages: any other item is the
    # model's side of the conversation.
    user_items = frozenset({"function_call_output", "custom_tool_call_output"})
    pieces = frozenset({"openai"})
    # A framework's items: the pieces' H4 scan reads the wire formats' thinking only,
    # and its checker is told a piece follows a user-side item.
    reads_thinking = False

    def role_before(self, native: Any) -> str | None:
        return "user"


CHAT_CODEC = ChatItemsCodec()
