"""Which provider a client really reaches, from what every integration can read off it:
the host of its base URL, or the provider segment of a LiteLLM model string.

Each integration still reads its framework's own attributes (which field holds the base
URL, which class speaks the Responses API); what they share is only the reading of a
URL's host and the tables here, so a host or a LiteLLM provider toolpair learns about is
learnt once for every framework. Stdlib only: no framework is imported here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

_T = TypeVar("_T")

__all__ = [
    "CHAT_HOSTS",
    "DEEPSEEK",
    "DEEPSEEK_DOMAIN",
    "HOSTS",
    "LITELLM_PROVIDERS",
    "at_deepseek",
    "at_domain",
    "by_class",
    "by_model_name",
    "host_of",
    "litellm_target",
    "provider_at",
]

#: The domain of DeepSeek's own OpenAI-compatible API.
DEEPSEEK_DOMAIN = "deepseek.com"

#: The host profile an OpenAI-format client (Chat Completions or Responses) speaks to
#: when its base URL is DeepSeek's: DeepSeek's rules differ from OpenAI's.
DEEPSEEK = {"openai": "deepseek", "openai-responses": "deepseek-responses"}

#: OpenAI-compatible Chat Completions hosts with rules of their own (a client of
#: OpenAI's chat class pointed at one is held to them).
CHAT_HOSTS = frozenset({"moonshot", "zhipu"})

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
    # Moonshot (Kimi) and Zhipu (GLM) serve Chat Completions only.
    ("api.moonshot.ai", "moonshot", "portable"),
    ("api.moonshot.cn", "moonshot", "portable"),
    ("open.bigmodel.cn", "zhipu", "portable"),
    ("api.z.ai", "zhipu", "portable"),
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
    "moonshot": "moonshot",
    "zai": "zhipu",
}

#: Provider segments any-llm (and a few LiteLLM aliases) use for the same APIs.
_ALIASES: dict[str, str] = {
    "claude": "anthropic",
    "google": "gemini",
    "vertexai": "vertex",
    "mistralai": "mistral",
    "codestral": "mistral",
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


def by_model_name(name: str, *, responses: bool = False) -> str:
    """The provider a bare model name belongs to, as LiteLLM infers it for a model string
    without a ``provider/`` segment; "portable" for a name it cannot place."""
    low = name.lower()
    if low.startswith(("claude", "anthropic.")):
        return "anthropic"
    if low.startswith("gemini"):
        return "gemini"
    if low.startswith(("mistral", "ministral", "magistral", "codestral", "devstral")):
        return "mistral"
    if low.startswith("deepseek"):
        return "deepseek"
    if low.startswith(("gpt", "o1", "o3", "o4", "chatgpt", "codex", "computer-use")):
        return "openai-responses" if responses else "openai"
    return "portable"


def litellm_target(model: str) -> tuple[str, str | None]:
    """``(toolpair provider, model id)`` for a LiteLLM (or any-llm) model string: the one
    reading of LiteLLM's routing every integration that hands a model string to LiteLLM
    uses. LiteLLM sends a Claude model on Vertex (``vertex_ai/claude-...``) in Anthropic's
    own format to Anthropic's API on Vertex, so it is held to Anthropic's rules, as the
    LiteLLM guardrail holds it; a bare name is placed the way LiteLLM infers it."""
    segment, _, rest = model.partition("/")
    if not rest:
        return by_model_name(segment), segment
    key = segment.lower()
    provider = LITELLM_PROVIDERS.get(key) or _ALIASES.get(key) or "portable"
    if provider == "bedrock":
        return provider, rest
    model_id = rest.rpartition("/")[2]
    if provider == "vertex" and "claude" in model_id.lower():
        return "anthropic", model_id
    return provider, model_id


def _mro_names(obj: object) -> Iterator[str]:
    for klass in type(obj).__mro__:
        yield klass.__name__


def by_class(
    obj: object, table: Mapping[str, _T], unwrap: tuple[str, ...] = ()
) -> tuple[object, _T] | None:
    """The first entry of ``table`` (class name -> value) along ``obj``'s MRO, so a user's
    subclass is judged as its base and no SDK is imported just to ask; when ``obj``'s
    classes are not in it, the object held in its first ``unwrap`` attribute is tried
    (wrappers: instrumentation, a toolpair wrapper). Returns ``(the matched object,
    value)``, None when nothing matches. An attribute that raises counts as absent:
    detection never fails a request."""
    seen: set[int] = set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        for name in _mro_names(obj):
            if name in table:
                return obj, table[name]
        inner: object = None
        for attr in unwrap:
            try:
                inner = getattr(obj, attr, None)
            except Exception:
                inner = None
            if inner is not None:
                break
        obj = inner
    return None
