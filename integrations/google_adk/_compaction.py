"""Pair-safe event compaction: `PairSafeSummarizer`, a wrapper for the summarizer of an
``EventsCompactionConfig``, and `pair_safe_prefix`, the boundary it cuts at.

ADK compacts by handing a window of events to ``summarizer.maybe_summarize_events`` and
hiding, from every later request, the events between the first and last timestamp of
that window. A window that ends after a ``function_call`` but before its
``function_response`` (a long-running tool, a pending ``adk_request_confirmation``)
hides the call and leaves its response orphaned (google/adk-python #4740, #5602). The
wrapper shortens the window to its longest prefix that leaves nothing open, so the
summary's range can never fall inside a pair.

ADK releases whose compaction already trims its window
(``apps.compaction._longest_self_contained_prefix``, present in 2.13) are by default cut
only before what waits for the user or a long-running tool: ADK's own trim knows which
plain calls can never be answered (#7236), which a summarizer seeing only the window
cannot, but it counts a confirmation asked in an older invocation as dead and summarises
it, and the call it puts back when the user confirms then follows the model-authored
summary, a function call turn after a model turn, which Gemini refuses. (ADK's own cut
can also fall right before a call the summarizer does not see; the plugin's request
repair handles that one.)
"""

from __future__ import annotations

import functools
import logging
from typing import Any

logger = logging.getLogger("toolpair.google_adk")


def adk_trims_compaction() -> bool:
    """True where ADK's own compaction keeps pairs whole (its window is cut at a point
    where no call, confirmation or auth request is open)."""
    try:
        from google.adk.apps import compaction
    except ImportError:  # no event compaction at all (1.7)
        return False
    return hasattr(compaction, "_longest_self_contained_prefix")


def _ids(items: Any) -> set[str]:
    return {i.id for i in items if getattr(i, "id", None)}


def _pending_ids(event: Any) -> set[str]:
    """Ids the event leaves waiting for the user or a long-running tool."""
    actions = getattr(event, "actions", None)
    out = set(getattr(event, "long_running_tool_ids", None) or ())
    for pending in ("requested_tool_confirmations", "requested_auth_configs"):
        out |= set(getattr(actions, pending, None) or ())
    return out


def pair_safe_prefix(events: list[Any], *, only_pending: bool = False) -> list[Any]:
    """The longest prefix of ``events`` (ADK ``Event`` objects) after which no function
    call, tool confirmation or auth request is left waiting for its response, and the
    next event is no function call. Responses are applied before calls within one
    event, so an event never closes its own call.
    ``only_pending`` counts only the calls that wait for the user or a long-running
    tool (and the confirmations and auth requests), leaving plain calls to ADK's own
    trim, which knows a dead one. Returns ``events`` itself when nothing has to go, a
    new list otherwise."""
    waiting: set[str] = set()
    if only_pending:
        for event in events:
            waiting |= _pending_ids(event)
    open_ids: set[str] = set()
    safe = 0
    for index, event in enumerate(events):
        open_ids -= _ids(event.get_function_responses())
        calls = _ids(event.get_function_calls())
        open_ids |= (calls & waiting) if only_pending else calls
        actions = getattr(event, "actions", None)
        for pending in ("requested_tool_confirmations", "requested_auth_configs"):
            open_ids |= set(getattr(actions, pending, None) or ())
        # ADK puts the summary in the model's name: a cut right before a model's call
        # would give Gemini a call turn after a model turn, which it refuses.
        after = events[index + 1] if index + 1 < len(events) else None
        if not open_ids and (after is None or not after.get_function_calls()):
            safe = index + 1
    return events if safe == len(events) else events[:safe]


# Made once, on first use: it subclasses ADK's BaseEventsSummarizer, imported only then.
@functools.cache
def summarizer_class() -> type:
    from google.adk.apps.base_events_summarizer import BaseEventsSummarizer

    class PairSafeSummarizer(BaseEventsSummarizer):  # type: ignore[misc, valid-type]
        """Wraps an ADK events summarizer (``LlmEventSummarizer`` or your own) so the
        window it summarises never ends between a call and its response.

        ``trim``: True cuts before every open call; None (default) does that where
        ADK's compaction does not trim its own window (`adk_trims_compaction`), and
        where it does, cuts only before what waits for the user or a long-running tool
        (ADK 2.13 summarises a confirmation asked in an older invocation); False
        never cuts. ``last_dropped``
        counts the events the last call kept out of the summary (they stay raw in the
        session and are summarised by a later compaction once their pair is whole).
        """

        def __init__(self, inner: Any, *, trim: bool | None = None) -> None:
            self.inner = inner
            self.trim = trim
            #: Cut only before pending calls (ADK trims the plain ones itself).
            self.only_pending = trim is None and adk_trims_compaction()
            self.last_dropped = 0

        async def maybe_summarize_events(self, *, events: list[Any]) -> Any:
            if self.trim is False:
                window = events
            else:
                window = pair_safe_prefix(events, only_pending=self.only_pending)
            self.last_dropped = len(events) - len(window)
            if self.last_dropped:
                logger.info("compaction window shortened by %d event(s)", self.last_dropped)
            if not window:
                return None
            return await self.inner.maybe_summarize_events(events=window)

    PairSafeSummarizer.__module__ = "toolpair.integrations.google_adk"
    PairSafeSummarizer.__qualname__ = "PairSafeSummarizer"
    return PairSafeSummarizer
