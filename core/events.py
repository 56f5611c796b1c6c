"""One event per repaired or rejected request: the only path by which a repair is reported.

Every entry point (``toolpair.repair``, compaction, session repair, the command line, the
proxy, the ASGI middleware, the LiteLLM guardrail, each framework integration's guard)
reports what it changed or refused as one `RepairEvent`. The log line, ``on_repair``
callbacks, OpenTelemetry and the gateway's metrics are renderings of that event: bounded,
escaped, and free of content.

    toolpair.events.subscribe(callback)        # every event, from every entry point
    with toolpair.events.scope("proxy", model="claude-sonnet-4-5") as s:
        ...                                    # every repair in here becomes ONE event

Outside any scope, ``toolpair.repair`` emits its own event with source ``"library"``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import islice
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpair._model import Fix, Violation

__all__ = [
    "CONTENT_DROPPED",
    "CONTENT_TO_TEXT",
    "IDS_SHOWN",
    "RepairEvent",
    "Scope",
    "active",
    "clock",
    "configure",
    "emit",
    "printable",
    "render",
    "report",
    "scope",
    "shown_ids",
    "silenced",
    "subscribe",
    "unsubscribe",
]

logger = logging.getLogger("toolpair")

#: An event carries at most this many ids (and message indices); ``ids_total`` counts all.
IDS_SHOWN = 5
_INDICES_SHOWN = 20
#: Ids longer than this are shortened (the `Fix` objects keep them whole).
_ID_SHOWN = 64
#: Control characters (a newline or ESC would forge a log line or a terminal's state),
#: and the invisible marks that reorder or hide text.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")

#: Fix kinds by which real content left the request: a result, a pair, a unit, reasoning
#: or thinking dropped, evicted, cleared or offloaded.
CONTENT_DROPPED = frozenset(
    {
        "orphan_result_dropped",
        "duplicate_result_dropped",
        "reasoning_dropped",
        "reasoning_pruned",
        "thinking_stripped",
        "unit_evicted",
        "pair_pruned",
        "result_cleared",
        "input_cleared",
        "result_offloaded",
    }
)
#: Fix kinds that turned a block into text.
CONTENT_TO_TEXT = frozenset({"orphan_result_as_text", "result_json_as_text"})
_THINKING_OFF = "thinking_disabled"


@dataclass(frozen=True, slots=True)
class RepairEvent:
    """What one request had repaired or refused. No content, ever: kinds, codes, indices
    and the first few ids (escaped, shortened, or hashed), with totals."""

    provider: str
    format: str
    #: ``"library"``, ``"cli"``, ``"proxy"``, ``"asgi"``, ``"litellm"``, ``"compaction"``,
    #: ``"session"``, or an integration's name (``"langchain"``...).
    source: str
    #: ``"repair"``, ``"reject"`` or ``"observe"``.
    mode: str
    #: Fix kind -> count.
    fixes: Mapping[str, int]
    #: The violation codes behind the fixes or the rejection, each once.
    rules: tuple[str, ...]
    #: The message indices touched (the first few).
    indices: tuple[int, ...]
    #: The first few affected ids, escaped and shortened (or hashed).
    ids: tuple[str, ...]
    ids_total: int
    #: A real result or other content was dropped, evicted, cleared or offloaded.
    content_dropped: bool
    #: Something was turned into text.
    content_to_text: bool
    thinking_off: bool
    #: Seconds spent repairing (or judging) the request.
    duration: float
    model: str | None = None
    host: str | None = None

    @property
    def fix_count(self) -> int:
        return sum(self.fixes.values())

    def as_dict(self) -> dict[str, Any]:
        """The event as plain JSON values (for a log pipeline or a gateway's payload)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "host": self.host,
            "format": self.format,
            "source": self.source,
            "mode": self.mode,
            "fixes": dict(self.fixes),
            "fix_count": self.fix_count,
            "rules": list(self.rules),
            "indices": list(self.indices),
            "ids": list(self.ids),
            "ids_total": self.ids_total,
            "content_dropped": self.content_dropped,
            "content_to_text": self.content_to_text,
            "thinking_off": self.thinking_off,
            "duration": self.duration,
        }


