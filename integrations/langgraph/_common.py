"""What the LangGraph entry points share: repair and validation of LangChain messages
with the rules and the model id read off the chat model (its provider, or its host where
the host's rules differ) passed to the core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

import toolpair
from toolpair import Policy, Repaired, Violation
from toolpair.integrations._hosts import DEEPSEEK
from toolpair.integrations._langchain_messages import (
    ProviderLike,
    as_messages,
    restore_removals,
    split_removals,
)
from toolpair.integrations.langchain import LangChainCodec, codec_for, model_for, provider_for

__all__ = ["ProviderLike", "host_for", "model_id", "repair_list", "rules_for", "validate_list"]

#: The host profiles `host_for` names: where a host's rules differ from its API's.
_HOSTS = frozenset({"vertex", *DEEPSEEK.values()})


def model_id(model: ProviderLike) -> str | None:
    """The model id a LangChain chat model (or a ``bind_tools`` chain around one) calls;
    None for a provider name, None, or a model that names no id. The LangChain
    integration's `model_for`, so both read a model the same way."""
    return model_for(model)


def _model(provider: ProviderLike, model: str | None) -> str | None:
    return model if model is not None else model_id(provider)


def host_for(model: ProviderLike) -> str | None:
    """The toolpair host profile a chat model talks to, where its rules differ from the
    API's own: "vertex" (Gemini on Vertex AI), "deepseek" / "deepseek-responses"
    (DeepSeek's OpenAI-compatible endpoints). None for anything else. Read by the
    LangChain integration's `provider_for`, so both name the same host."""
    if model is None or isinstance(model, str):
        return None
    name = provider_for(model)
    return name if name in _HOSTS else None


def rules_for(provider: ProviderLike) -> str:
    """The name of the rules ``provider`` (a name or a chat model) is held to."""
    host = host_for(provider)
    return host if host is not None else (codec_for(provider).provider or "portable")


def _codec(provider: ProviderLike) -> LangChainCodec:
    # The codec follows the LangChain package's converter (what it puts on the wire);
    # the rules may be a host's (`rules_for`).
    codec = codec_for(provider)
    if codec.provider == "openai" and type(codec) is LangChainCodec:
        from ._fast import ThreadCodec

        return ThreadCodec("openai", invalid_calls_sent=codec.invalid_calls_sent)
    return codec


def repair_list(
    messages: Sequence[Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
) -> Repaired:
    """`toolpair.repair` over LangChain messages for ``provider`` (a name or a chat
    model), with the model id (given, or read off the chat model) passed to the core.
    LangGraph ``RemoveMessage`` entries are set aside and put back."""
    original = as_messages(list(messages))
    kept, removals = split_removals(original)
    codec = _codec(provider)
    result = toolpair.repair(
        kept,
        rules_for(provider),
        model=_model(provider, model),
        policy=policy,
        format=codec,
    )
    result.messages = restore_removals(kept, list(result.messages), removals)
    return result


def validate_list(
    messages: Sequence[BaseMessage],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
) -> list[Violation]:
    kept, _ = split_removals(as_messages(list(messages)))
    codec = _codec(provider)
    return toolpair.validate(kept, rules_for(provider), model=_model(provider, model), format=codec)
