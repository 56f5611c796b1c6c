"""`pydantic_ai.direct` with repair: that path runs none of pydantic-ai's own history
cleaning, so a broken history reaches the provider exactly as stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import direct, models
from pydantic_ai.messages import ModelMessage, ModelResponse

from toolpair import Policy

from ._processors import repair_for_request
from ._provider import provider_for


def _resolve(model: models.Model | str) -> models.Model:
    return model if isinstance(model, models.Model) else models.infer_model(model)


def repair_for_model(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    policy: Policy | None = None,
) -> list[ModelMessage]:
    """``messages`` repaired for the provider behind ``model`` (a new list)."""
    chosen = provider or provider_for(_resolve(model))
    return list(repair_for_request(messages, chosen, policy=policy).messages)


async def model_request(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    policy: Policy | None = None,
    **kwargs: Any,
) -> ModelResponse:
    """`pydantic_ai.direct.model_request` on the repaired history; ``kwargs`` are
    passed through (``model_settings``, ``model_request_parameters``, ``instrument``)."""
    resolved = _resolve(model)
    fixed = repair_for_model(resolved, messages, provider=provider, policy=policy)
    return await direct.model_request(resolved, fixed, **kwargs)


def model_request_sync(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    policy: Policy | None = None,
    **kwargs: Any,
) -> ModelResponse:
    """`pydantic_ai.direct.model_request_sync` on the repaired history."""
    resolved = _resolve(model)
    fixed = repair_for_model(resolved, messages, provider=provider, policy=policy)
    return direct.model_request_sync(resolved, fixed, **kwargs)
