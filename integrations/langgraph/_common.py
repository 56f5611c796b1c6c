"""What the LangGraph entry points share: repair and validation of LangChain messages
with the rules and the model id read off the chat model (its provider, or its host where
the host's rules differ) passed to the core."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

import toolpair
from toolpair import Policy, Repaired, Violation
from toolpair.integrations._base import Integration, Target
from toolpair.integrations._hosts import DEEPSEEK
from toolpair.integrations._langchain_messages import (
    ProviderLike,
    as_messages,
    restore_removals,
    split_removals,
)
from toolpair.integrations.langchain import (
    LangChainCodec,
    codec_for,
    model_for,
    provider_for,
    signature_models,
)

__all__ = [
    "INTEGRATION",
    "ProviderLike",
    "codec",
    "host_for",
    "model_id",
    "placed",
    "repair_list",
    "rules_for",
    "validate_list",
    "writing_rules",
]

_log = logging.getLogger("toolpair")

#: The host profiles `host_for` names: where a host's rules differ from its API's.
_HOSTS = frozenset({"vertex", *DEEPSEEK.values()})

#: ``init_chat_model``'s provider names (``"anthropic:claude-sonnet-4-6"``, as LangGraph
#: and LangChain take a model) -> toolpair rules, for the chat model class each builds.
#: Absent: a provider toolpair has no rules for (``ollama``, ``groq``...), unplaced.
INIT_CHAT_MODEL = {
    "openai": "openai",
    "azure_openai": "openai",
    "anthropic": "anthropic",
    "google_anthropic_vertex": "anthropic",
    "google_genai": "gemini",
    "google_vertexai": "vertex",
    "bedrock_converse": "bedrock",
    "mistralai": "mistral",
    "deepseek": "deepseek",
}


def _model_string(provider: str) -> tuple[str, str | None] | None:
    """``(rules, model id)`` for an ``init_chat_model`` string ``"provider:model"``;
    ``("portable", id)`` for a provider toolpair has no rules for; None for anything
    that is not such a string (a toolpair provider name)."""
    if provider in toolpair.PROVIDERS or ":" not in provider:
        return None
    prefix, _, name = provider.partition(":")
    rules = INIT_CHAT_MODEL.get(prefix)
    if rules is None and prefix == "bedrock":
        # ChatBedrock's InvokeModel client speaks Anthropic's format for Claude only.
        rules = "anthropic" if "anthropic" in name else None
    return (rules or "portable"), (name or None)


def _resolved(provider: ProviderLike) -> ProviderLike:
    if isinstance(provider, str):
        found = _model_string(provider)
        if found is not None:
            return found[0]
        if provider not in toolpair.PROVIDERS:
            raise ValueError(
                f"unknown provider {provider!r}: pass one of {', '.join(toolpair.PROVIDERS)}, "
                "a 'provider:model' string as init_chat_model takes it "
                "('anthropic:claude-sonnet-4-6'), or the chat model itself"
            )
    return provider


def placed(provider: ProviderLike) -> bool:
    """Whether toolpair knows the rules of the API ``provider`` talks to: None (the
    default rules), a provider name, an ``init_chat_model`` string of a provider it has
    rules for, or a chat model it recognises. False for a chat model it does not (a fake
    chat model, ChatOllama, a custom class) and for ``"ollama:..."``-style strings."""
    if provider is None:
        return True
    if isinstance(provider, str):
        found = _model_string(provider)
        return found is None or found[0] != "portable"
    return rules_for(provider) != "portable"


def writing_rules(provider: ProviderLike, default: str) -> ProviderLike:
    """The rules a write to the user's state (a checkpoint, a persisted update) is held
    to: ``provider``'s when toolpair knows them (`placed`), else ``default``, the
    pairing rules every chat API needs, with a warning. The union of every provider's
    rules ("portable") would rewrite what the API the thread talks to takes as it is
    (call ids in Mistral's shape, bridge turns) and is never written unless named."""
    if placed(provider):
        return provider
    name = repr(provider) if isinstance(provider, str) else type(provider).__name__
    _log.warning(
        "toolpair cannot tell which API %s talks to: the thread is held to LangGraph's own "
        "pairing rules (%s); pass provider= (a provider name or 'provider:model') for "
        "that API's rules",
        name,
        default,
    )
    return default


def model_id(model: ProviderLike) -> str | None:
    """The model id a LangChain chat model (or a ``bind_tools`` chain around one) calls;
    None for a provider name, None, or a model that names no id. The LangChain
    integration's `model_for`, so both read a model the same way. For an
    ``init_chat_model`` string (``"anthropic:claude-sonnet-4-6"``) the part after the
    colon."""
    if isinstance(model, str):
        found = _model_string(model)
        return found[1] if found is not None else None
    return model_for(model)


def _model(provider: ProviderLike, model: str | None) -> str | None:
    return model if model is not None else model_id(provider)


def host_for(model: ProviderLike) -> str | None:
    """The toolpair host profile a chat model talks to, where its rules differ from the
    API's own: "vertex" (Gemini on Vertex AI), "deepseek" / "deepseek-responses"
    (DeepSeek's OpenAI-compatible endpoints). None for anything else. Read by the
    LangChain integration's `provider_for`, so both name the same host."""
    if model is None:
        return None
    if isinstance(model, str):
        found = _model_string(model)
        return found[0] if found is not None and found[0] in _HOSTS else None
    name = provider_for(model)
    return name if name in _HOSTS else None


def rules_for(provider: ProviderLike) -> str:
    """The name of the rules ``provider`` (a name, an ``init_chat_model`` string such as
    ``"anthropic:claude-sonnet-4-6"``, or a chat model) is held to."""
    host = host_for(provider)
    return host if host is not None else (codec_for(_resolved(provider)).provider or "portable")


def codec(provider: ProviderLike) -> LangChainCodec:
    """The LangChain codec for ``provider`` (a name, an ``init_chat_model`` string or a
    chat model)."""
    # The codec follows the LangChain package's converter (what it puts on the wire);
    # the rules may be a host's (`rules_for`).
    # Its skeleton gives every provider's no-op path (`LangChainCodec.skeleton`).
    return codec_for(_resolved(provider))


def repair_list(
    messages: Sequence[Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    signature_models: Mapping[str, str] | None = None,
) -> Repaired:
    """`toolpair.repair` over LangChain messages for ``provider`` (a name or a chat
    model), with the model id (given, or read off the chat model) passed to the core.
    LangGraph ``RemoveMessage`` entries are set aside and put back. ``signature_models``
    (``{thought signature: model}``) puts aside a Gemini signature of another model."""
    original = as_messages(list(messages))
    kept, removals = split_removals(original)
    codec_ = codec(provider)
    extra = {"signature_models": signature_models} if signature_models else {}
    result = toolpair.repair(
        kept,
        rules_for(provider),
        model=_model(provider, model),
        policy=policy,
        format=codec_,
        **extra,
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
    codec_ = codec(provider)
    return toolpair.validate(
        kept, rules_for(provider), model=_model(provider, model), format=codec_
    )


class LangGraph(Integration):
    """LangGraph: LangChain messages in a graph's state, held to the rules of the chat
    model the graph calls (a host's where they differ), ``RemoveMessage`` entries set
    aside; `repair` takes the chat model (or name) itself as ``source``."""

    name = "langgraph"

    def detect(self, model: object) -> Target:
        return Target(rules_for(model), model_id(model))

    def codec(self, target: Target) -> LangChainCodec:
        return codec(target.provider)

    def signature_models(self, messages: Sequence[Any]) -> Mapping[str, str] | None:
        # As LangChain's: each AIMessage names the model that answered.
        return signature_models(messages)

    def repair(
        self, messages: Sequence[Any], target: Target, policy: Policy | None, **options: Any
    ) -> Repaired:
        # The rules are read off ``source``, the chat model (or name) the hook holds.
        return repair_list(
            messages,
            options.get("source"),
            model=target.model,
            policy=policy,
            signature_models=options.get("signature_models"),
        )


INTEGRATION = LangGraph()
