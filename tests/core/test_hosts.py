"""The host and LiteLLM tables every integration reads a client's provider from
(``toolpair.integrations._hosts``): stdlib only, so tested here, with no framework."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import toolpair
from toolpair.integrations._hosts import (
    DEEPSEEK,
    HOSTS,
    LITELLM_PROVIDERS,
    at_deepseek,
    at_domain,
    host_of,
    provider_at,
)


class _URL:
    """A URL object as SDK clients keep one (httpx.URL): a string only through str()."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://API.DeepSeek.com/v1", "api.deepseek.com"),
        ("http://localhost:4000", "localhost"),
        (_URL("https://api.openai.com/v1/"), "api.openai.com"),
        (None, ""),
        ("", ""),
        ("not a url", ""),
        ("http://[::1", ""),  # urlsplit raises ValueError: detection must not
    ],
)
def test_host_of(url: object, host: str) -> None:
    assert host_of(url) == host


@pytest.mark.parametrize(
    ("url", "on_deepseek"),
    [
        ("https://api.deepseek.com", True),
        ("https://deepseek.com/v1", True),
        (_URL("https://api.deepseek.com/beta"), True),
        ("https://notdeepseek.com", False),
        ("https://deepseek.com.example.org", False),
        ("https://openrouter.ai/api/v1", False),
        (None, False),
    ],
)
def test_at_deepseek_is_deepseek_s_own_domain_only(url: object, on_deepseek: bool) -> None:
    assert at_deepseek(url) is on_deepseek
    assert at_domain(url, "deepseek.com") is on_deepseek


@pytest.mark.parametrize(
    ("url", "chat", "responses"),
    [
        ("https://api.deepseek.com", "deepseek", "deepseek-responses"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "gemini", "portable"),
        ("https://aiplatform.googleapis.com/v1", "vertex", "portable"),
        # Vertex's regional endpoints put the region before the name, not as a subdomain.
        ("https://us-central1-aiplatform.googleapis.com/v1beta1", "vertex", "portable"),
        ("https://europe-west4-aiplatform.googleapis.com", "vertex", "portable"),
        ("https://notaiplatform.googleapis.com", None, None),
        ("https://api.anthropic.com/v1/", "anthropic", "portable"),
        ("https://api.mistral.ai/v1", "mistral", "portable"),
        ("https://api.openai.com/v1", "openai", "openai-responses"),
        ("https://openrouter.ai/api/v1", None, None),
        ("http://localhost:11434/v1", None, None),
        (None, None, None),
    ],
)
def test_provider_at(url: object, chat: str | None, responses: str | None) -> None:
    assert provider_at(url, responses=False) == chat
    assert provider_at(url, responses=True) == responses


def test_every_profile_named_is_one_toolpair_has() -> None:
    named = {*DEEPSEEK, *DEEPSEEK.values(), *LITELLM_PROVIDERS.values()}
    named |= {p for _, chat, resp in HOSTS for p in (chat, resp)}
    assert sorted(named - set(toolpair.PROVIDERS)) == []


def test_the_deepseek_profiles_are_the_deepseek_host_s() -> None:
    url = "https://api.deepseek.com"
    assert {
        "openai": provider_at(url, responses=False),
        "openai-responses": provider_at(url, responses=True),
    } == DEEPSEEK


def test_importing_it_pulls_in_no_framework() -> None:
    code = "import json, sys, toolpair.integrations._hosts; print(json.dumps(list(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert [m for m in ("langchain_core", "pydantic_ai", "agno", "openai") if m in loaded] == []
