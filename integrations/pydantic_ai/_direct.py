"""`pydantic_ai.direct` with repair: that path runs none of pydantic-ai's own history
cleaning, so a broken history reaches the provider exactly as stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import direct, models
from pydantic_ai.messages import ModelMessage, ModelResponse

from toolpair import Policy

from ._processors import repair_for_request
from ._provider import model_for, provider_for


def _resolve(model: models.Model | str) -> models.Model:
    return model if isinstance(model, models.Model) else models.infer_model(model)


def repair_for_model(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    model_id: str | None = None,
    policy: Policy | None = None,
) -> list[ModelMessage]:
    """``messages`` repaired for the provider and model id behind ``model`` (a new
    list); ``provider`` and ``model_id`` override them."""
    resolved = _resolve(model)
    chosen = provider or provider_for(resolved)
    fixed = repair_for_request(
        messages, chosen, model=model_id or model_for(resolved), policy=policy
    )
    return list(fixed.messages)


async def model_request(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    model_id: str | None = None,
    policy: Policy | None = None,
    **kwargs: Any,
) -> ModelResponse:
    """`pydantic_ai.direct.model_request` on the repaired history; ``kwargs`` are
    passed through (``model_settings``, ``model_request_parameters``, ``instrument``)."""
    resolved = _resolve(model)
    fixed = repair_for_model(
        resolved, messages, provider=provider, model_id=model_id, policy=policy
    )
    return await direct.model_request(resolved, fixed, **kwargs)


def model_request_sync(
    model: models.Model | str,
    messages: Sequence[ModelMessage],
    *,
    provider: str | None = None,
    model_id: str | None = None,
    policy: Policy | None = None,
    **kwargs: Any,
) -> ModelResponse:
    """`pydantic_ai.direct.model_request_sync` on the repaired history."""
    resolved = _resolve(model)
    fixed = repair_for_model(
        resolved, messages, provider=provider, model_id=model_id, policy=policy
    )
    return direct.model_request_sync(resolved, fixed, **kwargs)
