"""Judging request bodies on the wire: the shared engine of the gateway integrations
(`toolpair proxy`, the ASGI middleware, the LiteLLM guardrail).

A request is routed by its path to the wire format it is in and the hosted API whose
rules apply (an OpenAI-compatible endpoint gets OpenAI's rules, an Anthropic-compatible
one Anthropic's), then, by mode:

- ``repair``: a valid body passes byte-identical; a broken one is repaired and
  re-encoded.
- ``reject``: a broken body is answered with a 400 in that API's own error envelope,
  worded as that API words it; nothing is sent upstream.
- ``observe``: the body passes unchanged; what the API would refuse is logged.

Only the request is judged: responses (and their event streams) are never read.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpair import _api
from toolpair._model import Fix, InvalidHistory, Violation

logger = logging.getLogger("toolpair")

Mode = Literal["repair", "reject", "observe"]
MODES: tuple[Mode, ...] = ("repair", "reject", "observe")

#: The hosted API whose rules a wire format gets when nothing else is said: an endpoint
#: that copies a format (vLLM, Ollama, LM Studio, any compatible ``api_base``) checks
#: nothing itself, and the hosted API is where its traffic goes on a failover.
RULES_OF_FORMAT: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
}

_GEMINI = re.compile(r"/models/([^/:]+):(?:stream)?[gG]enerateContent$")


@dataclass(frozen=True, slots=True)
class Route:
    """What a request path is: its wire format, and the model when the path names it."""

    format: str
    model: str | None = None


def route(path: str) -> Route | None:
    """The wire format a POST to ``path`` carries, or None for a path not judged.

    Paths are matched by their end, so any prefix (``/v1``, ``/openai/v1``, a gateway's
    own mount point) works.
    """
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return Route("openai")
    if path.endswith("/messages"):
        return Route("anthropic")
    if path.endswith("/responses"):
        return Route("openai-responses")
    m = _GEMINI.search(path)
    if m:
        return Route("gemini", m.group(1))
    return None


@dataclass(slots=True)
class Verdict:
    """What to do with one request.

    ``action`` is ``pass`` (send ``body``, which is the very bytes received when nothing
    changed), ``reject`` (answer ``status`` with ``body``, an error envelope, and send
    nothing upstream). ``changed`` says whether ``body`` differs from the request's.
    """

    action: Literal["pass", "reject"]
    body: bytes
    format: str
    provider: str
    status: int = 200
    changed: bool = False
    fixes: list[Fix] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)


def error_envelope(format: str, message: str, status: int = 400) -> dict[str, Any]:
    """An error body in the shape the API of ``format`` answers a bad request with."""
    if format == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if format == "gemini":
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}
    param = "input" if format == "openai-responses" else "messages"
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": None,
        }
    }


def encode(body: Any) -> bytes:
    """A JSON body as sent upstream: compact, UTF-8."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def judge(
    raw: bytes,
    path: str,
    mode: Mode = "repair",
    *,
    provider: str | None = None,
) -> Verdict | None:
    """The verdict on a POST body sent to ``path``, or None where toolpair has nothing
    to say (a path it does not judge, a body that is not a JSON request with a message
    list): such a request goes on untouched.

    ``provider`` names the rules (``portable``, ``deepseek``...); by default, those of
    the hosted API the path's format belongs to.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    r = route(path)
    if r is None:
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    return judge_body(body, raw, r.format, mode, provider=provider, model=r.model, where=path)


def judge_body(
    body: Mapping[str, Any],
    raw: bytes,
    format: str,
    mode: Mode,
    *,
    provider: str | None = None,
    model: str | None = None,
    where: str = "",
) -> Verdict | None:
    """`judge` for a body already parsed (``raw`` is what is sent when it is valid)."""
    rules = provider or RULES_OF_FORMAT.get(format, format)
    try:
        if mode == "repair":
            rep = _api.repair(body, rules, model=model, format=format)
        else:
            violations = _api.validate(body, rules, model=model, format=format)
    except (InvalidHistory, TypeError):
        # Not a history toolpair can read: the upstream answers it in its own words.
        return None
    if mode == "repair":
        if not rep.changed:
            return Verdict("pass", raw, format, rules, fixes=rep.fixes)
        return Verdict("pass", encode(rep.messages), format, rules, changed=True, fixes=rep.fixes)
    if not violations:
        return Verdict("pass", raw, format, rules)
    first = violations[0]
    logger.warning(
        "toolpair %s %s for %s: %d violation(s), first at message %d: [%s]%s",
        "rejected" if mode == "reject" else "observed",
        where or format,
        rules,
        len(violations),
        first.index,
        first.code,
        f" ids: {', '.join(i if len(i) <= 64 else i[:40] + '…' for i in first.ids)}"
        if first.ids
        else "",
    )
    if mode == "observe":
        return Verdict("pass", raw, format, rules, violations=violations)
    envelope = encode(error_envelope(format, first.message))
    return Verdict("reject", envelope, format, rules, status=400, violations=violations)