_Callback = Callable[[RepairEvent], None]

# A tuple replaced whole (copy on write): emit reads it without a lock.
_subscribers: tuple[_Callback, ...] = ()


@dataclass(slots=True)
class _Settings:
    hash_ids: bool = False
    repair_level: int = logging.WARNING
    observe_level: int = logging.INFO


def _level_from_environment(name: str, default: int) -> int:
    """A level the environment names (``WARNING``, ``INFO``, or a number), for servers
    configured only by their environment (vLLM's middleware)."""
    value = os.environ.get(name, "").strip().upper()
    if not value:
        return default
    if value.isdigit():
        return int(value)
    level = logging.getLevelName(value)
    if not isinstance(level, int):
        raise ValueError(f"{name} must be a logging level (WARNING, INFO...), not {value!r}")
    return level


_settings = _Settings(
    observe_level=_level_from_environment("TOOLPAIR_OBSERVE_LOG_LEVEL", logging.INFO)
)


def configure(
    *,
    hash_ids: bool | None = None,
    repair_level: int | None = None,
    observe_level: int | None = None,
) -> None:
    """Process-wide reporting settings. ``hash_ids``: events carry ``sha256:`` + the first
    16 hex digits of each id instead of the id (ids can embed user or session data).
    ``repair_level`` / ``observe_level``: the log level of the line for repair and reject
    events (default WARNING), and for observe-mode events (default INFO, or the
    environment's ``TOOLPAIR_OBSERVE_LOG_LEVEL``)."""
    if hash_ids is not None:
        _settings.hash_ids = hash_ids
    if repair_level is not None:
        _settings.repair_level = repair_level
    if observe_level is not None:
        _settings.observe_level = observe_level


def subscribe(callback: _Callback) -> _Callback:
    """Call ``callback`` with every event from now on (once, however often subscribed).
    Returns ``callback``, so it can decorate a function. A callback that raises is logged
    and never breaks the request."""
    global _subscribers
    if callback not in _subscribers:
        _subscribers = (*_subscribers, callback)
    return callback


def unsubscribe(callback: _Callback) -> None:
    """Stop calling ``callback``; nothing happens if it was not subscribed."""
    global _subscribers
    _subscribers = tuple(c for c in _subscribers if c != callback)


def emit(event: RepairEvent) -> None:
    """Hand ``event`` to every subscriber and write its one log line."""
    for callback in _subscribers:
        try:
            callback(event)
        except Exception:  # a broken observer must not break the request
            logger.exception("a toolpair event subscriber raised")
    level = _settings.observe_level if event.mode == "observe" else _settings.repair_level
    if logger.isEnabledFor(level):
        logger.log(level, "%s", render(event))


def render(event: RepairEvent) -> str:
    """The event as its one log line: counts, kinds, rule codes, the first few ids and
    "and N more"; bounded, control characters escaped, no content."""
    verb = {"repair": "repaired", "reject": "rejected", "observe": "observed"}.get(
        event.mode, printable(event.mode, 20)
    )
    where = printable(event.provider, 40)
    if event.model:
        where += f" ({printable(event.model, 80)})"
    if event.host:
        where += f" at {printable(event.host, 80)}"
    kinds = list(event.fixes.items())
    summary = ", ".join(f"{n} {printable(k, 40)}" for k, n in kinds[:10])
    if len(kinds) > 10:
        summary += f" and {len(kinds) - 10} more kinds"
    rules = ", ".join(printable(r, 60) for r in event.rules[:5])
    if len(event.rules) > 5:
        rules += f" and {len(event.rules) - 5} more"
    head = (
        f"toolpair {verb} a history ({printable(event.format, 40)} format) for {where} "
        f"via {printable(event.source, 40)}"
    )
    parts = [f"{head}: {summary}" if summary else head]
    if rules:
        parts.append(f"rules: {rules}")
    parts.append(f"ids: {_ids_text(event)}")
    flags = [
        name
        for name, on in (
            ("content dropped", event.content_dropped),
            ("content to text", event.content_to_text),
            ("thinking off", event.thinking_off),
        )
        if on
    ]
    if flags:
        parts.append(", ".join(flags))
    return "; ".join(parts)


