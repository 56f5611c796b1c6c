"""Moonshot (Kimi) and Zhipu (GLM) through ChatOpenAI pointed at their APIs."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from toolpair.integrations.langchain import provider_for


def test_chat_openai_at_kimi_or_glm_is_that_host() -> None:
    for url, host in (
        ("https://api.moonshot.ai/v1", "moonshot"),
        ("https://api.moonshot.cn/v1", "moonshot"),
        ("https://api.z.ai/api/paas/v4", "zhipu"),
        ("https://open.bigmodel.cn/api/paas/v4", "zhipu"),
        ("https://gateway.example/v1", "openai"),
    ):
        model = ChatOpenAI(model="m", api_key="x", base_url=url)  # type: ignore[arg-type]
        assert provider_for(model) == host, url
