"""Do no harm for a named model (docs/rules.md, "Named models"): the one place that
decides what a model's profile may report and what repair may change for it.

A rule fires for a named model only where `toolpair.rules.enforced` grants it: the API
documents it for every model behind it, or a refusal shows it for that model's family.
The profile of a named model is its family's profile with every other rule withheld:
its violations are not reported, and the layout traits only such a rule asks for (text
kept out of a tool-use turn, results alone in their turn, strict alternation, an ``fc_``
item held to its reasoning, a bridge after results) are off, so repair does not change
what only such a rule would flag. Without a model the strict set stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from toolpair._model import Message, Violation
from toolpair.providers import Context, Profile, get_profile
from toolpair.rules import LAYOUT, Rule, relaxed, rules_for, withheld

_PLACEHOLDER = re.compile(r"\\\{[^}]*\\\}")


def _pattern(text: str) -> re.Pattern[str]:
    """A rule's message template as a pattern its reported messages match."""
    return re.compile(_PLACEHOLDER.sub(".*?", re.escape(text)), re.DOTALL)


def _judge(every: Sequence[Rule], fired: set[tuple[str, str]]) -> Callable[[Violation], bool]:
    """Whether a violation's rule fires: the rule of that code whose text it matches
    (a code with one rule needs no match); a code no rule names is kept (strict)."""
    by_code: dict[str, list[tuple[re.Pattern[str], bool]]] = {}
    for r in every:
        by_code.setdefault(r.code, []).append((_pattern(r.text), (r.code, r.text) in fired))

    def keep(v: Violation) -> bool:
        known = by_code.get(v.code)
        if not known:
            return True
        if len(known) == 1:
            return known[0][1]
        for pattern, ok in known:
            if pattern.fullmatch(v.message):
                return ok
        return any(ok for _, ok in known)

    return keep


@lru_cache(maxsize=1024)
def named(provider: str, model: str, kept: frozenset[str] = frozenset()) -> Profile:
    """The profile ``provider`` holds ``model`` to under the do-no-harm policy: its
    family's profile, with the rules the policy withholds neither reported nor repaired
    for, but for the codes in ``kept`` (`Codec.keeps`: a framework's formatter reshapes
    what they flag). The same profile object where nothing is withheld."""
    base = get_profile(provider, model)
    if provider == "portable":
        return base
    held = [r for r in withheld(provider, model) if r.code not in kept]
    if not held:
        return base
    every = rules_for(provider, model, every=True)
    fired = {(r.code, r.text) for r in every} - {(r.code, r.text) for r in held}
    keep = _judge(every, fired)
    cls = type(base)
    attrs: dict[str, object] = {"withheld": frozenset(r.code for r in held)}
    loose = relaxed(provider, model)
    if kept:
        # A trait a kept rule asks for stays: only the held rules' traits are let go.
        loose = {k: v for k, v in loose.items() if k not in _traits(kept)}
    attrs.update((k, v) for k, v in loose.items() if hasattr(cls, k))

    def rules(self: Profile, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        return [v for v in cls.rules(self, messages, ctx) if keep(v)]

    attrs["rules"] = rules
    attrs["__doc__"] = f"{cls.__name__} for a named model, with the unsupported rules withheld."
    return type(f"Named{cls.__name__}", (cls,), attrs)()  # type: ignore[no-any-return]


def _traits(codes: frozenset[str]) -> set[str]:
    """The layout traits the rules of ``codes`` ask for."""
    return {k for code in codes for k, _ in LAYOUT.get(code, ())}


__all__ = ["named"]
