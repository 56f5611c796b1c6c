"""Compaction that never splits a pair.

Every operation reads a history once into the neutral view, works on *units* and hands
back a `Compacted` result shaped like the input (a list for a list, a body for a body)
whose untouched messages are the very same objects.

A unit is what may be evicted or kept as a whole:

- ``system``: one system/developer message;
- ``user``: a user turn (consecutive user messages that hold no results);
- ``assistant``: an assistant message (chat shape) or run of assistant messages/items
  (blocks and items shapes) with no client tool call, thinking and reasoning included;
- ``tool``: the same with client tool calls, together with every result that answers
  them (a ``tool`` message, a user message holding results, a Responses output item);
- ``results``: results whose call is not in the history (a Responses history sent with
  ``previous_response_id``, or a broken one).

When a result sits further away than the next user side (Responses allows outputs
anywhere), the units in between merge, so no pair ever crosses a unit boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from toolpair._api import Parsed
from toolpair._model import Codec, Fix
from toolpair.compact.base import (
    CHARS_PER_TOKEN,
    TOKENS_PER_IMAGE,
    TOKENS_PER_MESSAGE,
    Compacted,
    TokenCounter,
    Unit,
    UnitKind,
    UnsupportedCodec,
    finish,
    message_counter,
    pairs_of,
    parse_for,
    units_of,
)
from toolpair.compact.edit import (
    CLEARED,
    OFFLOADED,
    FileStore,
    Store,
    clear_tool_results,
    offload,
    prune,
)


def units(history: Any, *, format: str | Codec | None = None) -> list[Unit]:
    """The eviction units of ``history`` in order; their spans tile the message list."""
    p = parse_for(history, format)
    return units_of(p.messages, p.codec.shape, pairs_of(p.messages))


def safe_cut(
    history: Any,
    index: int,
    keep: Literal["head", "tail"] = "head",
    *,
    format: str | Codec | None = None,
) -> int:
    """A cut point no pair crosses and no unit straddles.

    ``keep="head"``: the largest ``b <= index`` such that ``history[:b]`` holds every
    result of every call it keeps. ``keep="tail"``: the smallest ``a >= index`` such that
    ``history[a:]`` holds no result whose call lies before ``a``. ``index`` counts like a
    slice bound (negative from the end, clamped to the list).
    """
    if keep not in ("head", "tail"):
        raise ValueError(f"keep must be 'head' or 'tail', not {keep!r}")
    us = units(history, format=format)
    n = us[-1].stop if us else 0
    if index < 0:
        index += n
    index = min(max(index, 0), n)
    bounds = [0] + [u.stop for u in us]
    if keep == "head":
        return max(b for b in bounds if b <= index)
    return min(b for b in bounds if b >= index)


def count_tokens(
    history: Any,
    *,
    token_counter: TokenCounter = "approximate",
    format: str | Codec | None = None,
) -> int:
    """The size of ``history``'s messages as `trim` counts it."""
    p = parse_for(history, format)
    count = message_counter(token_counter, p.codec)
    return sum(count(m) for m in p.messages)


# --------------------------------------------------------------------------- trim


def trim(
    history: Any,
    max_tokens: int,
    *,
    token_counter: TokenCounter = "approximate",
    strategy: Literal["first", "last"] = "last",
    keep_system: bool = True,
    keep_first_user: bool = False,
    provider: str | None = None,
    model: str | None = None,
    format: str | Codec | None = None,
) -> Compacted:
    """Evict whole units until ``history`` fits ``max_tokens``.

    ``strategy="last"`` keeps the newest units: the kept part starts at a user turn
    when one fits; otherwise it starts inside the newest turn, and the user message that
    opened that turn is kept with it. System messages (``keep_system``) and the first
    user turn (``keep_first_user``) are never evicted. ``strategy="first"`` keeps the
    oldest units and ends where the model is to answer (after a user turn or results);
    system messages after the cut go with it. A unit that alone exceeds the budget is
    kept whole, and an ``unrepaired`` fix says the budget was not met.

    With ``provider`` (and ``model``) the result is also run through `repair` for it.
    Each message is counted once. Every evicted unit is a ``unit_evicted`` fix and in ``.evicted``.
    """
    if strategy not in ("first", "last"):
        raise ValueError(f"strategy must be 'first' or 'last', not {strategy!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a non-negative int, not {max_tokens!r}")
    p = parse_for(history, format, provider, model)
    count = message_counter(token_counter, p.codec)
    sizes = [count(m) for m in p.messages]
    total = sum(sizes)
    us = units_of(p.messages, p.codec.shape, pairs_of(p.messages))
    cost = [sum(sizes[u.start : u.stop]) for u in us]
    fixes: list[Fix] = []
    if total <= max_tokens or not us:
        keep = list(range(len(us)))
    elif strategy == "last":
        keep = _keep_last(us, cost, max_tokens, keep_system, keep_first_user, p, fixes)
    else:
        keep = _keep_first(us, cost, max_tokens, keep_first_user, p, fixes)
    kept = set(keep)
    evicted = [u for k, u in enumerate(us) if k not in kept]
    for k, u in enumerate(us):
        if k not in kept:
            fixes.append(
                Fix(
                    "unit_evicted",
                    u.start,
                    u.ids,
                    f"{u.kind} unit, messages {u.start}-{u.stop - 1}, {cost[k]} tokens",
                )
            )
    after = sum(cost[k] for k in keep)
    if after > max_tokens:
        fixes.append(
            Fix(
                "unrepaired",
                us[keep[-1]].start if keep else 0,
                (),
                f"over budget: {after} tokens kept for a budget of {max_tokens}; "
                "the smallest unit that can be kept is larger",
            )
        )
    natives = [p.raw[i] for k in keep for i in range(us[k].start, us[k].stop)]
    return finish(
        p, natives, fixes, provider, model=model, evicted=evicted, before=total, after=after
    )


