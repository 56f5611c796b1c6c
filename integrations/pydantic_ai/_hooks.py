"""Hooks for the core tools: reading and writing pydantic-ai dumps (``toolpair`` CLI)
and the canonical poisoned history (the ``poisoned_framework_history`` fixture)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from toolpair import Codec
from toolpair.integrations._poisoned import INTERRUPTED, PREAMBLE, QUESTION, RESULT, calls

from ._codec import PydanticAICodec

__all__ = ["dump_messages", "load_dump", "poisoned_history"]


def _is_dumped_message(item: Any) -> bool:
    return (
        isinstance(item, Mapping)
        and item.get("kind") in ("request", "response")
        and isinstance(item.get("parts"), list)
    )


def load_dump(obj: Any) -> tuple[list[ModelMessage], Codec] | None:
    """The messages of a ``ModelMessagesTypeAdapter`` JSON dump (already parsed) and the
    codec that reads them; None when ``obj`` does not look like such a dump. A value that
    looks like one but does not validate raises pydantic's ``ValidationError``."""
    if not isinstance(obj, list) or (obj and not _is_dumped_message(obj[0])):
        return None
    return ModelMessagesTypeAdapter.validate_python(obj), PydanticAICodec()


def dump_messages(messages: Sequence[ModelMessage]) -> Any:
    """The JSON-able dump of ``messages``, as pydantic-ai writes it: the inverse of
    `load_dump`."""
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")


def poisoned_history() -> tuple[list[ModelMessage], Codec]:
    """A fresh poisoned history and its codec: two parallel calls, the first never
    answered, the second's result sent after a user text in the same request."""
    answered, tool, output = RESULT
    return [
        ModelRequest(parts=[UserPromptPart(QUESTION)]),
        ModelResponse(
            parts=[
                TextPart(PREAMBLE),
                *(ToolCallPart(name, args, tool_call_id=cid) for cid, name, args in calls()),
            ]
        ),
        ModelRequest(
            parts=[
                UserPromptPart(INTERRUPTED),
                ToolReturnPart(tool, output, tool_call_id=answered),
            ]
        ),
    ], PydanticAICodec()
