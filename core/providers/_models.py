"""Model ids as users write them, placed in the families whose rules differ
(docs/rules.md). An id that cannot be placed gives None: the caller keeps the
API's strict profile, never a lenient one."""

from __future__ import annotations

import re

#: Bedrock's cross-region inference prefixes.
_GEO = ("us-gov.", "us.", "eu.", "apac.", "jp.", "au.", "ca.", "global.", "sa.", "amer.")
_CLAUDE = re.compile(r"claude-(?:(?:instant|sonnet|opus|haiku|fable)-)?v?(\d+)")


def bedrock_model(model: str) -> str | None:
    """The foundation model id inside a Bedrock model id, inference profile or ARN
    (``us.anthropic.claude-3-5-haiku-20241022-v1:0`` -> ``anthropic.claude-3-5-haiku-
    20241022-v1:0``); None for an opaque ARN (an application inference profile, a
    provisioned or custom model) that names no model."""
    m = model.strip()
    # Router prefixes (``bedrock/``, ``bedrock/converse/``) name no model.
    m = m[m.index("arn:") :] if "arn:" in m else m.rsplit("/", 1)[-1]
    if m.startswith("arn:"):
        _, _, rest = m.partition("/")
        kind = m.split(":", 5)[-1].split("/", 1)[0]
        if kind not in ("foundation-model", "inference-profile") or not rest:
            return None
        m = rest
    low = m.lower()
    for geo in _GEO:
        if low.startswith(geo):
            return m[len(geo) :]
    return m


def bedrock_family(model: str) -> str | None:
    """``claude-3`` (Claude 3.x and older), ``claude-4`` (4 and later), ``nova``,
    ``llama``, ``mistral``, ``ministral``, ``kimi``; None for any other or unplaceable id."""
    found = bedrock_model(model)
    if found is None or "." not in found:
        return None
    vendor, _, name = found.lower().partition(".")
    if vendor == "anthropic":
        m = _CLAUDE.match(name)
        if m is None:
            return None
        return "claude-4" if int(m.group(1)) >= 4 else "claude-3"
    if vendor == "amazon" and name.startswith("nova"):
        return "nova"
    if vendor == "meta" and name.startswith("llama"):
        return "llama"
    if vendor == "mistral":
        return "ministral" if name.startswith("ministral") else "mistral"
    if vendor in ("moonshot", "moonshotai"):
        return "kimi"
    return None


def gemini_family(model: str) -> str | None:
    """``gemini-3`` (signatures required; not the image model, which is exempt),
    ``gemini-2.5`` (not held to signatures); None otherwise. Accepts ``models/...``,
    ``publishers/google/models/...`` and ``google/...`` forms."""
    m = model.lower().rsplit("/", 1)[-1]
    if m.startswith("gemini-3"):
        return None if "image" in m else "gemini-3"
    if m.startswith("gemini-2.5"):
        return "gemini-2.5"
    return None


_GPT = re.compile(r"(gpt-\d+|o\d+)")
_GEMINI = re.compile(r"gemini-(\d+(?:\.\d+)?)")


def model_families(provider: str, model: str) -> tuple[str, ...]:
    """The families a named model belongs to, the vendor's first, as the evidence in
    `toolpair.rules` names them (``("claude", "claude-4")``, ``("gemini", "gemini-2.5")``,
    ``("cohere",)``); empty where not even the vendor can be told. Placing a model here
    decides only which evidence speaks for it, never a profile."""
    if provider == "portable":
        return ()
    low = model.strip().lower()
    if provider == "bedrock":
        found = bedrock_model(model)
        if found is None or "." not in found:
            return ()
        vendor = found.lower().split(".", 1)[0]
        family = bedrock_family(model)
        vendor = {"anthropic": "claude", "amazon": "nova" if family == "nova" else "amazon"}.get(
            vendor, "kimi" if vendor in ("moonshot", "moonshotai") else vendor
        )
        if family == "ministral":
            return ("mistral", "ministral")
        return tuple(dict.fromkeys(x for x in (vendor, family) if x))
    name = low.rsplit("/", 1)[-1]
    if provider == "anthropic":
        m = _CLAUDE.match(name)
        if m is None:
            return ("claude",) if "claude" in name else ()
        return ("claude", "claude-4" if int(m.group(1)) >= 4 else "claude-3")
    if provider in ("gemini", "vertex"):
        m = _GEMINI.match(name)
        if m is None:
            return ("gemini",) if name.startswith("gemini") else ()
        major = m.group(1)
        return ("gemini", f"gemini-{major if major in ('2.0', '2.5') else major.split('.')[0]}")
    if provider in ("openai", "openai-responses"):
        m = _GPT.match(name.removeprefix("openai."))
        return ("openai", m.group(1)) if m else ()
    if provider == "mistral":
        return ("mistral",)
    if provider == "moonshot":
        return ("kimi",) if "kimi" in name else ()
    if provider == "zhipu":
        return ("glm",) if name.startswith("glm") else ()
    if provider in ("deepseek", "deepseek-responses"):
        v4 = name.startswith(("deepseek-v4", "deepseek-reasoner"))
        return ("deepseek", "deepseek-v4") if v4 else ("deepseek",)
    return ()
