"""The no-op path for agno histories: one pass over the ``Message`` objects that says
"certainly valid" without decoding them (see ``toolpair.engine.fast``).

Repair runs before every agno request and nearly every stored history is valid, so this
pass is what a request normally pays. Each checker mirrors what `AgnoCodec.decode`
makes of a message and what the provider's rules then check, and gives up (None: the
full path) on anything it does not model exactly: list content other than text,
Responses ``call_id`` mapping, context the rules read, anything decode would reject.
Where it is stricter than the rules (a blank text of any kind) it only costs a full pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agno.models.message import Message as AgnoMessage

from toolpair.engine.fast import Frag
from toolpair.formats import content_is_empty
from toolpair.providers import Context

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+").fullmatch

#: agno role -> the side of the conversation it is on once sent to Anthropic: tool
#: messages become results in a user turn, system messages leave the turn list.
_SIDE = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "tool": "tool",
    "assistant": "assistant",
    "model": "assistant",
}


def _texts(content: Any) -> list[str] | None:
    """The texts the codec makes of content that is not a string, or None where it
    makes anything else (or would reject it), or where a text is blank."""
    if content is None:
        return []
    if type(content) is not list:
        return None
    out = []
    for part in content:
        text = part if type(part) is str else part["text"] if part["type"] == "text" else None
        if type(text) is not str or not text or text.isspace():
            return None
        out.append(text)
    return out


class _Whole(ValueError):
    """Raised by a fragment check where only the full path gives the right answer.

    The full path rewrites what it repairs as a whole: it also moves a system message
    out from between a call and its results, drops an empty message and fills in an
    empty error result, though a provider's rules may find nothing wrong with them.
    Pieces leave every clean exchange untouched, so a history holding one of them must
    not be repaired in pieces at all, whichever piece it is in. `toolpair.engine.chunked`
    takes a ValueError as "the full path"; None would only make the exchange a piece of
    its own, repaired apart from the rest."""


def _reasons(m: Any) -> bool:
    return bool(m.reasoning_content or m.redacted_reasoning_content)


def _calls_or_media(m: Any) -> bool:
    return bool(m.tool_calls or m.images or m.audio or m.videos or m.files)


def _media_lists(m: Any) -> bool:
    """Whether every media field of ``m`` the codec would iterate is a list."""
    return all(not media or type(media) is list for media in (m.images, m.audio, m.videos, m.files))


def side(m: Any) -> str:
    """The side of a piece boundary a message is on (see `toolpair.engine.chunked`): "u" for
    user and tool messages, "a" for the rest. System messages count as "a" so that a
    boundary (an "a" right after a "u") always follows a user-side message: Anthropic
    leaves system messages out of its turns, so a fragment starting after one would
    otherwise continue whatever turn came before it."""
    if type(m) is AgnoMessage or isinstance(m, AgnoMessage):
        return _BOUNDARY[m.role]  # KeyError on a role decode rejects: the full path's
    raise TypeError("not an agno Message")  # the full path names it


_BOUNDARY = {
    "system": "a",
    "developer": "a",
    "user": "u",
    "tool": "u",
    "assistant": "a",
    "model": "a",
}


_NONE: frozenset[str] = frozenset()


def anthropic(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Anthropic's rules read merged turns (consecutive messages of one side are one
    turn, system messages are left out): a turn with calls is followed by a user turn
    that opens with exactly one result per call, nothing follows a call in its turn,
    call ids are unique and well formed, and the final assistant text has no trailing
    whitespace.

    Given a ``frag``, ``msgs`` are a piece of a longer history: one that is not first
    follows a user-side message, the trailing-whitespace rule is the last piece's only,
    and ids are unique across every piece (``frag.seen``)."""
    if ctx.thinking is not None or ctx.tools is not None:
        if frag is not None:
            raise _Whole  # see `certainly_valid`
        return None
    seen: set[str] = set()
    taken = frag.seen if frag is not None else _NONE
    thought = False
    calls: list[str] | None = None  # the calls of the current assistant turn
    remaining: set[str] | None = None  # results still due at the head of this user turn
    lead = False  # nothing but results so far in this user turn
    side_prev = "user" if frag is not None and not frag.first else ""
    # The text of the current assistant turn's last block, if that block is a text.
    tail: str | None = None
    for m in msgs:
        if type(m) is not AgnoMessage and not isinstance(m, AgnoMessage):
            return None
        role = m.role
        if role == "tool":
            if side_prev != "user":
                remaining = set(calls) if calls is not None else None
                calls = None
                lead = True
                side_prev = "user"
            i = m.tool_call_id
            if not lead or remaining is None or i not in remaining or m.tool_calls:
                return None
            remaining.discard(i)
            if m.tool_call_error and content_is_empty(m.content):
                return None
            continue
        side = _SIDE[role]
        content = m.content
        # Plain string content is the common case: read it here, lists in `_texts`.
        if type(content) is str:
            if content.isspace():
                return None
            last = content or None
        elif content is None:
            last = None
        else:
            texts = _texts(content)
            if texts is None:
                return None
            last = texts[-1] if texts else None
        if m.images or m.audio or m.videos or m.files:
            if not _media_lists(m):
                return None
            media = True
        else:
            media = False
        if frag is not None and (
            (side == "system" and side_prev)
            or (last is None and not media and not m.tool_calls and not _reasons(m))
        ):
            raise _Whole
        if side == "system":
            if m.tool_calls:
                return None
            continue
        if side != side_prev:
            if side == "user":
                remaining = set(calls) if calls is not None else None
                calls = None
                lead = True
            else:
                if remaining:
                    return None
                remaining = None
                tail = None
            side_prev = side
        if side == "user":
            if m.tool_calls:
                return None
            if last is not None or media:
                if remaining:
                    return None
                lead = False
            continue
        if last is not None or media:
            if calls is not None:
                return None  # content after a call of its turn
            tail = None if media else last
        if m.reasoning_content or m.redacted_reasoning_content:
            thought = True
            if last is None and not media:
                tail = None  # a thinking block is the turn's last block so far
        tcs = m.tool_calls
        if tcs:
            if type(tcs) is not list:
                return None
            for tc in tcs:
                i = tc["id"]
                if (
                    type(i) is not str
                    or i in seen
                    or i in taken
                    or not _ANTHROPIC_ID(i)
                    or "call_id" in tc
                ):
                    return None
                seen.add(i)
                if calls is None:
                    calls = [i]
                else:
                    calls.append(i)
            tail = None
    if remaining or (side_prev == "assistant" and calls is not None):
        return None
    if (
        (frag is None or frag.last)
        and side_prev == "assistant"
        and tail is not None
        and tail != tail.rstrip()
    ):
        return None
    if frag is not None and not frag.accept(seen, thought):
        return None
    return True


