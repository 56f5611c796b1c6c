"""Repair and validate LangChain message lists for the provider a chat model talks to."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableLambda

import toolpair
from toolpair import Policy, Repaired, Violation
from toolpair.integrations._base import Guard, Integration, OnRepair, Target
from toolpair.integrations._hosts import CHAT_HOSTS, DEEPSEEK, at_deepseek, provider_at

from .._langchain_messages import ProviderLike, as_messages, restore_removals, split_removals
from ._codec import LangChainCodec
from ._signatures import SigningCodec, signature_models

__all__ = [
    "INTEGRATION",
    "codec_for",
    "model_for",
    "provider_for",
    "repair_messages",
    "repair_report",
    "validate_messages",
    "with_repair",
]

#: Chat model class names (anywhere in the MRO) and the provider whose rules apply.
_BY_CLASS: dict[str, str] = {
    "ChatAnthropic": "anthropic",
    "ChatAnthropicVertex": "anthropic",
    "ChatAnthropicMessages": "anthropic",
    "ChatBedrockConverse": "bedrock",
    "ChatGoogleGenerativeAI": "gemini",
    "ChatVertexAI": "vertex",
    "ChatMistralAI": "mistral",
    "ChatOpenAI": "openai",
    "AzureChatOpenAI": "openai",
    "BaseChatOpenAI": "openai",
}


def _unwrap(model: Any) -> tuple[Any, dict[str, Any]]:
    """The chat model behind ``model.bind_tools(...)``/``.bind(...)`` chains, with the
    kwargs bound on the way (they can switch ChatOpenAI to the Responses API)."""
    kwargs: dict[str, Any] = {}
    seen = 0
    while hasattr(model, "bound") and seen < 16:
        bound_kwargs = getattr(model, "kwargs", None)
        if isinstance(bound_kwargs, Mapping):
            kwargs = {**bound_kwargs, **kwargs}
        model = model.bound
        seen += 1
    return model, kwargs


def _host(inner: Any, names: list[str], provider: str, kwargs: dict[str, Any]) -> str:
    """The host profile where the chat model says which host it talks to, else
    ``provider``: ChatGoogleGenerativeAI on Vertex AI, ChatDeepSeek (at DeepSeek's own
    base URL), ChatOpenAI pointed at DeepSeek."""
    if provider == "gemini":
        # The class settles the backend at construction (the flag, a project, the
        # google-genai environment switch) and keeps the answer in `_use_vertexai`.
        decided = getattr(inner, "_use_vertexai", None)
        vertex = decided if isinstance(decided, bool) else getattr(inner, "vertexai", None)
        return "vertex" if vertex is True else provider
    if provider == "openai":
        base = getattr(inner, "api_base", None) if "ChatDeepSeek" in names else None
        base = base or getattr(inner, "openai_api_base", None)
        api = "openai-responses" if _uses_responses(inner, kwargs) else "openai"
        if isinstance(base, str) and at_deepseek(base):
            return DEEPSEEK[api]
        # Moonshot (Kimi) and Zhipu (GLM) serve Chat Completions with rules of their own.
        host = provider_at(base, responses=False) if api == "openai" else None
        return host if host in CHAT_HOSTS else api
    return provider


def provider_for(model: ProviderLike) -> str:
    """The toolpair provider whose rules ``model`` is held to.

    A string is returned as is; None means "portable" (valid everywhere). A chat model
    is recognised by class name, so no provider package is imported here; ChatOpenAI
    maps to "openai-responses" when it would call the Responses API. Hosts: ChatVertexAI
    and ChatGoogleGenerativeAI on Vertex AI are "vertex" (ChatAnthropicVertex stays
    "anthropic"); ChatDeepSeek and ChatOpenAI at a DeepSeek base URL are "deepseek"
    ("deepseek-responses" on the Responses API). Unknown models get "portable".
    """
    if model is None:
        return "portable"
    if isinstance(model, str):
        return model
    inner, kwargs = _unwrap(model)
    names = [cls.__name__ for cls in type(inner).__mro__]
    if "ChatBedrock" in names and "ChatBedrockConverse" not in names:
        # The InvokeModel client speaks the Anthropic Messages format for Claude.
        if getattr(inner, "beta_use_converse_api", False):
            return "bedrock"
        model_id = str(getattr(inner, "model_id", "") or "")
        return "anthropic" if "anthropic" in model_id else "portable"
    for name in names:
        provider = _BY_CLASS.get(name)
        if provider is not None:
            return _host(inner, names, provider, kwargs)
    return "portable"


#: Where each chat model class keeps the model id it sends (first found wins):
#: ``model_id`` on the Bedrock classes, ``model_name`` on ChatOpenAI, ChatDeepSeek and
#: ChatVertexAI, ``model`` on ChatAnthropic, ChatGoogleGenerativeAI and ChatMistralAI.
_MODEL_FIELDS = ("model_id", "model_name", "model")


def model_for(model: ProviderLike) -> str | None:
    """The model id a chat model sends, as the user wrote it (a Bedrock geo prefix or
    ARN is kept: the core parses it), or None for a provider name, None, or a chat model
    that names none. A ``model`` bound with ``.bind(model=...)`` wins, as it does on
    the wire."""
    if model is None or isinstance(model, str):
        return None
    inner, kwargs = _unwrap(model)
    bound = kwargs.get("model")
    if isinstance(bound, str) and bound:
        return bound
    for field in _MODEL_FIELDS:
        value = getattr(inner, field, None)
        if isinstance(value, str) and value:
            return value
    return None


_PROBE_CALL_ID = "toolpair_probe"


def _sends_invalid_calls(model: Any) -> bool:
    """Whether ``model``'s converter puts ``invalid_tool_calls`` on the wire, found by
    building (not sending) a request for a one-call history."""
    builder = getattr(model, "_get_request_payload", None)
    if not callable(builder):
        return True
    key = (type(model).__module__, type(model).__qualname__)
    if key in _INVALID_SENT:
        return _INVALID_SENT[key]
    probe = [
        HumanMessage("q"),
        AIMessage(
            "",
            invalid_tool_calls=[
                {
                    "type": "invalid_tool_call",
                    "id": _PROBE_CALL_ID,
                    "name": "f",
                    "args": "{}",
                    "error": None,
                }
            ],
        ),
    ]
    try:
        payload = builder(probe)
    except Exception:
        return True
    sent = _PROBE_CALL_ID in json.dumps(payload, default=str)
    _INVALID_SENT[key] = sent
    return sent


_INVALID_SENT: dict[tuple[str, str], bool] = {}


def codec_for(model: ProviderLike) -> LangChainCodec:
    """The codec describing what ``model`` (a chat model or provider name) sends."""
    name = provider_for(model)
    # For Gemini a call reads as carrying the signature its message keeps (G8).
    kind = SigningCodec if name == "gemini" else LangChainCodec
    if model is None or isinstance(model, str):
        return kind(name)
    inner, _ = _unwrap(model)
    return kind(
        name,
        invalid_calls_sent=_sends_invalid_calls(inner),
        signs_first_call=_signs_first_call(inner),
    )


def _signs_first_call(model: Any) -> bool:
    """Whether ``model`` sends a call that has no thought signature with Google's bypass
    value (ChatGoogleGenerativeAI does, from the release that defines it)."""
    for cls in type(model).__mro__:
        if cls.__name__ == "ChatGoogleGenerativeAI":
            module = sys.modules.get(cls.__module__)
            return hasattr(module, "SKIP_THOUGHT_SIGNATURE_VALIDATOR")
    return False


def _uses_responses(model: Any, kwargs: dict[str, Any]) -> bool:
    decide = getattr(model, "_use_responses_api", None)
    if callable(decide):
        try:
            return bool(decide(dict(kwargs)))
        except Exception:
            pass
    return getattr(model, "use_responses_api", None) is True


def _policy(policy: Policy | None, overrides: Mapping[str, Any]) -> Policy | None:
    if not overrides:
        return policy
    return replace(policy or Policy(), **overrides)


def repair_report(
    messages: Sequence[Any] | PromptValue,
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    signature_models: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Repaired:
    """`toolpair.repair` over LangChain messages: ``.messages`` is a new list of
    ``BaseMessage`` in which every message repair did not touch is the input object.
    ``model`` (a model id) defaults to the one ``provider``, a chat model, sends;
    ``signature_models`` (``{thought signature: model that produced it}``) puts aside a
    Gemini signature another model produced."""
    original = as_messages(messages)
    kept, removals = split_removals(original)
    codec = codec_for(provider)
    extra = {"signature_models": signature_models} if signature_models else {}
    result = toolpair.repair(
        kept,
        codec.provider or "portable",
        model=model or model_for(provider),
        policy=_policy(policy, overrides),
        format=codec,
        **extra,
    )
    result.messages = restore_removals(kept, list(result.messages), removals)
    return result


class LangChain(Integration):
    """LangChain: ``BaseMessage`` lists, read as the chat model's converter sends them
    (so `repair` takes the chat model itself as ``source``, where the hook has it)."""

    name = "langchain"

    def detect(self, model: object) -> Target:
        return Target(provider_for(model), model_for(model))

    def codec(self, target: Target) -> LangChainCodec:
        return LangChainCodec(target.provider)

    def signature_models(self, messages: Sequence[Any]) -> Mapping[str, str] | None:
        # Each AIMessage names the model that answered (response_metadata["model_name"]).
        return signature_models(messages)

    def repair(
        self,
        messages: Sequence[Any],
        target: Target,
        policy: Policy | None,
        *,
        source: ProviderLike = None,
        **overrides: Any,
    ) -> Repaired:
        return repair_report(
            messages,
            source if source is not None else target.provider,
            model=target.model,
            policy=policy,
            **overrides,
        )


INTEGRATION = LangChain()


def guarded_step(
    provider: ProviderLike,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    on_repair: OnRepair | None = None,
    strict: bool = False,
    **overrides: Any,
) -> Runnable[Any, list[BaseMessage]]:
    """The LCEL step of `repair_messages` (called without messages): each invocation is
    a request, repaired through a `Guard`."""
    guard = Guard(INTEGRATION, policy=policy, on_repair=on_repair, strict=strict)
    target = Target(provider_for(provider), model or model_for(provider))

    def run(value: Sequence[Any] | PromptValue) -> list[BaseMessage]:
        repaired = guard.repair(as_messages(value), target=target, source=provider, **overrides)
        if repaired is None:
            return as_messages(value)
        return cast(list[BaseMessage], repaired.messages)

    step: Runnable[Any, list[BaseMessage]] = RunnableLambda(run, name="repair_messages")
    return step


def repair_messages(
    messages: Sequence[Any] | PromptValue | None = None,
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    **overrides: Any,
) -> Any:
    """Return ``messages`` repaired for ``provider`` (a provider name, a chat model, or
    None for "portable") serving ``model`` (a model id; by default the one a chat model
    sends). ``overrides`` are `toolpair.Policy` fields (``orphans="text"``,
    ``placeholder=...``).

    Called without ``messages`` it returns a Runnable for LCEL:
    ``prompt | repair_messages(provider=model) | model``; each of its requests goes
    through a `Guard` (one event per repaired request; a history toolpair cannot read is
    passed on as it is, with a warning; ``on_repair=`` and ``strict=`` may be given).
    """
    if messages is None:
        return guarded_step(provider, model=model, policy=policy, **overrides)
    return repair_report(messages, provider, model=model, policy=policy, **overrides).messages


def validate_messages(
    messages: Sequence[Any] | PromptValue,
    provider: ProviderLike = None,
    *,
    model: str | None = None,
) -> list[Violation]:
    """What ``provider`` (serving ``model``, by default the one a chat model sends)
    would reject in ``messages``, worded as that provider words it."""
    kept, _ = split_removals(as_messages(messages))
    codec = codec_for(provider)
    return toolpair.validate(
        kept, codec.provider or "portable", model=model or model_for(provider), format=codec
    )


def with_repair(model: Runnable[Any, Any], **overrides: Any) -> Runnable[Any, Any]:
    """``model`` behind a repair step for the provider and model id it talks to
    (``overrides`` may name ``model="..."`` to set the id)."""
    overrides.setdefault("model", model_for(model))
    return repair_messages(provider=provider_for(model), **overrides) | model  # type: ignore[no-any-return]
