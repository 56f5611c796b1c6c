"""Agent middleware for LangChain 1.x ``create_agent``: repairs (and optionally trims)
only what the model is sent, through ``wrap_model_call``; the graph state is never
written. Needs the ``langchain`` package."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest

from toolpair import Policy
from toolpair.integrations._base import Guard, OnRepair, Target

from .._langchain_messages import ProviderLike
from ._repair import INTEGRATION, model_for, provider_for
from ._trim import trim_messages

__all__ = ["ToolpairMiddleware"]


class ToolpairMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """Hand the model a history its provider accepts.

    ``provider``: a provider name or chat model; by default the request's own model.
    ``model``: the model id whose family's rules apply; by default the one that chat
    model sends.
    ``trim``: keyword arguments for `trim_messages` (``max_tokens``, ``token_counter``,
    ...), applied before the repair; the system prompt is kept and counted.
    ``policy`` and ``overrides``: as for `repair_messages`.
    ``on_repair``: receives each repaired request's `RepairEvent` (or its `Repaired`, for
    a callback annotated so). ``strict``: raise on a history toolpair cannot read instead
    of sending it as it is. The request goes on to the model through ``handler``, which
    does not hand back the provider's HTTP answer, so nothing is recorded for the corpus.
    """

    def __init__(
        self,
        provider: ProviderLike = None,
        *,
        model: str | None = None,
        trim: Mapping[str, Any] | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        **overrides: Any,
    ) -> None:
        super().__init__()
        self.provider = provider
        self.model = model
        self.trim = dict(trim) if trim else None
        self.policy = policy
        self.overrides = overrides
        self.guard = Guard(INTEGRATION, policy=policy, on_repair=on_repair, strict=strict)
        #: The fixes of the latest request (empty when the history was already valid).
        self.last_fixes: list[Any] = []

    def _prepare(self, request: ModelRequest) -> ModelRequest:  # type: ignore[type-arg]
        messages: list[Any] = list(request.messages)
        if self.trim is not None:
            system = request.system_message
            head = [system] if system is not None else []
            options = {"include_system": system is not None, **self.trim}
            trimmed = trim_messages([*head, *messages], **options)
            messages = trimmed[len(head) :] if head and trimmed[:1] == head else trimmed
        source = self.provider if self.provider is not None else request.model
        model = self.model or model_for(source) or model_for(request.model)
        # The chat model itself, not its provider name: the codec reads what its
        # converter sends (invalid calls, Gemini signatures) off the model.
        self.guard.policy = self.policy
        target = Target(provider_for(source), model)
        result = self.guard.repair(messages, target=target, source=source, **self.overrides)
        self.last_fixes = list(result.fixes) if result is not None else []
        if result is None:
            if len(messages) == len(request.messages):
                return request
            return request.override(messages=messages)
        if not result.changed and len(messages) == len(request.messages):
            return request
        return request.override(messages=list(result.messages))

    def wrap_model_call(
        self,
        request: ModelRequest,  # type: ignore[type-arg]
        handler: Callable[[ModelRequest], Any],  # type: ignore[type-arg]
    ) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,  # type: ignore[type-arg]
        handler: Callable[[ModelRequest], Awaitable[Any]],  # type: ignore[type-arg]
    ) -> Any:
        return await handler(self._prepare(request))
