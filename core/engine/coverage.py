"""How much of a history a format actually explains.

Format detection picks the first message that tells; a list of objects that merely carry
a ``type`` field passes as Responses items of unknown kinds, which every rule skips. A
history in which nothing, or almost nothing, was judged must not be reported valid: this
counts what a format reads as messages or known items, and what it passed over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolpair._model import Codec, InvalidHistory
from toolpair.formats import CODECS
from toolpair.formats.responses import RESPONSES_KNOWN as RESPONSES_KNOWN

#: Unknown items outnumbering known ones by this factor count as "almost nothing judged".
RATIO = 4


@dataclass(slots=True)
class Coverage:
    """What a format read of a history: ``judged`` items, ``skipped`` by kind."""

    judged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def nothing(self) -> bool:
        """Nothing was judged although there was something to judge."""
        return self.judged == 0 and self.total_skipped > 0

    @property
    def almost_nothing(self) -> bool:
        return self.nothing or self.total_skipped > RATIO * max(self.judged, 1)

    def describe(self) -> str:
        kinds = sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{k} ({n})" for k, n in kinds[:6])
        more = f" and {len(kinds) - 6} more kinds" if len(kinds) > 6 else ""
        return (
            f"judged {self.judged} item{'s' if self.judged != 1 else ''}; skipped "
            f"{self.total_skipped} of unknown kinds: {shown}{more}"
        )


def _kind(item: Any) -> str:
    if not isinstance(item, Mapping):
        return type(item).__name__
    t = item.get("type")
    return f"type {t!r}" if isinstance(t, str) else "object"


#: What a format not known by name judges: anything with a role, or without a type.
_ANY = Codec()


def coverage(items: Sequence[Any], format_name: str) -> Coverage:
    """Count the items of a message list that ``format_name`` reads as messages or known
    items, and the rest by kind."""
    cov = Coverage()
    codec = CODECS.get(format_name) or _ANY
    for item in items:
        # What is not an object, or has no type, is the codec's to refuse with the
        # item's index; only items of a kind the rules skip are counted as skipped.
        ok = codec.judges(item) if isinstance(item, Mapping) else True
        if ok:
            cov.judged += 1
        else:
            k = _kind(item)
            cov.skipped[k] = cov.skipped.get(k, 0) + 1
    return cov


class NothingJudged(InvalidHistory):
    """The detected format explains nothing (or almost nothing) of the history: a
    ``valid`` answer would be about what was never read."""

    def __init__(self, cov: Coverage, format_name: str, hint: str = "") -> None:
        super().__init__(f"read as {format_name}, {cov.describe()}{hint}")
        self.coverage = cov
        self.format_name = format_name


def guard(items: Any, format_name: str, *, hint: str = "", almost: bool = True) -> Coverage | None:
    """Raise `NothingJudged` when a detected format judges nothing of ``items`` (with
    ``almost``, also when unknown items outnumber known ones by far); return the coverage
    otherwise (None for what is not a list). Without ``almost`` the count stops at the
    first judged item: the cost on an ordinary history is one item."""
    if not isinstance(items, list | tuple):
        return None
    if not almost:
        for i, item in enumerate(items):
            if coverage((item,), format_name).judged:
                return Coverage(judged=1, skipped=coverage(items[:i], format_name).skipped)
    cov = coverage(items, format_name)
    if cov.almost_nothing if almost else cov.nothing:
        raise NothingJudged(cov, format_name, hint)
    return cov
