"""Which provider a client really reaches, from what every integration can read off it:
the host of its base URL, or the provider segment of a LiteLLM model string.

Each integration still reads its framework's own attributes (which field holds the base
URL, which class speaks the Responses API); what they share is only the reading of a
URL's host and the tables here, so a host or a LiteLLM provider toolpair learns about is
learnt once for every framework. Stdlib only: no framework is imported here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = [
    "DEEPSEEK",
    "DEEPSEEK_DOMAIN",
    "HOSTS",
    "LITELLM_PROVIDERS",
    "at_deepseek",
    "at_domain",
    "host_of",
    "provider_at",
]

#: The domain of DeepSeek's own OpenAI-compatible API.
DEEPSEEK_DOMAIN = "deepseek.com"

#: The host profile an OpenAI-format client (Chat Completions or Responses) speaks to
#: when its base URL is DeepSeek's: DeepSeek's rules differ from OpenAI's.
DEEPSEEK = {"openai": "deepseek", "openai-responses": "deepseek-responses"}

#: Domain -> (provider for a Chat Completions client, provider for a Responses client)
#: pointed at it. "portable" where the host has no Responses API of its own that
#: toolpair has rules for.
HOSTS: tuple[tuple[str, str, str], ...] = (
    (DEEPSEEK_DOMAIN, "deepseek", "deepseek-responses"),
    ("generativelanguage.googleapis.com", "gemini", "portable"),
    ("aiplatform.googleapis.com", "vertex", "portable"),
    ("anthropic.com", "anthropic", "portable"),
    ("mistral.ai", "mistral", "portable"),
    ("api.openai.com", "openai", "openai-responses"),
)

#: LiteLLM provider (the ``provider/`` segment of a model string, or
#: ``custom_llm_provider``) -> the toolpair rules of the API it reaches with
#: OpenAI-format messages. Providers not listed have no rules of their own here.
LITELLM_PROVIDERS: dict[str, str] = {
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "bedrock_converse": "bedrock",
    "gemini": "gemini",
    "vertex_ai": "vertex",
    "vertex_ai_beta": "vertex",
    "openai": "openai",
    "azure": "openai",
    "mistral": "mistral",
    "deepseek": "deepseek",
}


def host_of(url: object) -> str:
    """The lower-case host name of ``url`` (a string, or a URL object such as the
    ``httpx.URL`` an SDK client keeps); "" for None or a URL that does not parse:
    detection never fails a request."""
    if url is None:
        return ""
    try:
        return (urlsplit(str(url)).hostname or "").lower()
    except ValueError:
        return ""


#: Domains whose regional hosts are ``<region>-<domain>`` rather than subdomains
#: (``us-central1-aiplatform.googleapis.com``).
_REGIONAL = frozenset({"aiplatform.googleapis.com"})


def at_domain(url: object, domain: str) -> bool:
    """Whether ``url``'s host is ``domain``, one of its subdomains, or (for Vertex) one
    of its regional hosts."""
    host = host_of(url)
    if host == domain or host.endswith("." + domain):
        return True
    if domain in _REGIONAL and host.endswith("-" + domain):
        region = host[: -len(domain) - 1]
        return bool(region) and "." not in region
    return False


def at_deepseek(url: object) -> bool:
    """Whether ``url`` is on DeepSeek's own API (a gateway in front of it is not)."""
    return at_domain(url, DEEPSEEK_DOMAIN)


def provider_at(url: object, *, responses: bool) -> str | None:
    """The provider a client pointed at ``url`` reaches (``responses``: it speaks the
    Responses API), or None for a host not in `HOSTS` (a gateway, a local server)."""
    if not host_of(url):
        return None
    for domain, chat, resp in HOSTS:
        if at_domain(url, domain):
            return resp if responses else chat
    return None