def _ids_text(event: RepairEvent) -> str:
    if not event.ids:
        return "-"
    rest = event.ids_total - len(event.ids)
    return ", ".join(event.ids) + (f" and {rest} more" if rest > 0 else "")


def printable(value: str, limit: int = _ID_SHOWN) -> str:
    """``value`` as a log line may show it: control and invisible characters escaped,
    shortened past ``limit`` characters."""
    if len(value) > limit:
        value = f"{value[: limit * 5 // 8]}…{value[-(limit // 5) :]} ({len(value)} chars)"
    if _UNPRINTABLE.search(value) is None:  # nearly every id: no substitution to build
        return value
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def shown_ids(ids: Iterable[str], total: int = 0) -> str:
    """The first `IDS_SHOWN` of ``ids``, escaped and shortened, then "and N more" (of
    ``total``, when given): a log line bounded whatever the history."""
    first: list[str] = []
    n = 0
    for i in ids:
        n += 1
        if len(first) < IDS_SHOWN:
            first.append(printable(i))
    total = max(total, n)
    if not first:
        return "-"
    rest = f" and {total - len(first)} more" if total > len(first) else ""
    return ", ".join(first) + rest


def _shown(i: str) -> str:
    if _settings.hash_ids:
        return "sha256:" + hashlib.sha256(i.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return printable(i)


@dataclass(slots=True)
class _Collected:
    """What a scope (or one bare repair) gathered before it becomes an event."""

    provider: str = ""
    format: str = ""
    model: str | None = None
    fixes: dict[str, int] = field(default_factory=dict)
    rules: dict[str, None] = field(default_factory=dict)
    indices: dict[int, None] = field(default_factory=dict)
    ids: dict[str, None] = field(default_factory=dict)
    dropped: bool = False
    to_text: bool = False
    thinking_off: bool = False
    rejected: bool = False
    duration: float = 0.0

    def add_fixes(self, fixes: Sequence[Fix]) -> None:
        for f in fixes:
            k = f.kind
            self.fixes[k] = self.fixes.get(k, 0) + 1
            if k in CONTENT_DROPPED:
                self.dropped = True
            elif k in CONTENT_TO_TEXT:
                self.to_text = True
            elif k == _THINKING_OFF:
                self.thinking_off = True
            elif k == "unrepaired" and f.detail.startswith("["):
                self.rules[f.detail[1 : f.detail.find("]")]] = None
            if len(self.indices) < _INDICES_SHOWN:
                self.indices[f.index] = None
            for i in f.ids:
                if i:
                    self.ids[i] = None

    def add_violations(self, violations: Sequence[Violation]) -> None:
        for v in violations:
            self.rules[v.code] = None
            if len(self.indices) < _INDICES_SHOWN:
                self.indices[v.index] = None
            self.ids.update(dict.fromkeys(i for i in v.ids if i))

    def event(
        self, source: str, mode: str, model: str | None, host: str | None
    ) -> RepairEvent | None:
        if not self.fixes and not self.rejected:
            return None
        first = [_shown(i) for i in islice(self.ids, IDS_SHOWN)]
        return RepairEvent(
            provider=self.provider,
            format=self.format,
            source=source,
            mode=mode,
            # No copy: a _Collected becomes one event and is never added to after.
            fixes=MappingProxyType(self.fixes),
            rules=tuple(self.rules),
            indices=tuple(sorted(self.indices)),
            ids=tuple(first),
            ids_total=len(self.ids),
            content_dropped=self.dropped,
            content_to_text=self.to_text,
            thinking_off=self.thinking_off,
            duration=self.duration,
            model=model if model is not None else self.model,
            host=host,
        )


class Scope:
    """An open reporting scope: every repair inside it is gathered into one event."""

    __slots__ = ("_collected", "_listeners", "event", "host", "mode", "model", "source")

    def __init__(self, source: str, mode: str, model: str | None, host: str | None) -> None:
        self.source = source
        self.mode = mode
        self.model = model
        self.host = host
        self._collected = _Collected()
        self._listeners: list[_Callback] = []
        #: The event this scope emitted, once it has exited (None when nothing changed).
        self.event: RepairEvent | None = None

    def rejected(
        self,
        violations: Sequence[Violation],
        *,
        provider: str | None = None,
        format: str | None = None,
    ) -> None:
        """Record that the request was refused (or, in observe mode, would be) for these
        violations: the scope emits an event even though nothing was changed."""
        if self is _SILENT:
            return
        c = self._collected
        c.rejected = True
        c.add_violations(violations)
        if provider and not c.provider:
            c.provider = provider
        if format and not c.format:
            c.format = format

    def add_time(self, seconds: float) -> None:
        """Count ``seconds`` of judging the request in the event's duration."""
        if self is not _SILENT:
            self._collected.duration += seconds

    def reset(self) -> None:
        """Forget what was recorded so far (a caller that retried a repair another way
        and reports only the attempt it kept)."""
        self._collected = _Collected()

    @property
    def changed(self) -> bool:
        """Whether anything recorded so far would make this scope emit."""
        return bool(self._collected.fixes) or self._collected.rejected


_current: ContextVar[Scope | None] = ContextVar("toolpair_scope", default=None)
#: The scope of `silenced`: it gathers, and never emits.
_SILENT = Scope("silenced", "repair", None, None)


@contextmanager
def scope(
    source: str,
    *,
    mode: str = "repair",
    model: str | None = None,
    host: str | None = None,
    on_event: _Callback | None = None,
) -> Iterator[Scope]:
    """Gather every repair, compaction and session repair made inside into ONE event,
    emitted on exit only if anything changed or was rejected; ``on_event`` receives that
    same event. Inside another scope, the outermost one emits, and ``on_event`` receives
    its event."""
    outer = _current.get()
    if outer is not None:
        if on_event is not None and outer is not _SILENT:
            outer._listeners.append(on_event)  # called with the outer scope's event
        yield outer
        return
    s = Scope(source, mode, model, host)
    if on_event is not None:
        s._listeners.append(on_event)
    token = _current.set(s)
    try:
        yield s
    finally:
        # Also when the body raises: a rejection is often an exception.
        _current.reset(token)
        s.event = s._collected.event(source, mode, model, host)
        if s.event is not None:
            for listener in s._listeners:
                _call(listener, s.event)
            emit(s.event)


@contextmanager
def silenced() -> Iterator[None]:
    """Repairs made inside are not reported: a preview or a replay of what repair would
    do (``toolpair map``, the corpus's verdicts), not a request that was changed."""
    token = _current.set(_SILENT)
    try:
        yield
    finally:
        _current.reset(token)


def _call(callback: _Callback, event: RepairEvent) -> None:
    try:
        callback(event)
    except Exception:
        logger.exception("a toolpair on_event callback raised")


def report(
    fixes: Sequence[Fix],
    provider: str,
    format: str,
    duration: float,
    *,
    source: str = "library",
    model: str | None = None,
    rules: Iterable[str] = (),
    violations: Sequence[Violation] = (),
    content_dropped: bool = False,
) -> RepairEvent | None:
    """How the core tells of one repair: into the current scope if there is one (returns
    None), else as its own event with ``source`` (returned; None when nothing changed).
    ``rules`` are the codes behind the fixes; ``violations``, when the fixes do not
    locate themselves, the ones they repaired (their codes, indices and ids)."""
    if not fixes:
        return None
    s = _current.get()
    if s is _SILENT:
        return None
    if s is None and not _subscribers and not logger.isEnabledFor(_settings.repair_level):
        return None  # nobody would see it: no event is built
    c = s._collected if s is not None else _Collected()
    if not c.provider:
        c.provider = provider
        c.format = format
    if c.model is None:
        c.model = model
    c.add_fixes(fixes)
    c.rules.update(dict.fromkeys(rules))
    c.add_violations(violations)
    c.dropped = c.dropped or content_dropped
    c.duration += duration
    if s is not None:
        return None
    event = c.event(source, "repair", model, None)
    if event is not None:
        emit(event)
    return event


def active() -> Scope | None:
    """The innermost open scope, if any."""
    return _current.get()


#: A monotonic clock for durations (a name to import, so callers need no ``time``).
clock = time.perf_counter
