"""Validation and repair of ChatMessage lists, and the provider an LLM talks to."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

import toolpair
from toolpair import Fix, Policy, Repaired, Violation, _api
from toolpair.integrations._base import Integration, Target
from toolpair.integrations._hosts import DEEPSEEK, at_deepseek
from toolpair.integrations.llamaindex._codec import LlamaIndexCodec, call_block_type

__all__ = [
    "CODEC",
    "INTEGRATION",
    "model_for",
    "provider_for",
    "repair_messages",
    "validate_messages",
]

CODEC = LlamaIndexCodec()
#: The codec for the profiles whose rules read Gemini thought signatures.
GEMINI_CODEC = LlamaIndexCodec(gemini=True)
#: The codec for Anthropic, whose converter needs some calls rewritten (`_for_anthropic`).
ANTHROPIC_CODEC = LlamaIndexCodec(anthropic=True)


def codec_for(provider: str | None) -> LlamaIndexCodec:
    """The codec reading a history as the LLM for ``provider`` sends it."""
    if provider == "anthropic":
        return ANTHROPIC_CODEC
    return GEMINI_CODEC if provider in ("gemini", "vertex") else CODEC


#: (module prefix, class-name fragment or "", provider). The first match along the
#: LLM's MRO wins, so a user's subclass of a provider LLM keeps that provider's rules.
_PROVIDERS: tuple[tuple[str, str, str], ...] = (
    ("llama_index.llms.openai", "Responses", "openai-responses"),
    ("llama_index.llms.azure_openai", "Responses", "openai-responses"),
    ("llama_index.llms.anthropic", "", "anthropic"),
    ("llama_index.llms.deepseek", "", "deepseek"),
    ("llama_index.llms.bedrock_converse", "", "bedrock"),
    ("llama_index.llms.openai", "", "openai"),
    ("llama_index.llms.azure_openai", "", "openai"),
    ("llama_index.llms.google_genai", "", "gemini"),
    ("llama_index.llms.gemini", "", "gemini"),
    ("llama_index.llms.vertex", "", "vertex"),
    ("llama_index.llms.mistralai", "", "mistral"),
)


def _uses_vertex(llm: Any) -> bool:
    # GoogleGenAI builds a Vertex client for ``vertexai_config`` or the google-genai
    # environment switch; the client it built says which it got.
    client = getattr(llm, "_client", None)
    if getattr(client, "vertexai", None) is True:
        return True
    return client is None and os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "false") != "false"


def _base_provider(llm: Any) -> str:
    for cls in type(llm).__mro__:
        module = cls.__module__ or ""
        for prefix, fragment, provider in _PROVIDERS:
            if (module == prefix or module.startswith(prefix + ".")) and fragment in cls.__name__:
                return provider
    return "portable"


def provider_for(llm: Any) -> str:
    """The toolpair provider whose rules ``llm``'s requests must follow, from its class:
    Anthropic, Bedrock Converse, OpenAI (Chat or Responses), Gemini or Mistral, else
    ``"portable"`` (valid on all of them). Hosts: ``Vertex`` and a ``GoogleGenAI`` with
    a Vertex client are "vertex"; ``DeepSeek`` and an OpenAI LLM whose ``api_base`` is
    DeepSeek's are "deepseek" ("deepseek-responses" for ``OpenAIResponses``). A
    `GuardedLLM` answers for the LLM it wraps."""
    inner = getattr(llm, "llm", None)
    if type(llm).__name__ == "GuardedLLM" and inner is not None:
        return str(llm.provider or provider_for(inner))
    provider = _base_provider(llm)
    if provider == "gemini" and _uses_vertex(llm):
        return "vertex"
    api_base = getattr(llm, "api_base", None)
    if provider in DEEPSEEK and isinstance(api_base, str) and at_deepseek(api_base):
        return DEEPSEEK[provider]
    return provider


def model_for(llm: Any) -> str | None:
    """The model id ``llm`` sends, as the user wrote it: its ``model`` field (every
    provider LLM has one; Bedrock's keeps its geo prefix), else ``metadata.model_name``;
    None where it has neither."""
    model = getattr(llm, "model", None)
    if isinstance(model, str) and model:
        return model
    try:
        # Some LLMs compute their metadata (a context-size table lookup that raises for
        # a model it does not list): no reason to fail a request.
        name = llm.metadata.model_name
    except Exception:
        return None
    return name if isinstance(name, str) and name and name != "unknown" else None


def _policy(policy: Policy | None, options: dict[str, Any]) -> Policy | None:
    if options:
        if policy is not None:
            raise TypeError("pass either policy= or policy options, not both")
        return Policy(**options)
    return policy


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        parsed = raw
    # Anthropic's input must be an object; anything else is kept, wrapped.
    return parsed if isinstance(parsed, dict) else {"input": parsed}


def _legacy_fields(entry: Any) -> tuple[Any, Any, Any]:
    """(id, name, arguments) of a legacy call entry, whatever its shape."""
    if isinstance(entry, Mapping):
        fn = entry.get("function")
        if isinstance(fn, Mapping):
            return entry.get("id"), fn.get("name"), fn.get("arguments")
        return entry.get("id"), entry.get("name"), entry.get("input")
    fn = getattr(entry, "function", None)
    if fn is not None:
        return entry.id, getattr(fn, "name", None), getattr(fn, "arguments", None)
    return getattr(entry, "id", None), getattr(entry, "name", None), getattr(entry, "input", None)


def _anthropic_reads(entry: Any) -> bool:
    # What llama-index-llms-anthropic's converter accepts from additional_kwargs.
    return isinstance(entry, Mapping) and {"id", "input", "name"} <= entry.keys()


def _for_anthropic(messages: list[Any]) -> tuple[list[Any], list[Fix]]:
    """Calls the Anthropic converter would send wrong: OpenAI-shaped legacy calls (it
    silently drops them, orphaning their results) become ToolCallBlocks, and string
    arguments (what the OpenAI LLM stores) become the object Anthropic requires."""
    block_type = call_block_type()
    out = list(messages)
    fixes: list[Fix] = []
    if block_type is None:
        return out, fixes
    for i, msg in enumerate(messages):
        if not isinstance(msg, ChatMessage) or msg.role != MessageRole.ASSISTANT:
            continue
        # Copied only when a call is rewritten: most messages are left as they are.
        blocks: list[Any] | None = None
        ids: list[str] = []
        has_blocks = False
        for k, b in enumerate(msg.blocks):
            t = type(b)
            # A text block, the commonest, is told apart without isinstance (pydantic's
            # metaclass makes that costly on a long history).
            if t is block_type or (t is not TextBlock and isinstance(b, block_type)):
                has_blocks = True
                if not isinstance(b.tool_kwargs, dict):
                    if blocks is None:
                        blocks = list(msg.blocks)
                    blocks[k] = b.model_copy(update={"tool_kwargs": _arguments(b.tool_kwargs)})
                    ids.append(str(b.tool_call_id))
        kwargs = msg.additional_kwargs or {}
        legacy = kwargs.get("tool_calls")
        lowered = False
        if (
            not has_blocks
            and isinstance(legacy, list | tuple)
            and legacy
            and not all(_anthropic_reads(e) for e in legacy)
        ):
            if blocks is None:
                blocks = list(msg.blocks)
            for entry in legacy:
                call_id, name, args = _legacy_fields(entry)
                blocks.append(
                    block_type(tool_call_id=call_id, tool_name=name, tool_kwargs=_arguments(args))
                )
                ids.append(str(call_id))
            lowered = True
        if not ids:
            continue
        update: dict[str, Any] = {"blocks": blocks}
        if lowered:
            update["additional_kwargs"] = {k: v for k, v in kwargs.items() if k != "tool_calls"}
        out[i] = msg.model_copy(update=update)
        fixes.append(
            Fix(
                "call_lowered",
                i,
                tuple(ids),
                "call rewritten in the form Anthropic's converter sends",
            )
        )
    return out, fixes


def _no_op(history: list[Any], provider: str, model: str | None = None) -> bool:
    """The core's no-op path, which for Anthropic also vouches that no call needs
    rewriting (`LlamaIndexCodec.skeleton`): True lets a valid history skip both passes."""
    return _api.parse(history, provider, codec_for(provider), {}, model).certainly_valid()


def repair_messages(
    messages: Sequence[Any],
    provider: str | None = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    **options: Any,
) -> Repaired:
    """Repair a list of ChatMessage for ``provider`` (default ``"portable"``) serving
    ``model`` (a model id: that family's rules apply; None: the strictest of the API).

    ``options`` are `toolpair.Policy` fields (``orphans="text"``, ``placeholder=...``).
    The result's ``.messages`` is a new list; messages no fix touched are the very same
    objects, and no input message is mutated.
    """
    history = list(messages)
    chosen = _policy(policy, options)
    target = provider or "portable"
    if _no_op(history, target, model):
        return Repaired(history, [], {}, target, CODEC.name)
    lowered: list[Fix] = []
    if provider == "anthropic":
        history, lowered = _for_anthropic(history)
    codec = codec_for(target)
    repaired = toolpair.repair(history, target, model=model, policy=chosen, format=codec)
    repaired.fixes[:0] = lowered
    return repaired


def validate_messages(
    messages: Sequence[Any], provider: str | None = None, *, model: str | None = None
) -> list[Violation]:
    """What ``provider`` (default ``"portable"``) serving ``model`` (a model id) would
    reject in this ChatMessage list."""
    history = list(messages)
    if _no_op(history, provider or "portable", model):
        return []
    found: list[Violation] = []
    if provider == "anthropic":
        _, fixes = _for_anthropic(history)
        found = [
            Violation(
                "llamaindex.call_not_sent",
                f"message {f.index}: the Anthropic converter would drop or mis-send "
                f"tool calls {', '.join(f.ids)} (legacy OpenAI shape or string arguments)",
                f.index,
                f.ids,
            )
            for f in fixes
        ]
    target = provider or "portable"
    return found + toolpair.validate(history, target, model=model, format=codec_for(target))


class LlamaIndex(Integration):
    """LlamaIndex: ``ChatMessage`` lists, with the Anthropic converter's own call
    rewriting (`repair_messages`)."""

    name = "llamaindex"

    def detect(self, model: object) -> Target:
        if model is None:
            return Target()
        return Target(provider_for(model), model_for(model))

    def codec(self, target: Target) -> LlamaIndexCodec:
        return codec_for(target.provider)

    def repair(
        self, messages: Sequence[Any], target: Target, policy: Policy | None, **options: Any
    ) -> Repaired:
        return repair_messages(messages, target.provider, model=target.model, policy=policy)


INTEGRATION = LlamaIndex()