def _keep_last(
    us: Sequence[Unit],
    cost: Sequence[int],
    budget: int,
    keep_system: bool,
    keep_first_user: bool,
    p: Parsed,
    fixes: list[Fix],
) -> list[int]:
    n = len(us)
    pinned = _pinned(us, p, keep_first_user)
    if keep_system:
        pinned.update(k for k, u in enumerate(us) if u.kind == "system")
    free = [k for k in range(n) if k not in pinned]
    if not free:
        return list(range(n))
    pin_cost = sum(cost[k] for k in pinned)
    # suf[j]: the cost of free[j:].
    suf = [0] * (len(free) + 1)
    for j in range(len(free) - 1, -1, -1):
        suf[j] = suf[j + 1] + cost[free[j]]

    def result(j: int, anchor: int | None) -> list[int]:
        keep = pinned | set(free[j:])
        if anchor is not None:
            keep.add(anchor)
        return sorted(keep)

    def fits(j: int, anchor: int | None) -> bool:
        extra = cost[anchor] if anchor is not None else 0
        return pin_cost + extra + suf[j] <= budget

    # A cut at a user turn (j == 0: nothing evicted).
    for j, k in enumerate(free):
        if (j == 0 or us[k].kind == "user") and fits(j, None):
            return result(j, None)
    # A cut inside the newest turn, keeping the user message that opened it.
    last_user = max((j for j, k in enumerate(free) if us[k].kind == "user"), default=-1)
    anchor = free[last_user] if last_user >= 0 else None
    chosen = next(
        (j for j in range(max(last_user + 1, 1), len(free)) if fits(j, anchor)), len(free) - 1
    )
    k = free[chosen]
    if chosen == 0 or us[k].kind == "user":
        return result(chosen, None)
    opened = (
        f"; the user turn at message {us[anchor].start} that opened it stays"
        if (anchor is not None)
        else ""
    )
    fixes.append(
        Fix(
            "cut_inside_turn",
            us[k].start,
            (),
            f"no cut at a user turn fits: the kept part starts inside a turn{opened}",
        )
    )
    return result(chosen, anchor)


def _keep_first(
    us: Sequence[Unit],
    cost: Sequence[int],
    budget: int,
    keep_first_user: bool,
    p: Parsed,
    fixes: list[Fix],
) -> list[int]:
    n = len(us)
    pinned = _pinned(us, p, keep_first_user)

    prefix = [0] * (n + 1)
    pin_after = [0] * (n + 1)  # the cost of pinned units at or after e
    for k in range(n):
        prefix[k + 1] = prefix[k] + cost[k]
    for k in range(n - 1, -1, -1):
        pin_after[k] = pin_after[k + 1] + (cost[k] if k in pinned else 0)

    def total(e: int) -> int:
        return prefix[e] + pin_after[e]

    def answerable(e: int) -> bool:
        # The kept prefix ends on a user turn or on results: the model answers next.
        last = us[e - 1]
        if last.kind == "user":
            return True
        return last.kind == "tool" and p.messages[last.stop - 1].role in ("tool", "user")

    first_real = next((k for k, u in enumerate(us) if u.kind != "system"), n - 1)
    ends = list(range(first_real + 1, n + 1))
    clean = [e for e in ends if answerable(e)] or ends or [n]
    fitting = [e for e in clean if total(e) <= budget]
    e = max(fitting) if fitting else min(clean)
    return sorted(set(range(e)) | {k for k in pinned if k >= e})


def _pinned(us: Sequence[Unit], p: Parsed, keep_first_user: bool) -> set[int]:
    pinned: set[int] = set()
    if keep_first_user:
        first = next((k for k, u in enumerate(us) if u.kind == "user"), None)
        if first is not None:
            pinned.add(first)
    if p.ctx.previous_response_id is not None:
        # Outputs for the stored response's calls: the server expects every one.
        pinned.update(k for k, u in enumerate(us) if u.kind == "results")
    return pinned


__all__ = [
    "CHARS_PER_TOKEN",
    "CLEARED",
    "OFFLOADED",
    "TOKENS_PER_IMAGE",
    "TOKENS_PER_MESSAGE",
    "Compacted",
    "FileStore",
    "Store",
    "TokenCounter",
    "Unit",
    "UnitKind",
    "UnsupportedCodec",
    "clear_tool_results",
    "count_tokens",
    "offload",
    "prune",
    "safe_cut",
    "trim",
    "units",
]
