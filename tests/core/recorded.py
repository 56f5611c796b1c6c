"""Judging toolpair against the recorded exchanges in ``tests/recorded``.

One verdict per case: what `toolpair.validate` says of the recorded request body (with
the case's model and host context) against what the provider answered, and what
`toolpair.repair` makes of it. Shared by ``test_recorded.py``, the summary line the
core env prints, and ``tests/recorded/_disagreements.py``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import toolpair

CORPUS = Path(__file__).resolve().parent.parent / "recorded"


@dataclass
class Verdict:
    name: str
    case: dict[str, Any]
    codes: list[tuple[str, int, str]] = field(default_factory=list)
    error: str = ""  # toolpair raised instead of answering
    agrees: bool = False
    located: bool = False
    changed: bool = False  # repair changed an accepted body
    fixes: list[str] = field(default_factory=list)
    repaired_valid: bool = True  # repair left a refused body valid
    left: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return int(self.case["status"]) < 400

    @property
    def decidable(self) -> bool:
        return bool(self.case.get("decidable", True))


def family(code: str) -> str:
    return code.split(".", 1)[-1]


def cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CORPUS.glob("*/*.json")):
        if path.name.startswith("_"):
            continue
        out.append((f"{path.parent.name}/{path.name}", json.loads(path.read_text())))
    return out


def _kwargs(case: dict[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = dict(case.get("context") or {})
    if case.get("model"):
        kw["model"] = case["model"]
    if case.get("format"):
        kw["format"] = case["format"]
    return kw


def _key(case: dict[str, Any], body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    for key in ("messages", "input", "contents"):
        if key in body:
            return key
    return None


def judge(name: str, case: dict[str, Any]) -> Verdict:
    v = Verdict(name, case)
    body, provider, kw = case["body"], case["provider"], _kwargs(case)
    try:
        found = toolpair.validate(body, provider, **kw)
    except toolpair.ToolpairError as e:
        v.error = f"{type(e).__name__}: {e}"
        return v
    v.codes = [(x.code, x.index, x.message) for x in found]
    expect = case.get("expect") or {}
    families = expect.get("family")
    families = [families] if isinstance(families, str) else list(families or [])
    index = expect.get("index")
    if v.accepted:
        v.agrees = not found
    else:
        v.located = index is not None and any(x.index == index for x in found)
        v.agrees = any(
            family(x.code) in families and (index is None or x.index == index) for x in found
        )
    result = toolpair.repair(body, provider, **kw)
    v.fixes = [str(f) for f in result.fixes]
    key = _key(case, body)
    if v.accepted:
        before = body[key] if key else body
        after = result.messages[key] if key else result.messages
        same = len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True))
        v.changed = bool(result.fixes) or not same
    else:
        left = toolpair.validate(result.messages, provider, **kw)
        v.left = [(x.code, x.index, x.message) for x in left]
        v.repaired_valid = not left and not result.unrepaired
    return v


@cache
def verdicts() -> tuple[Verdict, ...]:
    # repair logs one WARNING per changed history: hundreds here, and none is news.
    log = logging.getLogger("toolpair")
    was, log.disabled = log.disabled, True
    try:
        return tuple(judge(name, case) for name, case in cases())
    finally:
        log.disabled = was


@dataclass(frozen=True)
class Figures:
    total: int
    accepted: int
    refused: int
    decidable: int
    agree: int
    changed_accepted: int
    located: int
    refused_decidable: int
    unrepaired_refused: int

    @property
    def share(self) -> float:
        return self.agree / self.decidable if self.decidable else 1.0

    def line(self) -> str:
        return (
            f"recorded: {self.total} cases ({self.accepted} accepted, {self.refused} refused), "
            f"agreement {self.agree}/{self.decidable} ({100 * self.share:.1f}%), "
            f"changed-accepted {self.changed_accepted}, "
            f"located {self.located}/{self.refused_decidable}"
        )


def figures(vs: tuple[Verdict, ...] | None = None) -> Figures:
    vs = verdicts() if vs is None else vs
    dec = [v for v in vs if v.decidable]
    refused = [v for v in dec if not v.accepted]
    return Figures(
        total=len(vs),
        accepted=sum(v.accepted for v in vs),
        refused=sum(not v.accepted for v in vs),
        decidable=len(dec),
        agree=sum(v.agrees for v in dec),
        changed_accepted=sum(v.changed for v in vs if v.accepted),
        located=sum(v.located for v in refused),
        refused_decidable=len(refused),
        unrepaired_refused=sum(not v.repaired_valid for v in refused),
    )
