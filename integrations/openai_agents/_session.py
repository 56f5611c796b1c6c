"""Pair-safe session reads and trimming: whole units only, the stored items untouched.

A unit is what the core's compaction evicts together: a user message, or an assistant
turn with its reasoning items, calls and every output answering them. Cutting between
units never leaves an orphan output, a call without its output, or a call parted from
the reasoning item the Responses API ties it to. What is stored and already broken
(rows the application popped or deleted, a result written after the next user message)
is repaired in what is read, as `toolpair.repair` does; only a unit that has no truthful
repair is left out, with a warning.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from agents.run import CallModelData, ModelInputData

import toolpair

from ._filter import FORMAT, _target

_WRAPPER = "wrapper"
_log = logging.getLogger("toolpair")


def _accepts_wrapper(method: Any) -> bool:
    try:
        return _WRAPPER in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


async def _call(method: Any, *args: Any, wrapper: Any = None, **kwargs: Any) -> Any:
    if wrapper is not None and _accepts_wrapper(method):
        kwargs[_WRAPPER] = wrapper
    out = method(*args, **kwargs)
    return await out if inspect.isawaitable(out) else out


#: What the Responses API rejects in a read that leaving whole units out can avoid: an
#: output whose call is gone, a call whose output is gone, a reasoning item with nothing
#: after it, a call parted from its reasoning item.
_BROKEN = frozenset(
    {
        "openai-responses.orphan_output",
        "openai-responses.missing_output",
        "openai-responses.reasoning_without_following",
        "openai-responses.call_without_reasoning",
    }
)
_CUT_FROM_REASONING = "openai-responses.call_without_reasoning"


def _is_reasoning(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    return kind == "reasoning"


def _broken(window: list[Any], reasons: bool, opening: int, where: list[int]) -> set[int]:
    """Indexes in ``window`` of what the Responses API would reject in a read (a call
    with its ``fc_`` id and no reasoning before it only when the model reasons or the
    call opens what is stored)."""
    return {
        v.index
        for v in toolpair.validate(window, "openai-responses", format=FORMAT)
        if v.code in _BROKEN
        and (v.code != _CUT_FROM_REASONING or reasons or where[v.index] < opening)
    }


def readable(items: list[Any]) -> list[Any]:
    """``items`` as a valid Responses input, losing no whole message and no real result:
    a result written after a later message is moved home, a call whose output is gone
    gets the neutral error result, a call cut from its reasoning item loses its ``fc_``
    id (keeping its ``call_id``), an output whose call is gone is dropped: what
    `toolpair.repair` does, reported in its one warning. A unit still broken after that
    is left out (`sound_units`), with a warning naming it. ``items`` itself when it is
    sound; untouched items are the same objects."""
    if not items:
        return items
    reasons = any(_is_reasoning(i) for i in items)
    opening = toolpair.units(items, format=FORMAT)[0].stop
    bad = _broken(items, reasons, opening, list(range(len(items))))
    if not bad:
        return items
    # The strict rules tie every fc_ call to a reasoning item; hold a model that does
    # not reason to them only when a call opens the items (its reasoning is gone).
    strict = reasons or any(
        v.code == _CUT_FROM_REASONING and v.index < opening
        for v in toolpair.validate(items, "openai-responses", format=FORMAT)
    )
    model = None if strict else _PLAIN
    rep = toolpair.repair(items, "openai-responses", model=model, format=FORMAT)
    return sound_units(list(rep.messages) if rep.changed else items, reasons=reasons)


#: A model of the Responses API that does not reason: its calls stand alone.
_PLAIN = "gpt-4o"


def sound_units(items: list[Any], *, reasons: bool | None = None) -> list[Any]:
    """``items`` without every unit the Responses API would reject as it stands: one
    that opens with an output whose call is gone, holds a call whose output is gone, a
    reasoning item with nothing after it, or a call cut from its reasoning item. The
    rest are the same objects in the same order; ``items`` itself when all are sound.

    A call carrying its ``fc_`` id with no reasoning item before it is taken as cut from
    its reasoning only when the items hold reasoning elsewhere (the model reasons) or
    it opens the items (whatever came before it, its reasoning included, is gone): the
    calls of a model that does not reason stand alone and are kept."""
    if not items:
        return items
    if reasons is None:
        reasons = any(_is_reasoning(i) for i in items)
    opening = toolpair.units(items, format=FORMAT)[0].stop
    window = items
    where = list(range(len(items)))  # window position -> stored position
    for _ in range(len(items)):
        units = toolpair.units(window, format=FORMAT)
        bad = _broken(window, reasons, opening, where)
        if not bad:
            break
        left_out = [u for u in units if any(u.start <= b < u.stop for b in bad)]
        _log.warning(
            "toolpair left %d broken unit(s) out of a session read (items %s): no truthful repair",
            len(left_out),
            ", ".join(f"{where[u.start]}-{where[u.stop - 1]}" for u in left_out),
        )
        keep = [
            k
            for u in units
            if not any(u.start <= b < u.stop for b in bad)
            for k in range(u.start, u.stop)
        ]
        window = [window[k] for k in keep]
        where = [where[k] for k in keep]
    return window


def newest_units(items: list[Any], limit: int) -> list[Any]:
    """The newest whole units of ``items`` holding at most ``limit`` items; the newest
    unit alone is kept whole even when it is larger (a split unit is never returned)."""
    if limit <= 0 or not items:
        return []
    if len(items) <= limit:
        start = 0
    else:
        start = toolpair.safe_cut(items, len(items) - limit, "tail", format=FORMAT)
        if start >= len(items):
            start = toolpair.units(items, format=FORMAT)[-1].start
    # What the backend stored may already open with an output whose call is gone (an
    # old trim, a reordering backend): a unit of results alone is never returned first.
    window = items[start:]
    skip = 0
    for u in toolpair.units(window, format=FORMAT):
        if u.kind != "results":
            break
        skip = u.stop
    return window[skip:] if skip else window


class PairSafeSession:
    """Any ``Session``, read in whole units.

    ``get_items()`` reads whatever is stored as a valid Responses input and loses no
    whole message and no real result (`readable`): a result stored after a later
    message is moved home, a call whose output is gone is answered with the neutral
    error result, as `toolpair.repair` does; only a unit with no truthful repair (an
    output whose call is gone) is left out, with a warning. ``get_items(limit=n)``
    returns the newest whole units holding at most ``n`` items (the newest unit whole
    even when it alone is larger), so ``SessionSettings(limit)`` never sends an orphan
    output, a call without its output or a call cut from its reasoning item.
    ``pop_item()`` removes the newest whole unit and returns its newest item. The SDK's
    own bookkeeping (the session tail checks and exact rewinds of 0.20+, which pass
    ``wrapper=``) pops exactly one item, as it expects. Stored items are never
    rewritten; everything else is the wrapped session's.
    """

    def __init__(self, session: Any) -> None:
        self.session = session

    @property
    def session_id(self) -> str:
        return self.session.session_id  # type: ignore[no-any-return]

    @property
    def session_settings(self) -> Any:
        return getattr(self.session, "session_settings", None)

    @session_settings.setter
    def session_settings(self, value: Any) -> None:
        self.session.session_settings = value

    async def get_items(self, limit: int | None = None, wrapper: Any = None) -> list[Any]:
        items = readable(list(await _call(self.session.get_items, wrapper=wrapper)))
        if limit is None:
            return items
        return newest_units(items, limit)

    async def add_items(self, items: list[Any], wrapper: Any = None) -> None:
        await _call(self.session.add_items, items, wrapper=wrapper)

    async def pop_item(self, wrapper: Any = None) -> Any:
        if wrapper is not None:
            return await _call(self.session.pop_item, wrapper=wrapper)
        items = list(await _call(self.session.get_items))
        if not items:
            return None
        start = toolpair.units(items, format=FORMAT)[-1].start
        newest = None
        for _ in range(len(items) - start):
            popped = await _call(self.session.pop_item)
            if newest is None:
                newest = popped
        return newest

    async def clear_session(self, wrapper: Any = None) -> None:
        await _call(self.session.clear_session, wrapper=wrapper)

    def __getattr__(self, name: str) -> Any:
        if name == "session":
            raise AttributeError(name)
        return getattr(self.session, name)


def trim_filter(
    max_tokens: int,
    *,
    token_counter: Any = "approximate",
    keep_system: bool = True,
    keep_first_user: bool = False,
    provider: Any = None,
    model: str | None = None,
) -> Callable[[CallModelData[Any]], ModelInputData]:
    """A ``call_model_input_filter`` that keeps the newest whole units within
    ``max_tokens`` (the docs' ``input[-N:]`` recipe without cutting a pair). With
    ``provider`` (a name, model string or ``Model``; ``"agent"`` for the agent's own
    model) the kept items are also repaired for it. Pass it as ``inner=`` of
    `ToolpairInputFilter` or to `with_toolpair` through the ``RunConfig`` to do both."""

    def trim_input(data: CallModelData[Any]) -> ModelInputData:
        items = data.model_data.input
        target: tuple[str | None, str | None] = (None, None)
        if provider is not None:
            fallback = getattr(data.agent, "model", None)
            target = _target(None if provider == "agent" else provider, model, fallback)
        out = toolpair.trim(
            items,
            max_tokens,
            token_counter=token_counter,
            keep_system=keep_system,
            keep_first_user=keep_first_user,
            provider=target[0],
            model=target[1],
            format=FORMAT,
        )
        if not out.fixes:
            return data.model_data
        return ModelInputData(input=list(out.messages), instructions=data.model_data.instructions)

    return trim_input
