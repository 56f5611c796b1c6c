"""Anthropic Messages: ``{"role", "content": str | [blocks]}``, results are
``tool_result`` blocks inside user messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolpair._model import Block, InvalidHistory, Message, Role, Shape, synthetic_result
from toolpair.formats import _checks
from toolpair.formats._checks import Checker
from toolpair.formats._common import (
    ORPHAN_TEXT,
    content_is_empty,
    copy_with,
    optional_id,
    require_id,
    require_mapping,
    role_of,
    stringify,
    thinking_on,
)
from toolpair.formats._wire import WireCodec

# Claude Code 2.1 sends system-role messages inside ``messages``; they pair with nothing
# and are read as system messages (the rules leave them out of the turns).
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system"}

#: Server tool result types end in ``_tool_result`` (web_search_tool_result,
#: code_execution_tool_result, advisor_tool_result...); mcp_tool_result pairs with
#: mcp_tool_use.
_SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})


def decode_block(block: Any, index: int) -> Block:
    if isinstance(block, str):
        return Block("text", block, text=block)
    b = require_mapping(block, index, "content block")
    t = b.get("type")
    if t == "text":
        text = b.get("text")
        return Block("text", b, text=text if isinstance(text, str) else None)
    if t == "tool_use":
        return Block(
            "call",
            b,
            id=require_id(b.get("id"), index, "tool_use.id"),
            name=b.get("name") if isinstance(b.get("name"), str) else None,
            toolset=b.get("toolset_name") if isinstance(b.get("toolset_name"), str) else None,
        )
    if t == "tool_result":
        return Block(
            "result",
            b,
            id=(rid := optional_id(b.get("tool_use_id"), index, "tool_result.tool_use_id")),
            missing_id=rid is None,
            is_error=b.get("is_error") is True,
            empty=content_is_empty(b.get("content")),
            toolset=b.get("toolset_name") if isinstance(b.get("toolset_name"), str) else None,
        )
    if t in ("thinking", "redacted_thinking"):
        return Block("thinking", b, sub=t)
    if t in _SERVER_CALLS:
        sid = b.get("id")
        return Block(
            "server_call",
            b,
            id=sid if isinstance(sid, str) else None,
            name=b.get("name") if isinstance(b.get("name"), str) else None,
            sub=t,
        )
    if isinstance(t, str) and (t.endswith("_tool_result") or t == "mcp_tool_result"):
        sid = b.get("tool_use_id")
        return Block("server_result", b, id=sid if isinstance(sid, str) else None, sub=t)
    if t in ("image", "document"):
        return Block("image", b, sub=t)
    if t is None:
        raise InvalidHistory("content block has no type", index)
    return Block("other", b, sub=str(t))


class AnthropicCodec(WireCodec):
    name = "anthropic"
    shape: Shape = "blocks"
    #: The key of the message list inside a request body.
    body_key = "messages"
    checks: ClassVar[Mapping[str, Checker]] = {"anthropic": _checks.anthropic}

    def thinking_in(self, native: Any) -> bool:
        content = native.get("content") if type(native) is dict else None
        return type(content) is list and any(
            b.get("type") in ("thinking", "redacted_thinking") for b in content
        )

    def body_context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """What a rule needs from the rest of the body: thinking and the tools."""
        ctx: dict[str, Any] = {"thinking": thinking_on(body.get("thinking"))}
        if isinstance(body.get("tools"), list):
            ctx["tools"] = body["tools"]
        return ctx

    def without_thinking(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The body sent with thinking off."""
        return {k: v for k, v in body.items() if k != "thinking"}

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, raw in enumerate(messages):
            m = require_mapping(raw, i)
            role = role_of(m.get("role"), i, _ROLES)
            content = m.get("content")
            if isinstance(content, str):
                blocks = [Block("text", content, text=content)]
            elif isinstance(content, list | tuple):
                blocks = [decode_block(b, i) for b in content]
            else:
                raise InvalidHistory(
                    f"content must be a string or a list, got {type(content).__name__}", i
                )
            out.append(Message(role, blocks, raw, i))
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        content = [
            {"type": "text", "text": b.native} if isinstance(b.native, str) else b.native
            for b in blocks
        ]
        return copy_with(template, role, content=content)

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        native: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call.id,
            "content": [{"type": "text", "text": text}],
        }
        if is_error:
            native["is_error"] = True
        if call.toolset:
            native["toolset_name"] = call.toolset
        return synthetic_result(native, call, is_error=is_error)

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", {"type": "text", "text": text}, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        native = dict(block.native)
        native["id" if block.kind == "call" else "tool_use_id"] = new_id
        return replace(block, native=native, id=new_id)

    def result_as_text(self, block: Block) -> Block:
        content = block.native.get("content") if isinstance(block.native, dict) else None
        return self.make_text(
            ORPHAN_TEXT.format(id=block.id or "(none)", content=stringify(content)), "user"
        )

    # Editing (compaction): optional codec methods, see toolpair.compact.

    def content_of(self, block: Block) -> Any:
        """A result's content as the format stores it."""
        return block.native.get("content") if isinstance(block.native, dict) else None

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is the plain text ``text``."""
        native = {**block.native, "content": [{"type": "text", "text": text}]}
        return replace(block, native=native, empty=not text.strip())

    def without_input(self, block: Block) -> Block:
        """A copy of a call with empty arguments (the same block if already empty)."""
        if block.native.get("input") == {}:
            return block
        return replace(block, native={**block.native, "input": {}})
