"""Codecs for the six provider wire formats, and format detection.

A format is named by its codec's ``name``: "anthropic", "bedrock", "openai",
"openai-responses", "gemini", "mistral". Framework integrations pass their own codec
object as ``format=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolpair._model import Codec, InvalidHistory
from toolpair.formats._checks import Checker as Checker
from toolpair.formats._checks import anthropic_ids_ok as anthropic_ids_ok
from toolpair.formats._checks import blank as blank
from toolpair.formats._common import ORPHAN_TEXT as ORPHAN_TEXT
from toolpair.formats._common import content_is_empty as content_is_empty
from toolpair.formats._common import stringify as stringify
from toolpair.formats._common import thinking_on as thinking_on
from toolpair.formats.anthropic import AnthropicCodec
from toolpair.formats.bedrock import BedrockCodec
from toolpair.formats.gemini import GeminiCodec
from toolpair.formats.mistral import MistralCodec
from toolpair.formats.openai_chat import OpenAIChatCodec
from toolpair.formats.responses import ResponsesCodec

CODECS: dict[str, Codec] = {
    c.name: c
    for c in (
        AnthropicCodec(),
        BedrockCodec(),
        OpenAIChatCodec(),
        ResponsesCodec(),
        GeminiCodec(),
        MistralCodec(),
    )
}

#: The body key holding the message list, where it is not ``messages`` (each codec's
#: ``body_key``).
LIST_KEYS: dict[str, str] = {
    name: c.body_key for name, c in CODECS.items() if c.body_key != "messages"
}

_ANTHROPIC_TYPES = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)
_BEDROCK_KEYS = frozenset({"toolUse", "toolResult", "reasoningContent", "cachePoint"})


#: What every codec does; an object with these, a ``name`` and a ``shape`` is a codec.
_CORE = ("decode", "build", "make_result", "make_text", "with_id", "result_as_text")
#: The hooks a codec may have, as the contract names them (`toolpair.Codec`).
_HOOKS = tuple(n for n in vars(Codec) if not n.startswith("_") and n not in ("name", "shape"))


def adopt(obj: object) -> Codec:
    """A codec written to the contract before it was a class: an object with the six core
    methods, a ``name`` and a ``shape``. It keeps its own hooks where it has them and takes
    the defaults elsewhere, read once here so the engine never asks again."""
    missing = [n for n in (*_CORE, "name", "shape") if not hasattr(obj, n)]
    if missing:
        raise TypeError(
            f"format= takes a format name or a toolpair.Codec, not {type(obj).__name__} "
            f"(it has no {', '.join(missing)}; a codec subclasses toolpair.Codec)"
        )
    adopted = Codec()
    for n in ("name", "shape", *_HOOKS):
        if hasattr(obj, n):
            setattr(adopted, n, getattr(obj, n))
    return adopted


def get_codec(format: str | Codec) -> Codec:
    if isinstance(format, Codec):
        return format
    if not isinstance(format, str):
        return adopt(format)
    try:
        return CODECS[format]
    except KeyError:
        raise ValueError(f"unknown format {format!r}; known: {', '.join(CODECS)}") from None


def _detect_list(messages: Sequence[Any], hint: str | None) -> str | None:
    """The format a message list is in, from the first message that tells."""
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        if "parts" in m:
            return "gemini"
        t = m.get("type")
        if (t is not None and t != "message") or ("role" not in m and "content" not in m):
            return "openai-responses"
        role = m.get("role")
        if role == "tool" or "tool_calls" in m:
            return "mistral" if hint == "mistral" else "openai"
        if role in ("system", "developer"):
            # Both Chat Completions and Responses have these roles: read on.
            continue
        if role == "model":
            return "gemini"
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if not isinstance(b, Mapping):
                    continue
                bt = b.get("type")
                if bt in _ANTHROPIC_TYPES:
                    return "anthropic"
                if bt is None and _BEDROCK_KEYS.intersection(b):
                    return "bedrock"
                if bt in ("input_text", "output_text", "input_image"):
                    return "openai-responses"
                if bt in ("image_url", "input_audio"):
                    return "mistral" if hint == "mistral" else "openai"
                if bt is None and "text" in b:
                    return "bedrock"
    return None


#: The format a provider speaks, used when a history could be in several.
PROVIDER_FORMATS = {
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "openai": "openai",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "mistral": "mistral",
    "vertex": "gemini",
    "deepseek": "openai",
    "deepseek-responses": "openai-responses",
    "moonshot": "openai",
    "zhipu": "openai",
}


def detect(history: Any, provider: str | None = None) -> str:
    """The wire format of a message list or request body."""
    hint = PROVIDER_FORMATS.get(provider or "")
    if isinstance(history, Mapping):
        if "contents" in history:
            return "gemini"
        if "input" in history:
            return "openai-responses"
        if "messages" not in history:
            raise InvalidHistory("request body has no 'messages', 'input' or 'contents'")
        if "toolConfig" in history or "inferenceConfig" in history or "modelId" in history:
            return "bedrock"
        if ("max_tokens" in history and "system" in history) or "anthropic_version" in history:
            return "anthropic"
        history = history["messages"]
    if not isinstance(history, list | tuple):
        raise InvalidHistory(
            f"history must be a list or a request body, not {type(history).__name__}"
        )
    found = _detect_list(history, hint)
    if found is not None:
        return found
    return hint or "openai"
