"""A rule as one provider (or host) enforces it, written once beside the check that
reports it: its code, the provider's own wording, how sure we are of it and where it was
seen. The check reports it with `Rule.violation`; `toolpair.rules` collects every
provider module's ``RULES`` into the index and renders it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from toolpair._model import Violation

if TYPE_CHECKING:
    from toolpair.providers._base import Profile


Status = Literal["documented", "observed", "unverified"]
#: A recorded exchange (request and the provider's answer, kept in a public test suite),
#: an issue thread that shows the request and the error, or the provider's documentation.
Kind = Literal["refusal", "acceptance", "thread", "docs"]
Stance = Literal["for", "against"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence for or against a rule, where it was seen.

    ``family`` and ``host`` are empty where the evidence holds for every model and host
    of the API; ``date`` is when it was seen (``YYYY`` or ``YYYY-MM``), empty when unknown;
    ``model`` the model id as recorded. ``part`` marks evidence against a part of the
    rule only (the family keeps the rule in its own form, e.g. a wider id pattern).
    """

    kind: Kind
    stance: Stance
    source: str
    family: str = ""
    host: str = ""
    date: str = ""
    model: str = ""
    part: bool = False

    def __str__(self) -> str:
        where = ", ".join(x for x in (self.family, self.host, self.date) if x)
        label = {"refusal": "recorded 400", "acceptance": "recorded 200"}.get(self.kind, self.kind)
        return f"{label}: {self.source}" + (f" ({where})" if where else "")


_THREAD = re.compile(r"^[\w.-]+/[\w.-]+#")


def _parsed(rule: Rule) -> tuple[Evidence, ...]:
    """The sources named in ``evidence`` as Evidence for the rule: issue threads (each
    ``owner/repo#n`` and the numbers after it), and documentation for the rest."""
    out = []
    for part in (x.strip() for x in rule.evidence.split(";")):
        if not part:
            continue
        kind: Kind = "thread" if _THREAD.match(part) else "docs"
        out.append(Evidence(kind, "for", part))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule as one provider (or host) enforces it.

    ``ref`` numbers the rule within its provider (A1, B3, R3...); ``text`` is the message
    template the profile reports, with ``{i}``-style placeholders; ``status`` says
    whether the provider documents it, it was observed in a real error, or the wording
    is inferred; ``evidence`` names the public sources; ``applies`` says, in words,
    for which models it holds, and ``when`` decides it for a profile. ``seen`` holds the
    recorded exchanges and reports for and against it by family, host and date, and
    ``since`` says from when it holds (or until when) where the provider changed.

    For a named model a rule that a recorded acceptance contradicts, or that only a
    thread supports against one, is not enforced; without a model the strict set keeps
    it only where a refusal somewhere shows it (``record`` has both).
    """

    code: str
    ref: str
    text: str
    status: Status
    evidence: str
    applies: str = "every model"
    when: Callable[[Profile], bool] | None = None
    seen: tuple[Evidence, ...] = ()
    since: str = ""
    #: How the rule itself (not its wording) is known, where that differs from
    #: ``status``: a required field whose error text is inferred is still documented.
    basis: Status | None = None
    #: The model families the refusals behind an observed rule were seen for, where they
    #: single some out; empty: seen across the API's models without a family distinction.
    families: tuple[str, ...] = ()
    #: Where the provider's error points, in its own notation: a template over the text's
    #: parameters and ``{index}`` (empty where the error names no place).
    path: str = ""

    @property
    def provider(self) -> str:
        return self.code.split(".", 1)[0]

    @property
    def record(self) -> tuple[Evidence, ...]:
        """Every piece of evidence: the sources of ``evidence``, then ``seen``."""
        return _parsed(self) + self.seen

    @property
    def against(self) -> tuple[Evidence, ...]:
        return tuple(e for e in self.seen if e.stance == "against")

    @property
    def grounds(self) -> Status:
        """How the rule itself is known: ``basis`` where given, else ``status``."""
        return self.basis or self.status

    def violation(
        self, index: int, ids: tuple[str, ...] = (), path: str | None = None, /, **params: object
    ) -> Violation:
        """This rule broken at message ``index``: its text and path with ``params`` filled
        in (``path`` given where the check knows the place better than the template)."""
        where = self.path.format(index=index, **params) if path is None else path
        return Violation(self.code, self.text.format(**params), index, ids, where)

    @property
    def shown(self) -> str:
        """The text as a reader sees it: the template's doubled braces single."""
        return self.text.replace("{{", "{").replace("}}", "}")


def profile_named(name: str) -> Callable[[Profile], bool]:
    """``when`` for a rule only the profile called ``name`` checks (not a host built on it)."""
    return lambda p: p.name == name


def profile_has(name: str, value: object = True) -> Callable[[Profile], bool]:
    """``when`` for a rule only profiles with the trait ``name`` at ``value`` check."""
    return lambda p: getattr(p, name, None) == value
