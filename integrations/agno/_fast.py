"""The no-op path for agno histories: one pass over the ``Message`` objects that says
"certainly valid" without decoding them (see ``toolpair._fast``).

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

from toolpair.formats._common import content_is_empty
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


def _media_lists(m: Any) -> bool:
    """Whether every media field of ``m`` the codec would iterate is a list."""
    return all(not media or type(media) is list for media in (m.images, m.audio, m.videos, m.files))


def anthropic(msgs: Sequence[Any], ctx: Context) -> bool | None:
    """Anthropic's rules read merged turns (consecutive messages of one side are one
    turn, system messages are left out): a turn with calls is followed by a user turn
    that opens with exactly one result per call, nothing follows a call in its turn,
    call ids are unique and well formed, and the final assistant text has no trailing
    whitespace."""
    if ctx.thinking is not None or ctx.tools is not None:
        return None
    seen: set[str] = set()
    calls: list[str] | None = None  # the calls of the current assistant turn
    remaining: set[str] | None = None  # results still due at the head of this user turn
    lead = False  # nothing but results so far in this user turn
    side_prev = ""
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
        elif m.reasoning_content or m.redacted_reasoning_content:
            tail = None  # a thinking block is the turn's last block so far
        tcs = m.tool_calls
        if tcs:
            if type(tcs) is not list:
                return None
            for tc in tcs:
                i = tc["id"]
                if type(i) is not str or i in seen or not _ANTHROPIC_ID(i) or "call_id" in tc:
                    return None
                seen.add(i)
                if calls is None:
                    calls = [i]
                else:
                    calls.append(i)
            tail = None
    if remaining or (side_prev == "assistant" and calls is not None):
        return None
    if side_prev == "assistant" and tail is not None and tail != tail.rstrip():
        return None
    return True


def openai(msgs: Sequence[Any], ctx: Context) -> bool | None:
    """OpenAI Chat reads one turn per message: an assistant message with calls is
    followed at once by exactly one tool message per call, a tool message answers the
    calls right before it, and call ids are unique in their message and at most 40
    characters long."""
    if ctx.shape != "chat":
        return None
    due: set[str] | None = None  # calls of the last assistant message not answered yet
    for m in msgs:
        if type(m) is not AgnoMessage and not isinstance(m, AgnoMessage):
            return None
        role = _SIDE[m.role]
        if role == "tool":
            i = m.tool_call_id
            if due is None or i not in due or m.tool_calls:
                return None
            due.discard(i)
            continue
        if due:
            return None
        due = None
        content = m.content
        if content is not None and type(content) is not str and type(content) is not list:
            return None
        if (m.images or m.audio or m.videos or m.files) and not _media_lists(m):
            return None
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
    return None if due else True


CHECKERS = {"anthropic": anthropic, "openai": openai}


def certainly_valid(msgs: Sequence[Any], provider: str, ctx: Context) -> bool | None:
    check = CHECKERS.get(provider)
    return None if check is None else check(msgs, ctx)
