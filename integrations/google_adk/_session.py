"""Checking and repairing a stored ADK session through its ``SessionService``.

Some breaks raise while ADK builds the request, before any callback runs (an orphaned
response on releases up to 2.10, #6582), and a call that was never answered stays in the
session for good. Sessions are append-only logs, so repair appends: one function
response event per broken call event, answering its unanswered calls with the neutral
error result. Nothing is rewritten or deleted; a response whose call is nowhere in the
session cannot be fixed by appending and is reported as unrepaired.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from toolpair import Fix, Policy, Repaired, Violation

UNANSWERED = "google_adk.unanswered_call"
ORPHAN = "google_adk.orphan_response"


def _scan(
    events: list[Any],
) -> tuple[list[tuple[int, Any, list[Any]]], list[tuple[int, list[str]]]]:
    """(call events with their unanswered calls, orphan responses by event), in order.

    A call with no id (a model reached through LiteLLM that gave none, #2621) is
    answered by the next id-less response of the same name, as Gemini pairs them, by
    name and place; an id-less response with no such call before it is an orphan, named
    by its function name."""
    answered: set[str] = set()
    long_running: set[str] = set()
    called: set[str] = set()
    waiting: dict[str | None, list[int]] = {}  # name -> id() of its id-less calls, in order
    idless_answered: set[int] = set()
    orphans: list[tuple[int, list[str]]] = []
    for i, ev in enumerate(events):
        long_running.update(getattr(ev, "long_running_tool_ids", None) or ())
        for fc in ev.get_function_calls():
            if fc.id:
                called.add(fc.id)
            else:
                waiting.setdefault(fc.name, []).append(id(fc))
        lost = []
        for fr in ev.get_function_responses():
            if fr.id:
                answered.add(fr.id)
                if fr.id not in called:
                    lost.append(fr.id)
            elif waiting.get(fr.name):
                idless_answered.add(waiting[fr.name].pop(0))
            else:
                lost.append(fr.name or "")
        if lost:
            orphans.append((i, lost))
    dangling = []
    for i, ev in enumerate(events):
        # A long-running call (confirmation, auth, LongRunningFunctionTool) is waiting
        # for its answer, not broken.
        calls = [
            fc
            for fc in ev.get_function_calls()
            if (fc.id and fc.id not in answered and fc.id not in long_running)
            or (not fc.id and id(fc) not in idless_answered)
        ]
        if calls:
            dangling.append((i, ev, calls))
    return dangling, orphans


def _named(fc: Any) -> str:
    """How a call is named in a report: its id, or its function name when it has none."""
    return str(fc.id) if fc.id else str(fc.name or "")


async def _load(session_service: Any, app_name: str, user_id: str, session_id: str) -> Any:
    session = await session_service.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        raise LookupError(f"no session {session_id!r} for app {app_name!r}, user {user_id!r}")
    return session


async def check_session(
    session_service: Any, app_name: str, user_id: str, session_id: str
) -> list[Violation]:
    """What in the stored session breaks a pair: calls no event answers (other than
    long-running calls awaiting their answer) and responses whose call is in no event.
    ``index`` is the event's position in ``session.events``. A call or response with no
    id pairs by function name and place (as Gemini pairs them) and is named in ``ids``
    by its function name."""
    session = await _load(session_service, app_name, user_id, session_id)
    dangling, orphans = _scan(list(session.events))
    out = [
        Violation(
            UNANSWERED,
            "Dropping function calls with no matching function response: "
            + str([_named(fc) for fc in calls]),
            i,
            tuple(_named(fc) for fc in calls),
            f"events[{i}]",
        )
        for i, _, calls in dangling
    ]
    out += [
        Violation(
            ORPHAN,
            f"No function call event found for function responses ids: {set(ids)}",
            i,
            tuple(ids),
            f"events[{i}]",
        )
        for i, ids in orphans
    ]
    out.sort(key=lambda v: v.index)
    return out


async def repair_session(
    session_service: Any,
    app_name: str,
    user_id: str,
    session_id: str,
    *,
    policy: Policy | None = None,
    dry_run: bool = False,
    allow_partial: bool = False,
) -> Repaired:
    """Append a function response event answering each event's unanswered calls with
    ``{"error": policy.placeholder}``, authored by the call's author on its branch.
    Returns the report: ``messages`` holds the appended events, ``fixes`` what was done
    (and ``unrepaired`` for orphaned responses). Running it again appends nothing.

    A session that appending cannot make valid (an orphaned response stays) is left as
    it is, and the report says what would have been appended, unless ``allow_partial``:
    a write that leaves the session refused is a write the user did not ask for."""
    from google.adk.events import Event
    from google.genai import types

    policy = policy or Policy()
    session = await _load(session_service, app_name, user_id, session_id)
    dangling, orphans = _scan(list(session.events))
    write = not dry_run and (allow_partial or not orphans)
    appended: list[Any] = []
    fixes: list[Fix] = []
    for i, ev, calls in dangling:
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=fc.id, name=fc.name, response={"error": policy.placeholder}
                )
            )
            for fc in calls
        ]
        event = Event(
            invocation_id=f"toolpair-{uuid.uuid4().hex[:12]}",
            author=ev.author,
            branch=ev.branch,
            content=types.Content(role="user", parts=parts),
            timestamp=max(time.time(), session.last_update_time or 0.0),
        )
        if write:
            event = await session_service.append_event(session, event)
        appended.append(event)
        done = "was appended" if write else "would be appended (not written)"
        fixes.append(
            Fix(
                "synthetic_result",
                i,
                tuple(_named(fc) for fc in calls),
                f"a function response event answering the unanswered call(s) {done}",
            )
        )
    for i, ids in orphans:
        fixes.append(
            Fix(
                "unrepaired",
                i,
                tuple(ids),
                "a function response whose call is in no event: an append-only session "
                "cannot take it back",
            )
        )
    fixes.sort(key=lambda f: f.index)
    return Repaired(appended, fixes, {}, "google-adk", "google-adk")
