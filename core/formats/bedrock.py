"""Bedrock Converse: ``{"role", "content": [{"text"} | {"toolUse"} | {"toolResult"} |
{"reasoningContent"} | ...]}``. Blocks are keyed by their one member, not by a type."""

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
    require_list,
    require_mapping,
    role_of,
    stringify,
    thinking_on,
)
from toolpair.formats._wire import WireCodec

_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant"}


def _decode_block(raw: Any, index: int) -> Block:
    b = require_mapping(raw, index, "content block")
    if "text" in b:
        text = b["text"]
        return Block("text", b, text=text if isinstance(text, str) else None)
    if "toolUse" in b:
        use = require_mapping(b["toolUse"], index, "toolUse")
        name = use.get("name")
        return Block(
            "call",
            b,
            id=require_id(use.get("toolUseId"), index, "toolUse.toolUseId"),
            name=name if isinstance(name, str) else None,
        )
    if "toolResult" in b:
        res = require_mapping(b["toolResult"], index, "toolResult")
        return Block(
            "result",
            b,
            id=(rid := optional_id(res.get("toolUseId"), index, "toolResult.toolUseId")),
            missing_id=rid is None,
            is_error=res.get("status") == "error",
            empty=content_is_empty(res.get("content")),
        )
    if "reasoningContent" in b:
        return Block("thinking", b, sub="reasoningContent")
    for media in ("image", "document", "video"):
        if media in b:
            doc = b[media]
            fmt = doc.get("format") if isinstance(doc, dict) else None
            sub = "document:pdf" if media == "document" and fmt == "pdf" else media
            return Block("image", b, sub=sub)
    return Block("other", b, sub=next(iter(b), None))


class BedrockCodec(WireCodec):
    name = "bedrock"
    shape: Shape = "blocks"
    #: The key of the message list inside a request body.
    body_key = "messages"
    checks: ClassVar[Mapping[str, Checker]] = {
        "bedrock": _checks.bedrock,
        "bedrock-claude": _checks.bedrock_claude,
        "bedrock-claude4": _checks.bedrock_claude4,
    }

    def thinking_in(self, native: Any) -> bool:
        content = native.get("content") if type(native) is dict else None
        return type(content) is list and any("reasoningContent" in b for b in content)

    def body_context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Whether a toolConfig is sent, and thinking in the model's own fields."""
        extra = body.get("additionalModelRequestFields")
        thinking = (
            thinking_on(extra.get("thinking") or extra.get("reasoning_config"))
            if isinstance(extra, Mapping)
            else False
        )
        return {"tool_config": "toolConfig" in body, "thinking": thinking}

    def implied_context(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """Tools passed as context are sent as a toolConfig."""
        if "tools" in context and "tool_config" not in context:
            return {"tool_config": bool(context["tools"])}
        return {}

    def without_thinking(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The body sent with thinking off: thinking lives in the model's own fields."""
        extra = body.get("additionalModelRequestFields")
        if not isinstance(extra, Mapping):
            return None
        out = dict(body)
        out["additionalModelRequestFields"] = {
            k: v for k, v in extra.items() if k not in ("thinking", "reasoning_config")
        }
        return out

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, raw in enumerate(messages):
            m = require_mapping(raw, i)
            role = role_of(m.get("role"), i, _ROLES)
            content = require_list(m.get("content"), i, "content")
            out.append(Message(role, [_decode_block(b, i) for b in content], raw, i))
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        return copy_with(template, role, content=[b.native for b in blocks])

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        result: dict[str, Any] = {"toolUseId": call.id, "content": [{"text": text}]}
        if is_error:
            result["status"] = "error"
        return synthetic_result({"toolResult": result}, call, is_error=is_error)

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", {"text": text}, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        key = "toolUse" if block.kind == "call" else "toolResult"
        inner = dict(block.native[key])
        inner["toolUseId"] = new_id
        return replace(block, native={**block.native, key: inner}, id=new_id)

    def result_as_text(self, block: Block) -> Block:
        content = block.native["toolResult"].get("content")
        return self.make_text(
            ORPHAN_TEXT.format(id=block.id or "(none)", content=stringify(content)), "user"
        )

    # Editing (compaction): optional codec methods, see toolpair.compact.

    def content_of(self, block: Block) -> Any:
        """A result's content as the format stores it."""
        return block.native["toolResult"].get("content")

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result whose content is the plain text ``text``."""
        inner = {**block.native["toolResult"], "content": [{"text": text}]}
        return replace(block, native={**block.native, "toolResult": inner}, empty=not text)

    def without_input(self, block: Block) -> Block:
        """A copy of a call with empty arguments (the same block if already empty)."""
        use = block.native["toolUse"]
        if use.get("input") == {}:
            return block
        return replace(block, native={**block.native, "toolUse": {**use, "input": {}}})


__all__ = ["BedrockCodec", "InvalidHistory"]
