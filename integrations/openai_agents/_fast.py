"""A no-op check for the Chat Completions path: SDK items that OpenAI Chat's rules
certainly accept, read in one pass without decoding (the common case on every call).

It answers True only for the shape the core's ``openai`` rules accept as the SDK's
converter sends it: each run of assistant items (reasoning, messages, calls) followed by
exactly one output per call of that run before anything else, call ids of 1-40
characters, none repeated in a run. Anything else (False) takes the full path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair.engine.fast import Frag
from toolpair.formats.responses import ResponsesCodec
from toolpair.providers import Context

_CALLS = frozenset({"function_call", "custom_tool_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_OTHER_ROLES = frozenset({"user", "system", "developer"})


def chat_items_valid(items: Sequence[Any], frag: Frag | None = None) -> bool:
    calls: list[str] = []
    pending: set[str] = set()
    turn_calls: set[str] = set()
    phase = "other"  # "assistant": inside a run of assistant items; "tools": its outputs
    for item in items:
        if type(item) is not dict:
            return False
        t = item.get("type")
        if t in _CALLS or t == "reasoning":
            if phase != "assistant":
                if pending:
                    return False
                turn_calls = set()
                phase = "assistant"
            if t != "reasoning":
                cid = item.get("call_id")
                if type(cid) is not str or not 0 < len(cid) <= 40 or cid in turn_calls:
                    return False
                turn_calls.add(cid)
                pending.add(cid)
                calls.append(cid)
        elif t in _OUTPUTS:
            if phase == "other":
                return False
            cid = item.get("call_id")
            if type(cid) is not str or cid not in pending:
                return False
            pending.discard(cid)
            phase = "tools"
        elif t is None or t == "message":
            role = item.get("role")
            if role == "assistant":
                if phase != "assistant":
                    if pending:
                        return False
                    turn_calls = set()
                    phase = "assistant"
            elif role in _OTHER_ROLES:
                if pending:
                    return False
                phase = "other"
            else:
                return False
        else:
            return False
    if pending:
        return False
    # In a fragment of a longer history (the core's piecewise repair), its calls join
    # the ids seen so far; one reused across fragments sends the history down the full
    # path. Items carry no thinking bound to their prefix.
    return frag is None or frag.accept(calls, thinking=False)


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
    """The core's Responses codec, with the no-op check above for items bound for Chat
    Completions, so a long history is checked in one pass and repaired a piece at a time
    (``side`` splits it where an assistant turn follows a user-side item)."""

    side = staticmethod(_side)  # type: ignore[assignment]
    pieces = frozenset({"openai"})
    # A framework's items: the pieces' H4 scan reads the wire formats' thinking only,
    # and its checker is told a piece follows a user-side item.
    reads_thinking = False

    def knows(self, checker: str) -> bool:
        return checker == "openai"

    def role_before(self, native: Any) -> str | None:
        return "user"

    def certainly_valid(
        self, messages: Sequence[Any], provider: str, ctx: Context, frag: Frag | None = None
    ) -> bool | None:
        if provider != "openai":
            return None
        return chat_items_valid(messages, frag)


CHAT_CODEC = ChatItemsCodec()
