"""Mistral chat: OpenAI's shape, with ``name`` on tool messages and 9-character
alphanumeric call ids (the id rule lives in the provider profile)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from toolpair._model import Block
from toolpair.formats import _checks
from toolpair.formats._checks import Checker
from toolpair.formats.openai_chat import OpenAIChatCodec


class MistralCodec(OpenAIChatCodec):
    name = "mistral"
    checks: ClassVar[Mapping[str, Checker]] = {"mistral": _checks.mistral}

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        block = super().make_result(call, text, is_error=is_error)
        if call.name:
            block.native["name"] = call.name
        return block
