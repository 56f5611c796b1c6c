"""`PairSafeConversationManager`: Strands' sliding window, cut only between whole units.

Strands persists an append-only message log plus the number of messages the manager
removed from its front, and restores from that offset; so the manager may only ever
remove a prefix of the log. This one removes the shortest prefix that brings the history
within the window and ends on a unit boundary (a toolUse is never parted from its
toolResult, a kept part never starts with a result). Where the kept part would open on
an assistant turn, which Bedrock, Anthropic and Gemini refuse (Strands' own window
does that on tool-heavy histories, #1749), a one-line user turn opens it instead. That
turn lives in the manager's state and comes back through ``restore_from_session``, the
way ``SummarizingConversationManager`` keeps its summary, so the log stays append-only.
"""

from __future__ import annotations

import logging
from typing import Any

from strands.agent.conversation_manager import ConversationManager, SummarizingConversationManager
from strands.types.exceptions import ContextWindowOverflowException

import toolpair

from ._model import FORMAT

logger = logging.getLogger("toolpair")

DEFAULT_OPENING = toolpair.Policy().user_bridge_text


class PairSafeConversationManager(ConversationManager):
    """Keeps at most ``window_size`` messages of the log (as
    ``SlidingWindowConversationManager``), plus the opening user turn when one is
    needed; a unit larger than the window is kept whole. ``opening_text`` is that turn's
    text."""

    def __init__(self, window_size: int = 40, *, opening_text: str = DEFAULT_OPENING) -> None:
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
            raise ValueError(f"window_size must be a positive int, not {window_size!r}")
        super().__init__()
        self.window_size = window_size
        self.opening_text = opening_text
        self._opening: dict[str, Any] | None = None

    # --- state, as Strands' session managers persist and restore it ----------------

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "opening_message": self._opening}

    def restore_from_session(self, state: dict[str, Any]) -> list[Any] | None:
        super().restore_from_session(state)
        self._opening = state.get("opening_message")
        return [self._opening] if self._opening else None

    # --- management --------------------------------------------------------------

    def _log(self, messages: list[Any]) -> list[Any]:
        """The part of ``messages`` that is the stored log (without the opening)."""
        if self._opening is not None and messages and messages[0] == self._opening:
            return messages[1:]
        return messages

    def apply_management(self, agent: Any, **kwargs: Any) -> None:
        if len(self._log(agent.messages)) > self.window_size:
            self.reduce_context(agent)

    def cut_point(self, log: list[Any], start: int) -> int | None:
        """The smallest unit boundary ``b >= start`` (``b > 0``) where a user turn opens
        the kept part; failing that, the smallest where anything but results does (it
        then gets an opening turn); or None."""
        candidates = [u for u in toolpair.units(log, format=FORMAT) if u.start >= max(start, 1)]
        for u in candidates:
            if u.kind == "user":
                return u.start
        for u in candidates:
            if u.kind != "results":
                return u.start
        return None

    def reduce_context(self, agent: Any, e: Exception | None = None, **kwargs: Any) -> None:
        messages = agent.messages
        log = self._log(messages)
        # Strands' own rule for how far to go: down to the window, or two messages when
        # the history already fits (a context overflow below the window).
        start = len(log) - self.window_size if len(log) > self.window_size else 2
        cut = self.cut_point(log, start)
        if cut is None:
            if e is not None:
                raise ContextWindowOverflowException("no whole-unit cut left to trim") from e
            logger.warning(
                "window_size=%s, %s messages: no whole-unit cut left", self.window_size, len(log)
            )
            return
        kept = log[cut:]
        opens_on_user = kept[0].get("role") == "user"
        self._opening = None if opens_on_user else self._make_opening()
        # In place: the agent (and its hooks) hold this very list.
        messages[:] = ([self._opening] if self._opening else []) + kept
        self.removed_message_count += cut

    def _make_opening(self) -> dict[str, Any]:
        return {"role": "user", "content": [{"text": self.opening_text}]}


class PairSafeSummarizingConversationManager(SummarizingConversationManager):
    """Strands' ``SummarizingConversationManager`` (every option, the summary, its state
    and restore are Strands' own) whose split point falls only at a unit boundary.

    Strands walks its split forward past messages holding a ``toolResult`` and past a
    ``toolUse`` not followed by one; it never looks further back or ahead, so a call whose
    result is not in the very next message is summarised away while its result is kept
    (an orphaned result), or a result unit opens the kept part. Here the split moves
    forward to the first unit boundary at or after Strands' own that leaves the kept part
    no result whose call lies in the summarised part and does not open it on results.
    Only the split moves: the summarised part is still a prefix, and Strands' own
    ``removed_message_count`` arithmetic (the summarised messages, less a previous
    summary) stays right.

    The summary is a user turn on every release (Strands before 1.62 keeps the
    summariser's assistant reply, and the history then opens on an assistant turn).

    ``pin_first`` (Strands 1.62) is refused: pinned messages stay in front of the summary,
    so what is removed is no longer a prefix of the stored log, and a restored session
    would start at the wrong message.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("pin_first"):
            raise ValueError(
                "pin_first keeps messages from inside the summarised part, so the stored "
                "log would no longer lose only a prefix; PairSafeSummarizingConversationManager "
                "does not take it"
            )
        super().__init__(*args, **kwargs)

    def _generate_summary(self, messages: list[Any], agent: Any) -> Any:
        summary = super()._generate_summary(messages, agent)
        if summary.get("role") == "user":
            return summary
        # Before 1.62 the summariser's reply goes in as it came, an assistant turn, and
        # the history then opens on it, which Bedrock, Anthropic and Gemini refuse; 1.62
        # re-roles it to a user turn holding only its text (a user turn may carry no
        # toolUse or reasoning), and so does this on every release.
        texts = [{"text": b["text"]} for b in summary.get("content", []) if "text" in b]
        if not texts:
            raise RuntimeError("Failed to generate summary: model response contained no text")
        return {"role": "user", "content": texts}

    def _adjust_split_point_for_tool_pairs(self, messages: list[Any], split_point: int) -> int:
        if split_point > len(messages):
            raise ContextWindowOverflowException("Split point exceeds message array length")
        if split_point == len(messages):
            return split_point
        return summary_cut(messages, split_point)


def summary_cut(messages: list[Any], split_point: int) -> int:
    """The smallest unit boundary ``b >= split_point`` (``b > 0``) such that
    ``messages[b:]`` holds no result whose call lies in ``messages[:b]`` and does not
    open on results; ``ContextWindowOverflowException`` when there is none."""
    us = toolpair.units(messages, format=FORMAT)
    for u in us:
        if u.start < max(split_point, 1) or u.kind == "results":
            continue
        if toolpair.safe_cut(messages, u.start, keep="tail", format=FORMAT) == u.start:
            return u.start
    raise ContextWindowOverflowException("Unable to trim conversation context!")
