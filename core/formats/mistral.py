"""Mistral chat: OpenAI's shape, with ``name`` on tool messages and 9-character
alphanumeric call ids (the id rule lives in the provider profile)."""

from __future__ import annotations

from toolpair._model import Block
from toolpair.formats.openai_chat import OpenAIChatCodec


class MistralCodec(OpenAIChatCodec):
    name = "mistral"

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        block = super().make_result(call, text, is_error=is_error)
        if call.name:
            block.native["name"] = call.name
        return block
