"""Gemini generateContent: ``contents`` of ``{"role": "user"|"model", "parts": [...]}``.
Results are ``functionResponse`` parts of a user (or legacy ``function``) content. Ids
are optional (G7): without them a response pairs with a call by name and position."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolpair._model import Block, Codec, InvalidHistory, Message, Role, Shape, synthetic_result
from toolpair.formats import _checks
from toolpair.formats._checks import Checker
from toolpair.formats._common import (
    ORPHAN_TEXT,
    copy_with,
    require_list,
    require_mapping,
    role_of,
    stringify,
)
from toolpair.formats._wire import WireCodec

_ROLES: dict[str, Role] = {"user": "user", "model": "assistant", "function": "user"}


def _opt_id(value: Any, index: int, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidHistory(f"{field} must be a string, got {type(value).__name__}", index)
    return value


def _decode_part(raw: Any, index: int) -> Block:
    p = require_mapping(raw, index, "part")
    for key in ("functionCall", "function_call"):
        if key in p:
            fc = require_mapping(p[key], index, key)
            return Block(
                "call",
                p,
                id=_opt_id(fc.get("id"), index, f"{key}.id"),
                name=fc.get("name") if isinstance(fc.get("name"), str) else None,
                item_id=p.get("thoughtSignature") or p.get("thought_signature"),
                sub=key,
            )
    for key in ("functionResponse", "function_response"):
        if key in p:
            fr = require_mapping(p[key], index, key)
            response = fr.get("response")
            is_error = isinstance(response, dict) and "error" in response and len(response) == 1
            return Block(
                "result",
                p,
                id=_opt_id(fr.get("id"), index, f"{key}.id"),
                name=fr.get("name") if isinstance(fr.get("name"), str) else None,
                is_error=is_error,
                empty=not response,
                sub=key,
            )
    if p.get("thought") is True:
        return Block("thinking", p)
    if "text" in p:
        text = p["text"]
        return Block("text", p, text=text if isinstance(text, str) else None)
    if "inlineData" in p or "fileData" in p or "inline_data" in p or "file_data" in p:
        return Block("image", p)
    return Block("other", p)


class GeminiCodec(WireCodec):
    name = "gemini"
    shape: Shape = "blocks"
    #: The key of the content list inside a request body.
    body_key = "contents"
    checks: ClassVar[Mapping[str, Checker]] = {
        "gemini": _checks.gemini,
        "vertex": _checks.vertex,
        "vertex-ids": _checks.vertex_ids,
    }
    starts = Codec.starts

    def side(self, native: Any) -> str:
        return "a" if type(native) is dict and native.get("role") == "model" else "u"

    def judges(self, item: Mapping[str, Any]) -> bool:
        return "parts" in item or "role" in item or not isinstance(item.get("type"), str)

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, raw in enumerate(messages):
            m = require_mapping(raw, i, "content")
            role = role_of(m.get("role", "user"), i, _ROLES)
            parts = require_list(m.get("parts", []), i, "parts")
            blocks = [_decode_part(p, i) for p in parts]
            seen: dict[tuple[str, str | None], int] = {}
            for b in blocks:
                if b.id is None and b.kind in ("call", "result"):
                    n = seen.get((b.kind, b.name), 0)
                    seen[(b.kind, b.name)] = n + 1
                    b.slot = n
            out.append(Message(role, blocks, raw, i))
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        if role == "assistant":
            role_value = "model"
        elif template is not None and template.native.get("role") in ("user", "function"):
            role_value = template.native["role"]
        else:
            role_value = "user"
        return copy_with(template, role_value, parts=[b.native for b in blocks])

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        fr: dict[str, Any] = {"name": call.name or "", "response": {}}
        fr["response"] = {"error": text} if is_error else {"result": text}
        if call.id is not None:
            fr["id"] = call.id
        return synthetic_result(
            {"functionResponse": fr}, call, is_error=is_error, sub="functionResponse"
        )

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", {"text": text}, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        key = block.sub or ("functionCall" if block.kind == "call" else "functionResponse")
        inner = {**block.native[key], "id": new_id}
        return replace(block, native={**block.native, key: inner}, id=new_id)

    def without_id(self, block: Block) -> Block:
        """A copy of a call or response with no ``id`` (it then pairs by name and place)."""
        key = block.sub or ("functionCall" if block.kind == "call" else "functionResponse")
        inner = {k: v for k, v in block.native[key].items() if k != "id"}
        return replace(block, native={**block.native, key: inner}, id=None)

    def with_signature(self, block: Block, signature: str) -> Block:
        """A copy of a functionCall part carrying ``signature`` as its thought signature."""
        return replace(
            block, native={**block.native, "thoughtSignature": signature}, item_id=signature
        )

    def result_as_text(self, block: Block) -> Block:
        key = block.sub or "functionResponse"
        text = ORPHAN_TEXT.format(id=block.id or block.name, content=stringify(block.native[key]))
        return self.make_text(text, "user")

    # Editing (compaction): optional codec methods, see toolpair.compact.

    def content_of(self, block: Block) -> Any:
        """A result's ``response`` object."""
        return block.native[block.sub or "functionResponse"].get("response")

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of a functionResponse whose response is ``{"result": text}`` (or
        ``{"error": text}`` for an error response); multimodal parts go with it."""
        key = block.sub or "functionResponse"
        inner = {k: v for k, v in block.native[key].items() if k != "parts"}
        inner["response"] = {"error": text} if block.is_error else {"result": text}
        return replace(block, native={**block.native, key: inner}, empty=False)

    def without_input(self, block: Block) -> Block:
        """A copy of a functionCall with empty args (the same block if already empty)."""
        key = block.sub or "functionCall"
        inner = block.native[key]
        if not inner.get("args"):
            return block
        return replace(block, native={**block.native, key: {**inner, "args": {}}})