def openai(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """OpenAI Chat reads one turn per message: an assistant message with calls is
    followed at once by exactly one tool message per call, a tool message answers the
    calls right before it, and call ids are unique in their message and at most 40
    characters long.

    Given a ``frag``, ``msgs`` are a piece of a longer history (no rule here is about
    the first or last message); a piece reusing an id seen in another, or twice in
    itself, is refused, which OpenAI does not ask for but keeps the pieces apart."""
    if ctx.shape != "chat":
        if frag is not None:
            raise _Whole  # see `certainly_valid`
        return None
    ids: set[str] | None = set() if frag is not None else None
    first = frag is not None and frag.first
    thought = False
    due: set[str] | None = None  # calls of the last assistant message not answered yet
    for m in msgs:
        if type(m) is not AgnoMessage and not isinstance(m, AgnoMessage):
            return None
        role = _SIDE[m.role]
        if role == "tool":
            i = m.tool_call_id
            if due is None or i not in due or m.tool_calls:
                return None
            if ids is not None and m.tool_call_error and content_is_empty(m.content):
                raise _Whole  # the full path fills it in, though OpenAI takes it
            due.discard(i)
            continue
        if due:
            return None
        due = None
        content = m.content
        if content is not None and type(content) is not str and type(content) is not list:
            return None
        if ids is not None and (
            (role == "system" and not first)
            or (not content and not _calls_or_media(m) and not _reasons(m))
        ):
            raise _Whole
        first = False
        if (m.images or m.audio or m.videos or m.files) and not _media_lists(m):
            return None
        if _reasons(m):
            thought = True
        tcs = m.tool_calls
        if not tcs:
            continue
        if role != "assistant" or type(tcs) is not list:
            return None
        due = set()
        for tc in tcs:
            i = tc["id"]
            if type(i) is not str or not i or len(i) > 40 or i in due or "call_id" in tc:
                return None
            due.add(i)
        if ids is not None:
            if not ids.isdisjoint(due):
                return None
            ids |= due
    if due:
        return None
    if frag is not None and ids is not None and not frag.accept(ids, thought):
        return None
    return True


CHECKERS = {"anthropic": anthropic, "openai": openai}


def certainly_valid(
    msgs: Sequence[Any], provider: str, ctx: Context, frag: Frag | None = None
) -> bool | None:
    """True only where ``provider``'s rules would find nothing in ``msgs`` (or, given a
    ``frag``, in them as that piece of a longer history).

    Given a ``frag`` where no fragment can be cleared (a provider or context without a
    checker here), this raises ValueError instead of returning None: `toolpair.engine.chunked`
    takes that as "the full path" at once, where None for every piece would have it
    decode and repair the whole history in one piece before the full path did it again."""
    check = CHECKERS.get(provider)
    if check is None:
        if frag is not None:
            raise _Whole
        return None
    return check(msgs, ctx, frag)
