"""Hooks for the core tools: reading and writing LangChain dumps (``toolpair`` CLI) and
the canonical poisoned history (the ``poisoned_framework_history`` fixture)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

from toolpair import Codec
from toolpair.integrations._poisoned import INTERRUPTED, PREAMBLE, QUESTION, RESULT, calls

from ._codec import LangChainCodec

__all__ = ["dump_messages", "load_dump", "poisoned_history"]


def _is_dumped_message(item: Any) -> bool:
    return (
        isinstance(item, Mapping)
        and set(item) == {"type", "data"}
        and isinstance(item.get("data"), Mapping)
    )


def load_dump(obj: Any) -> tuple[list[BaseMessage], Codec] | None:
    """The messages of a ``messages_to_dict`` dump (already parsed) and the codec that
    reads them; None when ``obj`` does not look like such a dump. A value that looks like
    one but cannot be loaded raises LangChain's error (a ``ValueError`` or ``KeyError``,
    or pydantic's ``ValidationError``)."""
    if not isinstance(obj, list) or (obj and not _is_dumped_message(obj[0])):
        return None
    return messages_from_dict(obj), LangChainCodec()


def dump_messages(messages: Sequence[BaseMessage]) -> Any:
    """The JSON-able dump of ``messages``, as ``messages_to_dict`` writes it: the inverse
    of `load_dump`."""
    return messages_to_dict(list(messages))


def poisoned_history() -> tuple[list[BaseMessage], Codec]:
    """A fresh poisoned history and its codec: two parallel calls, the first never
    answered, the second's result sent after a user message."""
    answered, tool, output = RESULT
    return [
        HumanMessage(QUESTION),
        AIMessage(
            PREAMBLE,
            tool_calls=[
                {"name": name, "args": args, "id": cid, "type": "tool_call"}
                for cid, name, args in calls()
            ],
        ),
        HumanMessage(INTERRUPTED),
        ToolMessage(output, tool_call_id=answered, name=tool),
    ], LangChainCodec()
