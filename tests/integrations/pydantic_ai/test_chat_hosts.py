"""Moonshot (Kimi) and Zhipu (GLM) through pydantic-ai's OpenAI chat class: by its
provider, or by the base URL it is pointed at."""

from __future__ import annotations

import pytest
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from toolpair.integrations.pydantic_ai import provider_for
from toolpair.integrations.pydantic_ai._provider import model_for


def test_kimi_and_glm_are_their_hosts() -> None:
    MoonshotAIProvider = pytest.importorskip("pydantic_ai.providers.moonshotai").MoonshotAIProvider
    ZaiProvider = pytest.importorskip("pydantic_ai.providers.zai").ZaiProvider
    kimi = OpenAIChatModel("kimi-k2.6", provider=MoonshotAIProvider(api_key="x"))
    assert (provider_for(kimi), model_for(kimi)) == ("moonshot", "kimi-k2.6")
    glm = OpenAIChatModel("glm-5.2", provider=ZaiProvider(api_key="x"))
    assert (provider_for(glm), model_for(glm)) == ("zhipu", "glm-5.2")
    for url, host in (
        ("https://api.moonshot.cn/v1", "moonshot"),
        ("https://open.bigmodel.cn/api/paas/v4", "zhipu"),
        ("https://gateway.example/v1", "openai"),
    ):
        m = OpenAIChatModel("m", provider=OpenAIProvider(base_url=url, api_key="x"))
        assert provider_for(m) == host, url
