"""What the LangGraph entry points share: repair and validation of LangChain messages
with the rules and the model id read off the chat model (its provider, or its host where
the host's rules differ) passed to the core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

import toolpair
from toolpair import Policy, Repaired, Violation
from toolpair.integrations.langchain import LangChainCodec, codec_for, provider_for
from toolpair.integrations.langchain._repair import (
    ProviderLike,
    _as_messages,
    _restore_removals,
    _split_removals,
    _unwrap,
)

__all__ = ["ProviderLike", "host_for", "model_id", "repair_list", "rules_for", "validate_list"]

#: Attributes LangChain chat models keep their model id in (ChatAnthropic ``model``,
#: ChatOpenAI ``model_name``, the Bedrock classes ``model_id``).
_MODEL_ATTRS = ("model", "model_name", "model_id")


def model_id(model: ProviderLike) -> str | None:
    """The model id a LangChain chat model (or a ``bind_tools`` chain around one) calls;
    None for a provider name, None, or a model that names no id."""
    if model is None or isinstance(model, str):
        return None
    inner, _ = _unwrap(model)
    for attr in _MODEL_ATTRS:
        value = getattr(inner, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def _model(provider: ProviderLike, model: str | None) -> str | None:
    return model if model is not None else model_id(provider)


def host_for(model: ProviderLike) -> str | None:
    """The toolpair host profile a chat model talks to, where its rules differ from the
    API's own: "vertex" (Gemini on Vertex AI), "deepseek" / "deepseek-responses"
    (DeepSeek's OpenAI-compatible endpoints). None for anything else."""
    if model is None or isinstance(model, str):
        return None
    inner, _ = _unwrap(model)
    names = {cls.__name__ for cls in type(inner).__mro__}
    api = provider_for(model)
    if api == "gemini" and ("ChatVertexAI" in names or getattr(inner, "vertexai", None) is True):
        return "vertex"
    base = ""
    for attr in ("openai_api_base", "api_base", "base_url"):
        value = getattr(inner, attr, None)
        if isinstance(value, str) and value:
            base = value
            break
    if "ChatDeepSeek" in names or "deepseek.com" in base:
        return "deepseek-responses" if api == "openai-responses" else "deepseek"
    return None


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
    original = _as_messages(list(messages))
    kept, removals = _split_removals(original)
    codec = _codec(provider)
    result = toolpair.repair(
        kept,
        rules_for(provider),
        model=_model(provider, model),
        policy=policy,
        format=codec,
    )
    result.messages = _restore_removals(kept, list(result.messages), removals)
    return result


def validate_list(
    messages: Sequence[BaseMessage],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
) -> list[Violation]:
    kept, _ = _split_removals(_as_messages(list(messages)))
    codec = _codec(provider)
    return toolpair.validate(kept, rules_for(provider), model=_model(provider, model), format=codec)
