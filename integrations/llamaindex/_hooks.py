"""The canonical poisoned history in LlamaIndex ``ChatMessage``s (the
``poisoned_framework_history`` fixture of ``toolpair.testing``)."""

from __future__ import annotations

import json
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from toolpair import Codec
from toolpair.integrations._poisoned import INTERRUPTED, PREAMBLE, QUESTION, RESULT, calls
from toolpair.integrations.llamaindex._codec import LlamaIndexCodec, call_block_type

__all__ = ["poisoned_history"]


def _assistant_calls() -> ChatMessage:
    """The calls as ToolCallBlocks, or on llama-index-core without them, in
    ``additional_kwargs`` the way the OpenAI LLM stored them."""
    blocks: list[Any] = [TextBlock(text=PREAMBLE)]
    block_type = call_block_type()
    if block_type is None:
        legacy = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls()
        ]
        return ChatMessage(
            role=MessageRole.ASSISTANT, blocks=blocks, additional_kwargs={"tool_calls": legacy}
        )
    blocks += [
        block_type(tool_call_id=cid, tool_name=name, tool_kwargs=args)
        for cid, name, args in calls()
    ]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


def poisoned_history() -> tuple[list[ChatMessage], Codec]:
    """A fresh poisoned history and its codec: two parallel calls, the first never
    answered, the second's result stored after a user message."""
    answered, tool, output = RESULT
    return [
        ChatMessage(role=MessageRole.USER, content=QUESTION),
        _assistant_calls(),
        ChatMessage(role=MessageRole.USER, content=INTERRUPTED),
        ChatMessage(
            role=MessageRole.TOOL,
            content=output,
            additional_kwargs={"tool_call_id": answered, "name": tool},
        ),
    ], LlamaIndexCodec()
