"""Pair-safe selection of an agno session's stored history.

agno's ``session.get_messages(limit=N)`` slices the last N messages and only then pops
leading tool results, which a prepended system message defeats (an orphan result), and
``get_chat_history()`` drops every result but keeps the calls. Cutting at toolpair's unit
boundaries instead never separates a call from its results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import toolpair
from toolpair.integrations.agno._codec import AgnoCodec


def select_history(messages: Sequence[Any], limit: int) -> list[Any]:
    """At most ``limit`` of the latest non-system messages, cut where no call/result
    pair is split (so possibly fewer), after the leading system messages, which are
    always kept as agno keeps them. Returns the same message objects."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")
    head = 0
    while head < len(messages) and getattr(messages[head], "role", None) in ("system", "developer"):
        head += 1
    system, rest = list(messages[:head]), list(messages[head:])
    if not rest:
        return system
    cut = toolpair.safe_cut(rest, len(rest) - limit, keep="tail", format=AgnoCodec())
    return system + rest[cut:]
