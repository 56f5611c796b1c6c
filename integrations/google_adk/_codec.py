"""ADK request contents (google-genai ``types.Content``) as toolpair messages.

Each block's ``native`` is the session's own ``Part``: ADK's request contents are
shallow copies of the session's, so anything repair changes is a new ``Part`` (or a new
``Content``) and nothing in the session is edited in place.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from toolpair._model import Block, Codec, Message, Role, Shape, synthetic_result
from toolpair.formats import ORPHAN_TEXT, stringify

#: `Block.item_id` of a call that carries a thought signature (its bytes stay in the Part).
SIGNED = "thought_signature"


def _types() -> Any:
    from google.genai import types

    return types


def _block(part: Any) -> Block:
    fc = getattr(part, "function_call", None)
    if fc is not None:
        return Block(
            "call",
            part,
            id=fc.id or None,
            name=fc.name,
            item_id=SIGNED if getattr(part, "thought_signature", None) else None,
            sub="function_call",
        )
    fr = getattr(part, "function_response", None)
    if fr is not None:
        response = fr.response
        is_error = isinstance(response, dict) and "error" in response and len(response) == 1
        return Block(
            "result",
            part,
            id=fr.id or None,
            name=fr.name,
            is_error=is_error,
            empty=not response,
            sub="function_response",
        )
    if getattr(part, "thought", None) is True:
        return Block("thinking", part)
    text = getattr(part, "text", None)
    if text is not None:
        return Block("text", part, text=text)
    if getattr(part, "inline_data", None) is not None or getattr(part, "file_data", None):
        return Block("image", part)
    return Block("other", part)


class AdkCodec(Codec):
    """``llm_request.contents`` (a list of ``types.Content``)."""

    name = "google-adk"
    shape: Shape = "blocks"

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, content in enumerate(messages):
            role: Role = "assistant" if getattr(content, "role", None) == "model" else "user"
            blocks = [_block(p) for p in (getattr(content, "parts", None) or [])]
            seen: dict[tuple[str, str | None], int] = {}
            for b in blocks:
                # Id-less calls and responses pair by name and place (ADK strips its own
                # client ids before a Gemini request).
                if b.id is None and b.kind in ("call", "result"):
                    n = seen.get((b.kind, b.name), 0)
                    seen[(b.kind, b.name)] = n + 1
                    b.slot = n
            out.append(Message(role, blocks, content, i))
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        parts = [b.native for b in blocks]
        role_value = "model" if role == "assistant" else "user"
        if template is not None:
            return template.native.model_copy(update={"role": role_value, "parts": parts})
        return _types().Content(role=role_value, parts=parts)

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        t = _types()
        response = {"error": text} if is_error else {"result": text}
        part = t.Part(
            function_response=t.FunctionResponse(
                id=call.id, name=call.name or "", response=response
            )
        )
        return synthetic_result(part, call, is_error=is_error, sub="function_response")

    def make_text(self, text: str, role: Role) -> Block:
        return Block("text", _types().Part(text=text), text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        field = "function_call" if block.kind == "call" else "function_response"
        inner = getattr(block.native, field).model_copy(update={"id": new_id})
        return replace(block, native=block.native.model_copy(update={field: inner}), id=new_id)

    def with_signature(self, block: Block, signature: str) -> Block:
        # The wire carries thoughtSignature as base64 of the Part's bytes: decoding the
        # documented stand-in makes the request show it verbatim.
        raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
        part = block.native.model_copy(update={"thought_signature": raw})
        return replace(block, native=part, item_id=SIGNED)

    def result_as_text(self, block: Block) -> Block:
        fr = block.native.function_response
        text = ORPHAN_TEXT.format(id=block.id or block.name, content=stringify(fr.response))
        return self.make_text(text, "user")

    def content_of(self, block: Block) -> Any:
        return block.native.function_response.response

    def with_content(self, block: Block, text: str) -> Block:
        fr = block.native.function_response
        response = {"error": text} if block.is_error else {"result": text}
        update: dict[str, Any] = {"response": response}
        if "parts" in type(fr).model_fields:
            update["parts"] = None  # multimodal parts of the response go with it
        inner = fr.model_copy(update=update)
        part = block.native.model_copy(update={"function_response": inner})
        return replace(block, native=part, empty=False)


CODEC = AdkCodec()
