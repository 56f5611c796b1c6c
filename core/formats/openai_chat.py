"""OpenAI Chat Completions: assistant ``tool_calls`` and one ``role: "tool"`` message
per result. The reference chat-shape codec; Mistral's variant subclasses it."""

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

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}


def _content_blocks(content: Any, index: int) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Block("text", content, text=content)] if content else []
    if isinstance(content, list | tuple):
        blocks = []
        for part in content:
            p = require_mapping(part, index, "content part")
            t = p.get("type")
            if t == "text":
                text = p.get("text")
                blocks.append(Block("text", p, text=text if isinstance(text, str) else None))
            elif t in ("image_url", "input_audio", "file", "image"):
                blocks.append(Block("image", p, sub=t))
            elif t in ("thinking", "redacted_thinking", "reasoning"):
                blocks.append(Block("thinking", p, sub=t))
            else:
                blocks.append(Block("other", p, sub=str(t)))
        return blocks
    raise InvalidHistory(f"content must be a string or a list, got {type(content).__name__}", index)


def _content_value(blocks: Sequence[Block]) -> Any:
    if not blocks:
        return None
    if len(blocks) == 1 and isinstance(blocks[0].native, str):
        return blocks[0].native
    return [
        {"type": "text", "text": b.native} if isinstance(b.native, str) else b.native
        for b in blocks
    ]


class OpenAIChatCodec(WireCodec):
    name = "openai"
    shape: Shape = "chat"
    #: The key of the message list inside a request body.
    body_key = "messages"
    checks: ClassVar[Mapping[str, Checker]] = {
        "openai": _checks.openai,
        "mistral": _checks.mistral,
        "moonshot-thinking": _checks.moonshot_thinking,
        "zhipu": _checks.zhipu,
    }

    def body_context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """DeepSeek's thinking mode, switched on in the body (``thinking: {type:
        enabled}``)."""
        return {"thinking": thinking_on(body["thinking"])} if "thinking" in body else {}

    #: The key of a call's function inside a tool_calls entry.
    role_names: Mapping[str, Role] = _ROLES

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, raw in enumerate(messages):
            m = require_mapping(raw, i)
            role = role_of(m.get("role"), i, self.role_names)
            if role == "tool":
                name = m.get("name")
                block = Block(
                    "result",
                    raw,
                    id=(rid := optional_id(m.get("tool_call_id"), i, "tool_call_id")),
                    missing_id=rid is None,
                    name=name if isinstance(name, str) else None,
                    empty=content_is_empty(m.get("content")),
                )
                out.append(Message("tool", [block], raw, i))
                continue
            blocks = _content_blocks(m.get("content"), i)
            if role == "assistant" and m.get("tool_calls") is not None:
                for call in require_list(m.get("tool_calls"), i, "tool_calls"):
                    c = require_mapping(call, i, "tool call")
                    fn = c.get("function")
                    name = fn.get("name") if isinstance(fn, Mapping) else None
                    blocks.append(
                        Block(
                            "call",
                            c,
                            id=require_id(c.get("id"), i, "tool_calls[].id"),
                            name=name if isinstance(name, str) else None,
                        )
                    )
            out.append(Message(role, blocks, raw, i))
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        if role == "tool":
            return blocks[0].native
        calls = [b.native for b in blocks if b.kind == "call"]
        rest = [b for b in blocks if b.kind != "call"]
        role_value = template.native.get("role", role) if template is not None else role
        fields: dict[str, Any] = {"content": _content_value(rest)}
        if calls:
            fields["tool_calls"] = calls
        msg = copy_with(template, role_value, **fields)
        if not calls:
            msg.pop("tool_calls", None)
        if fields["content"] is None and role != "assistant":
            msg["content"] = ""
        return msg

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        native = {"role": "tool", "tool_call_id": call.id, "content": text}
        return synthetic_result(native, call, is_error=is_error)

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", text, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        key = "id" if block.kind == "call" else "tool_call_id"
        return replace(block, native={**block.native, key: new_id}, id=new_id)

    def result_as_text(self, block: Block) -> Block:
        text = ORPHAN_TEXT.format(
            id=block.id or "(none)", content=stringify(block.native.get("content"))
        )
        return self.make_text(text, "user")

    # Editing (compaction): optional codec methods, see toolpair.compact.

    def content_of(self, block: Block) -> Any:
        """A result's content as the format stores it."""
        return block.native.get("content")

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a result (a whole ``tool`` message) whose content is ``text``."""
        return replace(block, native={**block.native, "content": text}, empty=not text.strip())

    def without_input(self, block: Block) -> Block:
        """A copy of a call with empty arguments (the same block if already empty)."""
        fn = block.native.get("function")
        if not isinstance(fn, Mapping) or fn.get("arguments") in ("{}", {}):
            return block
        return replace(block, native={**block.native, "function": {**fn, "arguments": "{}"}})
