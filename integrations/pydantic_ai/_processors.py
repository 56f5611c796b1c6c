"""History processors: repair (persisting), trimming and tool-result clearing.

Every processor here comes in the shape pydantic-ai calls with a `RunContext`, so the
provider and the model id can be read off the run's model; `history_repairer` builds any of the four
shapes pydantic-ai accepts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest

import toolpair
from toolpair import Policy, Repaired
from toolpair.integrations._base import Guard, Integration, OnRepair, Target

from ._codec import PydanticAICodec
from ._provider import PORTABLE, model_for, provider_for
from ._signatures import SigningCodec, signature_models

Processor = (
    Callable[[list[ModelMessage]], list[ModelMessage]]
    | Callable[[list[ModelMessage]], Awaitable[list[ModelMessage]]]
    | Callable[[RunContext[Any], list[ModelMessage]], list[ModelMessage]]
    | Callable[[RunContext[Any], list[ModelMessage]], Awaitable[list[ModelMessage]]]
)


#: The profiles whose rules read Gemini thought signatures.
_GEMINI = frozenset({"gemini", "vertex"})


def codec_for(provider: str) -> PydanticAICodec:
    """The codec reading a history as pydantic-ai's model class for ``provider`` sends it."""
    if provider in _GEMINI:
        return SigningCodec(signs_first_call=True)
    return PydanticAICodec()


def validate(
    messages: Sequence[ModelMessage], provider: str = PORTABLE, *, model: str | None = None
) -> list[toolpair.Violation]:
    """What ``provider`` (serving ``model``, a model id) would reject in this history once
    pydantic-ai sends it as is."""
    return toolpair.validate(list(messages), provider, model=model, format=codec_for(provider))


def repair(
    messages: Sequence[ModelMessage],
    provider: str = PORTABLE,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    signature_models: Mapping[str, str] | None = None,
) -> Repaired:
    """Repair a ``ModelMessage`` list for ``provider`` (and ``model``, a model id whose
    family's rules apply); the input is left untouched. ``signature_models``
    (``{call id: model that made it}``; `signature_models` reads them off the history)
    puts aside a Gemini thought signature another model produced.

    Use it before ``agent.run(message_history=...)``, before `pydantic_ai.direct` calls,
    or anywhere a history is loaded. ``.messages`` is a new list in which every message
    repair did not touch is the very same object.
    """
    extra = {"signature_models": signature_models} if signature_models else {}
    return toolpair.repair(
        list(messages), provider, model=model, policy=policy, format=codec_for(provider), **extra
    )


def repair_for_request(
    messages: Sequence[ModelMessage],
    provider: str = PORTABLE,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    signature_models: Mapping[str, str] | None = None,
) -> Repaired:
    """`repair`, for a history about to be sent.

    Results in the final request whose call is gone (a processor evicted the response
    that made the calls) have never been seen by the model and are what it is waiting
    for; dropping them would send an empty or answer-less request, and an agent loop
    would call the tools again until its request limit. Under the default
    ``orphans="drop"`` those are kept as text instead, so the model still reads them.
    """
    policy = policy or Policy()
    made_by = signature_models
    repaired = repair(messages, provider, model=model, policy=policy, signature_models=made_by)
    last = len(messages) - 1
    if policy.orphans == "drop" and any(
        f.index == last and f.kind.startswith("orphan") for f in repaired.fixes
    ):
        repaired = repair(
            messages,
            provider,
            model=model,
            policy=dataclasses.replace(policy, orphans="text"),
            signature_models=made_by,
        )
    return repaired


class PydanticAI(Integration):
    """pydantic-ai: ``ModelMessage`` lists, read as the model class for the provider
    sends them, repaired as a history about to be sent (`repair_for_request`)."""

    name = "pydantic_ai"

    def detect(self, model: object) -> Target:
        if model is None:
            return Target(PORTABLE)
        return Target(provider_for(model), model_for(model))

    def codec(self, target: Target) -> PydanticAICodec:
        return codec_for(target.provider)

    def signature_models(self, messages: Sequence[Any]) -> Mapping[str, str] | None:
        # Each response names the model that produced it (ModelResponse.model_name).
        return signature_models(messages)

    def repair(
        self, messages: Sequence[Any], target: Target, policy: Policy | None, **options: Any
    ) -> Repaired:
        return repair_for_request(
            messages,
            target.provider,
            model=target.model,
            policy=policy,
            signature_models=options.get("signature_models"),
        )


INTEGRATION = PydanticAI()
#: The guard of the ready-made `repair_history`.
_DEFAULT = Guard(INTEGRATION)


