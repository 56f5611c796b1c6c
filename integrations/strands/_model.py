"""`ToolpairModel`: a Strands ``Model`` that repairs the messages of every request
before its inner model formats them, and writes nothing back to the agent."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterable, Sequence
from typing import Any

from strands.models.model import Model

import toolpair
from toolpair import Fix, Policy, Repaired
from toolpair.integrations._base import Integration, OnRepair, Target, status_of

from ._detect import target_of

#: Strands' messages are Converse-shaped for every model class.
FORMAT = "bedrock"


#: Strands model classes that send OpenAI Chat messages. Up to at least 1.0 their
#: formatter emits a user turn's text *before* its tool messages, so a turn holding
#: results and text reaches OpenAI with the results parted from their call.
_CHAT_CLASSES = frozenset({"OpenAIModel", "LiteLLMModel"})


def sends_chat(model: Any) -> bool:
    return any(k.__name__ in _CHAT_CLASSES for k in type(model).__mro__)


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and "toolResult" in block


def results_first(messages: list[Any]) -> tuple[list[Any], list[Fix]]:
    """Each user turn holding results and other blocks split into a turn of its results
    and a turn of the rest, so no formatter can put the text between call and result.
    Turns that need no split are the same objects; each split is a ``results_first`` fix
    (at its index in the input)."""
    out: list[Any] = []
    fixes: list[Fix] = []
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list) and m.get("role") == "user":
            res = [b for b in content if _is_result(b)]
            rest = [b for b in content if not _is_result(b)]
            if res and rest:
                out.append({**m, "content": res})
                out.append({"role": "user", "content": rest})
                ids = tuple(str(b["toolResult"].get("toolUseId", "")) for b in res)
                fixes.append(Fix("results_first", i, ids, "results split from the turn's text"))
                continue
        out.append(m)
    return out, fixes


def repair_messages(
    messages: Sequence[Any],
    provider: str,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    chat: bool = False,
) -> Repaired:
    """A copy of Strands ``messages`` that ``provider`` accepts (`toolpair.repair`).
    ``chat``: the model class sends OpenAI Chat messages (`results_first` applies)."""
    result = toolpair.repair(list(messages), provider, model=model, policy=policy, format=FORMAT)
    if chat:
        split, fixes = results_first(list(result.messages))
        if fixes:
            result.messages = split
            result.fixes.extend(fixes)
    return result


class Strands(Integration):
    """Strands Agents: its messages are Converse-shaped for every model class."""

    name = "strands"

    def detect(self, model: object) -> Target:
        return target_of(model)

    def codec(self, target: Target) -> str:
        return FORMAT

    def repair(
        self, messages: Sequence[Any], target: Target, policy: Policy | None, **options: Any
    ) -> Repaired:
        return repair_messages(
            messages, target.provider, model=target.model, policy=policy, **options
        )


INTEGRATION = Strands()


class ToolpairModel(Model):
    """Wraps any Strands model; each ``stream`` and ``structured_output`` call sends a
    repaired copy of its messages. The provider and model id are read off the inner
    model's class and config unless given. ``last_repair`` is the latest report;
    ``on_repair`` receives each repaired request's `RepairEvent` (or its
    `Repaired`, for a callback annotated so). ``record_dir`` records the requests where
    toolpair and the provider disagreed (the messages are Converse-shaped, the provider's
    answer is the inner model's error or its reply)."""

    #: The wrapped model.
    inner: Any

    def __init__(
        self,
        inner: Model,
        *,
        provider: str | None = None,
        model: str | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if isinstance(inner, ToolpairModel):
            # Wrapping twice would only repair twice; the outer options win.
            inner = inner.inner
        self.inner = inner
        self.guard = INTEGRATION.guard(provider, model, policy, on_repair, strict, record_dir)

    @property
    def last_repair(self) -> Repaired | None:
        return self.guard.last

    def _target(self) -> tuple[str, str | None]:
        target = self.guard.target(self.inner)
        return target.provider, target.model

    def _repair(self, messages: Sequence[Any]) -> tuple[list[Any], Repaired | None]:
        result = self.guard.repair(messages, self.inner, chat=sends_chat(self.inner))
        return (list(messages) if result is None else list(result.messages)), result

    def repair(self, messages: Sequence[Any]) -> list[Any]:
        return self._repair(messages)[0]

    def _observe(self, sent: list[Any], result: Repaired | None, exc: BaseException | None) -> None:
        if self.guard.recorder is None:
            return
        status = 200 if exc is None else status_of(exc)
        if status is not None:
            self.guard.observe(
                {"messages": sent}, result, status=status, error=exc, model=self.inner
            )

    # --- the Model interface, delegated -------------------------------------------

    def update_config(self, **model_config: Any) -> None:
        self.inner.update_config(**model_config)

    def get_config(self) -> Any:
        return self.inner.get_config()

    @property
    def config(self) -> Any:
        return getattr(self.inner, "config", None)

    @property
    def stateful(self) -> bool:
        return bool(getattr(self.inner, "stateful", False))

    @property
    def context_window_limit(self) -> int | None:
        return getattr(self.inner, "context_window_limit", None)

    @property
    def _supports_structured_output(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "_supports_structured_output", False))

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks (a provider's own helpers).
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def count_tokens(self, messages: Any, *args: Any, **kwargs: Any) -> int:
        return await self.inner.count_tokens(messages, *args, **kwargs)  # type: ignore[attr-defined,no-any-return]

    async def structured_output(  # type: ignore[override]
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        fixed, result = self._repair(prompt)
        try:
            async for event in self.inner.structured_output(
                output_model, fixed, system_prompt=system_prompt, **kwargs
            ):
                yield event
        except Exception as e:
            self._observe(fixed, result, e)
            raise
        self._observe(fixed, result, None)

    async def stream(  # type: ignore[override]
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[Any]:
        fixed, result = self._repair(messages)
        try:
            async for event in self.inner.stream(fixed, tool_specs, system_prompt, **kwargs):
                yield event
        except Exception as e:
            self._observe(fixed, result, e)
            raise
        self._observe(fixed, result, None)
