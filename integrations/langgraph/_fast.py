"""The no-op path for thread histories held to the default rules (OpenAI Chat
Completions'): one pass over the ``BaseMessage`` objects that answers "certainly valid"
without decoding them (see ``toolpair.engine.fast``).

`repair_thread` and `check_thread` judge a whole checkpointed thread, and nearly every
thread is sound, so this pass is what a healthy thread costs beyond ``get_state``. It
models only the plain shape a LangGraph message list has (string content; calls in
``tool_calls``; each AIMessage's results right after it) and gives up (None: the full
path) on anything else: list content, ``invalid_tool_calls``, ChatMessage or any
subclass, a result out of place, an id the rules would look at twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from toolpair.integrations.langchain import LangChainCodec

__all__ = ["ThreadCodec", "openai_certainly_valid"]

#: OpenAI's limit on a call id (O5).
_ID_MAX = 40


def openai_certainly_valid(messages: Sequence[Any]) -> bool | None:
    """True only where the "openai" rules would find nothing in ``messages``; None
    where this pass does not model a message."""
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        kind = type(m)
        if kind is HumanMessage or kind is SystemMessage:
            if not isinstance(m.content, str):
                return None
            i += 1
            continue
        if kind is not AIMessage or not isinstance(m.content, str) or m.invalid_tool_calls:
            return None
        i += 1
        calls = m.tool_calls
        if not calls:
            continue
        ids: set[str] = set()
        for c in calls:
            cid = c.get("id")
            if not isinstance(cid, str) or not cid or len(cid) > _ID_MAX or cid in ids:
                return None
            ids.add(cid)
        answered: set[str] = set()
        while i < n and type(messages[i]) is ToolMessage:
            rid = messages[i].tool_call_id
            if rid not in ids or rid in answered or not isinstance(messages[i].content, str):
                return None
            answered.add(rid)
            i += 1
        if len(answered) != len(ids):
            return None
    return True


class ThreadCodec(LangChainCodec):
    """The LangChain codec with the no-op path above for the "openai" rules."""

    def certainly_valid(
        self, messages: Sequence[Any], provider: str, ctx: Any, frag: Any = None
    ) -> bool | None:
        if provider != "openai" or frag is not None or self.provider != "openai":
            return None
        return openai_certainly_valid(messages)