def history_repairer(
    provider: str | None = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    takes_ctx: bool = True,
    is_async: bool = False,
    on_repair: OnRepair | None = None,
    strict: bool = False,
) -> Processor:
    """A repairing history processor, in the shape asked for.

    ``provider`` fixes the rules; None reads them off the run's model when the processor
    gets a `RunContext` (``takes_ctx=True``), else "portable" (valid everywhere).
    ``model`` (a model id) likewise: None reads it off the run's model; without a
    `RunContext` and without it, the strictest rules of the provider's API apply.
    ``on_repair`` gets each repaired request's `RepairEvent` (or its `Repaired`, for a
    callback annotated so); a history toolpair cannot read is kept as it is with a
    warning (``strict=True`` raises). Its output is persisted: a ``ProcessHistory`` /
    ``history_processors`` entry rewrites the run's history. Use `RepairGuard` to repair
    only what is sent.
    """

    guard = INTEGRATION.guard(provider, model, policy, on_repair, strict)

    def run(ctx: RunContext[Any] | None, messages: list[ModelMessage]) -> list[ModelMessage]:
        repaired = guard.repair(messages, ctx.model if ctx is not None else None)
        return list(messages if repaired is None else repaired.messages)

    if takes_ctx and is_async:

        async def async_with_ctx(
            ctx: RunContext[Any], messages: list[ModelMessage]
        ) -> list[ModelMessage]:
            return run(ctx, messages)

        return async_with_ctx
    if takes_ctx:

        def sync_with_ctx(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
            return run(ctx, messages)

        return sync_with_ctx
    if is_async:

        async def async_plain(messages: list[ModelMessage]) -> list[ModelMessage]:
            return run(None, messages)

        return async_plain

    def sync_plain(messages: list[ModelMessage]) -> list[ModelMessage]:
        return run(None, messages)

    return sync_plain


def repair_history(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
    """The ready-made processor: ``Agent(history_processors=[repair_history])`` on 1.x,
    ``Agent(capabilities=[ProcessHistory(repair_history)])`` on 2.x.

    Repairs for the provider and model id behind the run's model with the default
    `Policy`, and the repaired history is what the run keeps.
    """
    fixed = _DEFAULT.repair(messages, ctx.model)
    return list(messages if fixed is None else fixed.messages)


def _compaction_api(name: str) -> Callable[..., Any]:
    fn = getattr(toolpair, name, None)
    if fn is None:
        raise NotImplementedError(f"toolpair.{name} is not available in this toolpair version")
    return fn  # type: ignore[no-any-return]


def _finish(
    ctx: RunContext[Any],
    original: list[ModelMessage],
    compacted: Sequence[ModelMessage],
    provider: str | None,
    model: str | None,
    policy: Policy | None,
) -> list[ModelMessage]:
    chosen = provider or provider_for(ctx.model)
    model_id = model or model_for(ctx.model)
    out = list(compacted)
    # A trimmer may cut the request being sent; pydantic-ai rejects a history that does
    # not end with one, so the last request always survives.
    last = original[-1] if original else None
    if isinstance(last, ModelRequest) and not (out and out[-1] is last):
        out = [m for m in out if m is not last] + [last]
    return list(repair_for_request(out, chosen, model=model_id, policy=policy).messages)


def trim_history(
    max_tokens: int,
    *,
    provider: str | None = None,
    model: str | None = None,
    policy: Policy | None = None,
    token_counter: Any = "approximate",
    strategy: Literal["last", "first"] = "last",
    keep_system: bool = True,
    keep_first_user: bool = False,
) -> Callable[[RunContext[Any], list[ModelMessage]], list[ModelMessage]]:
    """A processor keeping the history under ``max_tokens`` by evicting whole
    call/result units (never half a pair), then repairing for the run's provider and
    model (``provider``/``model`` override what is read off the run's model)."""

    def trim_processor(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        trim = _compaction_api("trim")
        chosen = provider or provider_for(ctx.model)
        result = trim(
            messages,
            max_tokens,
            token_counter=token_counter,
            strategy=strategy,
            keep_system=keep_system,
            keep_first_user=keep_first_user,
            provider=chosen,
            model=model or model_for(ctx.model),
            format=codec_for(chosen),
        )
        compacted = result.messages if isinstance(result, Repaired) else result
        return _finish(ctx, messages, compacted, provider, model, policy)

    return trim_processor


def clear_tool_results(
    keep: int = 3,
    *,
    trigger: int | None = None,
    clear_at_least: int | None = None,
    exclude_tools: Sequence[str] = (),
    clear_inputs: bool = False,
    placeholder: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    policy: Policy | None = None,
) -> Callable[[RunContext[Any], list[ModelMessage]], list[ModelMessage]]:
    """A processor replacing the content of all but the last ``keep`` tool results with
    a placeholder (the pairs stay; only their bulk goes), like Anthropic's
    ``clear_tool_uses`` context edit but done before sending, for any provider."""

    def clear_processor(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        clear = _compaction_api("clear_tool_results")
        kwargs: dict[str, Any] = {
            "keep": keep,
            "trigger": trigger,
            "clear_at_least": clear_at_least,
            "exclude_tools": tuple(exclude_tools),
            "clear_inputs": clear_inputs,
            "format": PydanticAICodec(),
        }
        if placeholder is not None:
            kwargs["placeholder"] = placeholder
        result = clear(messages, **kwargs)
        compacted = result.messages if isinstance(result, Repaired) else result
        return _finish(ctx, messages, compacted, provider, model, policy)

    return clear_processor
