"""LiteLLM deployments in front of the fake upstreams on loopback, and the guardrail
noting each call type its hook runs for."""

from __future__ import annotations

from typing import Any

from toolpair.integrations.litellm import ToolpairGuardrail


def deployment(name: str, model: str, api_base: str, api_key: str = "sk-fake") -> dict[str, Any]:
    """One entry of a Router's ``model_list``."""
    return {
        "model_name": name,
        "litellm_params": {"model": model, "api_base": api_base, "api_key": api_key},
    }


class Counting(ToolpairGuardrail):
    """ToolpairGuardrail, noting in ``seen`` the call type of every hook run."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        self.seen.append(str(getattr(call_type, "value", call_type)))
        return await super().async_pre_call_deployment_hook(kwargs, call_type)
