"""ChatMessage builders shared by the LlamaIndex tests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    CacheControl,
    CachePoint,
    ChatMessage,
    MessageRole,
    TextBlock,
)

from toolpair.integrations.llamaindex._codec import call_block_type

ToolCallBlock: Any = call_block_type()

ThinkingBlock: Any
try:
    from llama_index.core.base.llms.types import ThinkingBlock
except ImportError:  # llama-index-core < 0.14.3
    ThinkingBlock = None

#: ToolCallBlock arrived in llama-index-core 0.14.5; before that calls are legacy only.
needs_blocks = pytest.mark.skipif(ToolCallBlock is None, reason="llama-index-core < 0.14.5")


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def system(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.SYSTEM, content=text)


def say(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def calls(*ids: str, text: str = "", name: str = "add") -> ChatMessage:
    """An assistant message calling ``name`` once per id, in the format the installed
    llama-index-core writes (ToolCallBlocks, or legacy additional_kwargs)."""
    blocks: list[Any] = [TextBlock(text=text)] if text else []
    if ToolCallBlock is not None:
        blocks += [
            ToolCallBlock(tool_call_id=i, tool_name=name, tool_kwargs={"a": 1, "b": 2}) for i in ids
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
    return legacy_calls(*ids, text=text, name=name)


def legacy_calls(
    *ids: str, text: str = "", name: str = "add", shape: str = "openai"
) -> ChatMessage:
    """An assistant message with calls in additional_kwargs["tool_calls"]: OpenAI-shaped
    (``function.arguments``) or Anthropic-shaped (``name``/``input``) dicts."""
    if shape == "openai":
        entries: list[dict[str, Any]] = [
            {
                "id": i,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"a": 1, "b": 2})},
            }
            for i in ids
        ]
    else:
        entries = [{"id": i, "name": name, "input": {"a": 1, "b": 2}} for i in ids]
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[TextBlock(text=text)] if text else [],
        additional_kwargs={"tool_calls": entries},
    )


def result(call_id: str | None, text: str = "3") -> ChatMessage:
    kwargs = {} if call_id is None else {"tool_call_id": call_id}
    return ChatMessage(role=MessageRole.TOOL, content=text, additional_kwargs=kwargs)


def cache_point() -> CachePoint:
    """An ephemeral cache breakpoint, the kind a client puts after a block to cache."""
    return CachePoint(cache_control=CacheControl(type="ephemeral"))


def snapshot(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """A deep, comparable copy, to prove nothing was mutated."""
    return [m.model_dump() for m in messages]
