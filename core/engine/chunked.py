"""Repair that decodes only the parts of a long history that need it.

A stored history that broke once is repaired again on every request, so the slow path
is not rare. A long history falls into exchanges at the start of each assistant turn
that follows a user-side message; in a valid history no call and result pair crosses
such a boundary. Each exchange goes through the no-op checker; only the ones it cannot
clear are decoded and repaired (where turns must alternate, with the exchange after
them), and the rest are handed back untouched without being decoded.

This is an optimisation of `repair`, never a different answer: whenever the pieces
would not be independent (a result in one piece answers a call in another, an id is
reused across pieces), or the assembled history is not certainly valid, the caller
takes the full path instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._model import Codec, Fix, InvalidHistory, Message, Policy
from toolpair._view import pid
from toolpair.engine import passes
from toolpair.engine.fast import MALFORMED, Frag, certainly_valid, knows
from toolpair.engine.fast import check as fast_check
from toolpair.providers import Context, Profile

#: Histories shorter than this take the full path: the bookkeeping would not pay.
MIN_MESSAGES = 200

#: Rules about the first or last message of the whole request; a piece that is not
#: first or last may break them without the history doing so.
_FIRST_ONLY = frozenset(
    # A piece starts after a user-side turn its rules cannot see (Gemini G3).
    {"bedrock.first_not_user", "mistral.bad_start", "mistral.empty", "gemini.call_turn_position"}
)
_LAST_ONLY = frozenset(
    {"mistral.bad_last_role", "anthropic.trailing_whitespace", "anthropic.thinking_disabled"}
)


#: Exchanges checked together before a failing run is split in halves.
_RUN = 8


def repair(
    raw: Sequence[Any],
    codec: Codec,
    profile: Profile,
    policy: Policy,
    ctx: Context,
    *,
    rules: list[str] | None = None,
) -> tuple[list[Any], list[Fix], dict[str, str]] | None:
    """The repaired message list, fixes and id map; None means "take the full path".
    ``rules`` receives the codes of the violations the pieces were repaired for."""
    checker = profile.checker

    def check(msgs: Sequence[Any], ctx: Context, frag: Frag) -> bool | None:
        return fast_check(codec, checker, msgs, ctx, frag)

    if (
        not codec.splits
        or not profile.fast_path
        or not knows(codec, checker)
        or (codec.pieces is not None and checker not in codec.pieces)
        or len(raw) < MIN_MESSAGES
        or policy.trailing == "keep"
        or policy.bound_thinking == "strip"
    ):
        return None
    try:
        starts = codec.starts(raw)
        n = len(starts)
        ends = [*starts[1:], len(raw)]
        clean = [False] * n
        # The call ids of clean exchanges, each answered there: their results' ids too.
        seen: set[str] = set()
        thinking = False

        def sweep(lo: int, hi: int) -> None:
            """Check exchanges lo..hi as one fragment; where that fails, each half."""
            nonlocal thinking
            a, b = starts[lo], ends[hi]
            prev = codec.role_before(raw[a - 1]) if a else None
            frag = Frag(a == 0, b == len(raw), prev, seen)
            if check(raw[a:b], ctx, frag) is True:
                clean[lo : hi + 1] = [True] * (hi + 1 - lo)
                thinking = thinking or frag.thinking is not False
            elif lo < hi:
                mid = (lo + hi) // 2
                sweep(lo, mid)
                sweep(mid + 1, hi)

        # Most exchanges are clean: checking them a run at a time costs one pass and
        # few calls; a run that fails is split until its broken exchanges stand alone.
        for lo in range(0, n, _RUN):
            sweep(lo, min(lo + _RUN, n) - 1)
    except MALFORMED:
        return None  # malformed: the full path names it
    if all(clean):
        return None
    if thinking and not codec.reads_thinking:
        return None  # the H4 scan below reads thinking off native messages
    # A piece is a run of exchanges the checker could not clear; where turns must
    # alternate, with the exchange after it, so a turn left at its end can merge.
    reach = 1 if profile.strict_alternation else 0
    spans: list[list[int]] = []
    for k in range(n):
        if clean[k]:
            continue
        hi = min(k + reach, n - 1)
        if spans and spans[-1][1] >= k - 1:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([k, hi])
    pieces: list[tuple[int, int, list[Message]]] = []
    for lo, hi in spans:
        a, b = starts[lo], ends[hi]
        try:
            msgs = codec.decode(raw[a:b])
        except InvalidHistory:
            return None  # the full path raises it, naming the message's own index
        for m in msgs:
            m.index += a
        pieces.append((a, b, msgs))
        for k in range(lo, hi + 1):
            if clean[k]:
                # A clean exchange that joined a piece: its ids are the piece's now.
                calls, results = _ids([m for m in msgs if starts[k] <= m.index < ends[k]])
                seen -= calls | results
    ids = [_ids(msgs) for _, _, msgs in pieces]
    owners_call: dict[str, int] = {}
    owners_result: dict[str, int] = {}
    for j, (calls, results) in enumerate(ids):
        for i in calls:
            owners_call[i] = -2 if owners_call.get(i, j) != j else j
        for i in results:
            owners_result[i] = -2 if owners_result.get(i, j) != j else j
    clean_calls = clean_results = seen
    all_calls = seen.union(owners_call)
    out: list[Any] = []
    fixes: list[Fix] = []
    id_map: dict[str, str] = {}
    pieces_out: list[Any] = []  # what the pieces became
    pos = 0
    changed = False
    for j, (a, b, msgs) in enumerate(pieces):
        calls, results = ids[j]
        for i in results - calls:  # a result whose call is in another piece or exchange
            if i in clean_calls or owners_call.get(i, j) != j:
                return None
        for i in calls - results:  # a call whose result is in another piece or exchange
            if i in clean_results or owners_result.get(i, j) != j:
                return None
        for i in calls:  # an id reused across pieces
            if i in clean_calls or owners_call[i] != j:
                return None
        violations = [
            v
            for v in profile.rules(msgs, ctx)
            if not (a and v.code in _FIRST_ONLY) and not (b < len(raw) and v.code in _LAST_ONLY)
        ]
        out.extend(raw[pos:a])
        pos = b
        if not violations:
            out.extend(raw[a:b])
            pieces_out.extend(raw[a:b])
            continue
        if rules is not None:
            rules.extend(v.code for v in violations)
        natives, piece_fixes, piece_map = passes.run(
            msgs, codec, profile, policy, taken=all_calls, first=a == 0, last=b == len(raw)
        )
        out.extend(natives)
        pieces_out.extend(natives)
        fixes.extend(piece_fixes)
        id_map.update(piece_map)
        changed = True
    out.extend(raw[pos:])
    if not changed or not certainly_valid(codec, checker, out, ctx):
        return None
    if not codec.reads_thinking:
        if any(b.kind == "thinking" for _, _, msgs in pieces for m in msgs for b in m.blocks):
            return None  # thinking after an edit: the full path reports it (H4)
    elif thinking or any(codec.thinking_in(m) for m in pieces_out):
        _prefix_binding(codec, raw, out, fixes)
    return out, fixes, id_map


def _prefix_binding(codec: Codec, raw: Sequence[Any], out: list[Any], fixes: list[Fix]) -> None:
    """H4 over the whole history: thinking anywhere after the first edited message,
    which a piece on its own cannot see."""
    if any(f.kind == "prefix_binding" for f in fixes):
        return
    first = next(
        (k for k, (a, b) in enumerate(zip(raw, out, strict=False)) if a is not b),
        min(len(raw), len(out)),
    )
    bound = sum(1 for m in out[first:] if codec.thinking_in(m))
    if bound:
        fixes.append(
            Fix(
                "prefix_binding",
                first,
                (),
                f"{bound} message(s) with thinking follow an edited message; providers that "
                "bind thinking to its prefix (Anthropic H4) may reject them: retry with "
                "bound_thinking='strip' or the drop_block setting",
            )
        )


def _ids(msgs: Sequence[Message]) -> tuple[set[str], set[str]]:
    calls = {pid(b) for m in msgs for b in m.blocks if b.kind == "call"}
    results = {pid(b) for m in msgs for b in m.blocks if b.kind == "result"}
    return calls, results
