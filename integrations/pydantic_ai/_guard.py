"""Request-only repair: what goes to the model is repaired, the run's history is not."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse

from toolpair import Policy, Repaired
from toolpair.integrations._base import Guard, OnRepair

from ._processors import INTEGRATION

#: 2.x runs ``prepare_model_request`` once per attempt with the model that will serve
#: it; 1.x has no such hook, and there ``wrap_model_request`` is the last point before
#: the model class sees the messages.
_HAS_PREPARE = hasattr(AbstractCapability, "prepare_model_request")


@dataclass
class RepairGuard(AbstractCapability[Any]):
    """Repairs the messages of each model request for the model that serves it, and
    writes nothing back: the run's stored history (``result.all_messages()``) keeps
    exactly what it had. ``Agent(capabilities=[RepairGuard()])``.

    With a `FallbackModel` each attempt is repaired for the model actually tried.
    ``provider`` and ``model`` (a model id) override what is read off that model.
    ``on_repair`` receives each repaired request's `RepairEvent` (or its `Repaired`,
    for a callback annotated so); a history toolpair cannot read is sent as it is with a
    warning, unless ``strict``. The request pydantic-ai builds is not a wire body the
    guard sees, so nothing is recorded for the corpus here.
    """

    provider: str | None = None
    model: str | None = None
    policy: Policy | None = None
    on_repair: OnRepair | None = None
    strict: bool = False
    guard: Guard = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.guard = INTEGRATION.guard(
            self.provider, self.model, self.policy, self.on_repair, self.strict
        )

    @property
    def last(self) -> Repaired | None:
        """The report of the latest request (None before the first)."""
        return self.guard.last

    def _repair(self, model: Any, messages: Sequence[ModelMessage]) -> list[ModelMessage] | None:
        repaired = self.guard.repair(messages, model)
        if repaired is None or not repaired.fixes:
            return None
        return list(repaired.messages)

    async def prepare_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        fixed = self._repair(request_context.model, request_context.messages)
        if fixed is not None:
            request_context.messages = fixed
        return request_context

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, handler: Any
    ) -> ModelResponse:
        if not _HAS_PREPARE:
            fixed = self._repair(request_context.model, request_context.messages)
            if fixed is not None:
                request_context = dataclasses.replace(request_context, messages=fixed)
        response: ModelResponse = await handler(request_context)
        return response
