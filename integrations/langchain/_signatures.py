"""Which model produced each Gemini thought signature in a LangChain history, and how a
signature of another model is put aside (Gemini G8).

Both Google chat models keep a response's signatures on its ``AIMessage``, by call id
(``additional_kwargs["__gemini_function_call_thought_signatures__"]``, base64), and the
model that answered in ``response_metadata["model_name"]``. They send the signatures
back to whatever model the next request goes to, and the Gemini API refuses a signature
another model produced.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from toolpair import Block, Message
from toolpair._model import Role

from ._codec import LangChainCodec

#: Where both Google chat models keep a message's signatures (call id -> base64).
KEY = "__gemini_function_call_thought_signatures__"
#: The documented stand-in, as the core names it and as the chat models read it back.
_STAND_IN = "skip_thought_signature_validator"
_STAND_IN_B64 = base64.b64encode(_STAND_IN.encode()).decode()


def _kept(message: Any) -> Mapping[str, str]:
    """The signatures ``message`` keeps by call id, each as base64 text (the stand-in
    by its name)."""
    kept = getattr(message, "additional_kwargs", {}).get(KEY)
    if not isinstance(kept, Mapping):
        return {}
    out = {}
    for call_id, sig in kept.items():
        text = base64.b64encode(sig).decode() if isinstance(sig, bytes) else sig
        if isinstance(call_id, str) and isinstance(text, str) and text:
            out[call_id] = _STAND_IN if text == _STAND_IN_B64 else text
    return out


def signature_models(messages: Sequence[Any]) -> Mapping[str, str]:
    """``{signature: model}`` for every signature an ``AIMessage`` keeps, from the model
    named in its ``response_metadata``."""
    out: dict[str, str] = {}
    for m in messages:
        if not isinstance(m, AIMessage):
            continue
        model = m.response_metadata.get("model_name")
        if not isinstance(model, str) or not model:
            continue
        for sig in _kept(m).values():
            if sig != _STAND_IN:
                out[sig] = model
    return out


class SigningCodec(LangChainCodec):
    """The LangChain codec, for Gemini: a call reads as carrying the signature its
    message keeps for it, and can be made to carry the stand-in, as both Google chat
    models send a kept signature."""

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out = super().decode(messages)
        for m in out:
            kept = _kept(m.native) if isinstance(m.native, AIMessage) else {}
            for b in m.blocks:
                sig = kept.get(b.id) if b.kind == "call" and b.id else None
                if sig is not None:
                    b.item_id = sig
        return out

    def with_signature(self, block: Block, signature: str) -> Block | None:
        if signature != _STAND_IN or not block.id:
            return None  # only the stand-in is ever written; a real one is the model's
        return dataclasses.replace(block, item_id=signature)

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        native = super().build(role, blocks, template)
        if not isinstance(native, AIMessage):
            return native
        bypassed = {
            b.id: _STAND_IN_B64
            for b in blocks
            if b.kind == "call" and b.id and b.item_id == _STAND_IN
        }
        kept = native.additional_kwargs.get(KEY)
        kept = dict(kept) if isinstance(kept, Mapping) else {}
        if all(kept.get(k) == v for k, v in bypassed.items()):
            return native
        extra = {**native.additional_kwargs, KEY: {**kept, **bypassed}}
        return native.model_copy(update={"additional_kwargs": extra})
