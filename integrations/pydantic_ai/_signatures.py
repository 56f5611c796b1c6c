"""Which model produced each Gemini thought signature in a pydantic-ai history, and how a
signature of another model is put aside (Gemini G8).

pydantic-ai keeps the producing model beside every response (``ModelResponse.model_name``)
and the signature inside the response's parts: on the call itself
(``ToolCallPart.provider_details["thought_signature"]``, base64) or on the
``ThinkingPart`` before it, which GoogleModel attaches to the part that follows.
GoogleModel sends a response's signatures back to the transport that issued them, but to
any model on it, and the Gemini API refuses a signature another model produced.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic_ai.messages import ModelResponse, ThinkingPart, ToolCallPart

from toolpair import Block, Message

from ._codec import PydanticAICodec

#: The documented stand-in, as the core names it and as GoogleModel reads it (base64).
_STAND_IN = "skip_thought_signature_validator"
_STAND_IN_B64 = base64.b64encode(_STAND_IN.encode()).decode()


def _signed_calls(response: ModelResponse) -> Iterator[tuple[ToolCallPart, str]]:
    """Each call of ``response`` GoogleModel sends with a thought signature, and that
    signature (base64; the stand-in by its name): its own, else the one of the
    ``ThinkingPart`` right before it."""
    pending: str | None = None
    for part in response.parts:
        details = getattr(part, "provider_details", None) or {}
        inline = details.get("thought_signature")
        sig = inline if isinstance(inline, str) and inline else pending
        pending = part.signature if isinstance(part, ThinkingPart) and part.signature else None
        if isinstance(part, ToolCallPart) and sig:
            yield part, (_STAND_IN if sig == _STAND_IN_B64 else sig)


def signature_models(messages: Sequence[Any]) -> Mapping[str, str]:
    """``{signature: model}`` for every call that goes to Gemini with a thought signature,
    from the model named on the response that made it."""
    out: dict[str, str] = {}
    for m in messages:
        if isinstance(m, ModelResponse) and m.model_name:
            for _, sig in _signed_calls(m):
                if sig != _STAND_IN:
                    out[sig] = m.model_name
    return out


class SigningCodec(PydanticAICodec):
    """The pydantic-ai codec, for Gemini: a call reads as carrying the signature
    GoogleModel will send with it, and can be made to carry another (its
    ``provider_details``), as GoogleModel sends one."""

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out = super().decode(messages)
        for m in out:
            if not isinstance(m.native, ModelResponse):
                continue
            sigs = {id(part): sig for part, sig in _signed_calls(m.native)}
            if not sigs:
                continue
            for b in m.blocks:
                sig = sigs.get(id(b.native)) if b.kind == "call" else None
                if sig is not None:
                    b.item_id = sig
        return out

    def with_signature(self, block: Block, signature: str) -> Block | None:
        part = block.native
        fields = (
            {f.name for f in dataclasses.fields(part)} if dataclasses.is_dataclass(part) else ()
        )
        if not isinstance(part, ToolCallPart) or "provider_details" not in fields:
            return None  # a release whose calls carry no signature of their own
        encoded = base64.b64encode(signature.encode()).decode()
        details = {**(part.provider_details or {}), "thought_signature": encoded}
        return dataclasses.replace(
            block, native=dataclasses.replace(part, provider_details=details), item_id=signature
        )
