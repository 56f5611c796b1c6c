"""Checks and repairs of what a Strands ``RepositorySessionManager`` (file, S3,
AgentCore, or any ``SessionRepository``) holds for an agent.

Both read the stored log the way ``RepositorySessionManager.initialize`` restores it
(from the conversation manager's ``removed_message_count``, after the summary or opening
turn it keeps). `repair_session` then writes the repair through the session's own
repository, the smallest change its layout allows: the log is a numbered list of
message records that the repository can update and append to but not delete from, so a
repair that only changes or adds messages updates the changed records in place and
appends the new ones; one that leaves fewer messages (an orphaned result dropped, two
turns merged) appends the whole repaired history after the log and moves the
conversation manager's ``removed_message_count`` to it, so the restore starts there and
the old records stay behind it. Strands' own restore-time fix (``_fix_broken_tool_use``,
1.x) drops orphaned results and leaves text beside results; `repair_session` keeps every
real result and text, answers an interrupted call with an error result, and follows the
provider's rules.
"""

from __future__ import annotations

from typing import Any

import toolpair
from toolpair import Policy, Repaired, ToolpairError, Violation

from ._detect import detect_provider
from ._model import FORMAT, repair_messages


class SessionInUse(ToolpairError, RuntimeError):
    """The session manager already restored this agent into a live ``Agent``: a write
    under it would be overwritten by the agent's next sync. Nothing was written."""


#: Where Strands' conversation managers keep the turn they put in front of the log:
#: ``SummarizingConversationManager``'s summary, `PairSafeConversationManager`'s opening.
_PREPENDED = ("summary_message", "opening_message")


def _read(session_manager: Any, agent_id: str) -> tuple[Any, list[Any], list[Any], int]:
    """(the stored agent, the prepended turns, the records restored, their offset)."""
    repo = session_manager.session_repository
    session_id = session_manager.session_id
    stored = repo.read_agent(session_id, agent_id)
    if stored is None:
        raise LookupError(f"session {session_id!r} has no agent {agent_id!r}")
    state = stored.conversation_manager_state or {}
    offset = int(state.get("removed_message_count", 0))
    prepend = [state[k] for k in _PREPENDED if state.get(k)]
    records = repo.list_messages(session_id=session_id, agent_id=agent_id, offset=offset)
    return stored, prepend, list(records), offset


def stored_messages(session_manager: Any, agent_id: str = "default") -> list[Any]:
    """The messages ``session_manager`` restores for ``agent_id``, as it restores them
    (before Strands' own restore-time fix)."""
    _, prepend, records, _ = _read(session_manager, agent_id)
    return prepend + [r.to_message() for r in records]


def _target(agent: Any, provider: str | None, model: str | None) -> tuple[str, str | None]:
    if agent is not None:
        found, model_id = detect_provider(agent.model)
        return provider or found, model if model is not None else model_id
    return provider or "bedrock", model


def check_session(
    session_manager: Any,
    agent_id: str = "default",
    *,
    provider: str | None = None,
    model: str | None = None,
    agent: Any = None,
) -> list[Violation]:
    """Every violation ``provider`` would reject in the stored history of ``agent_id``.

    With ``agent``, its ``agent_id`` and the provider of its model are used (an explicit
    ``provider`` / ``model`` still wins); without either, Bedrock's rules."""
    if agent is not None:
        agent_id = agent.agent_id
    target, model_id = _target(agent, provider, model)
    messages = stored_messages(session_manager, agent_id)
    return toolpair.validate(messages, target, model=model_id, format=FORMAT)


def repair_session(
    session_manager: Any,
    agent_id: str = "default",
    *,
    provider: str | None = None,
    model: str | None = None,
    policy: Policy | None = None,
    agent: Any = None,
    dry_run: bool = False,
) -> Repaired:
    """Repair the stored history of ``agent_id`` for ``provider`` and write it through
    ``session_manager``'s repository, so every later restore (with or without toolpair)
    gets it. Returns the report: ``.messages`` the repaired history, ``.fixes`` every
    change. ``dry_run=True`` only reports. A healthy session is not written to, and a
    second call writes nothing.

    The write is the smallest the repository allows: changed records updated in place
    and new ones appended; when the repair leaves fewer messages (records cannot be
    deleted), the repaired history is appended after the log and the conversation
    manager's ``removed_message_count`` moved to it. A repair that would change the
    summary or opening turn the manager keeps in its state is not written (`ValueError`).
    Repair the session before an agent restores it: `SessionInUse` when this session
    manager already has the agent (its next sync would overwrite the repair)."""
    if agent is not None:
        agent_id = agent.agent_id
    target, model_id = _target(agent, provider, model)
    stored, prepend, records, _ = _read(session_manager, agent_id)
    log = [r.to_message() for r in records]
    result = repair_messages(prepend + log, target, model=model_id, policy=policy)
    if dry_run or not result.changed:
        return result
    fixed = list(result.messages)
    if len(fixed) < len(prepend) or any(a is not b for a, b in zip(fixed, prepend, strict=False)):
        raise ValueError(
            "the repair changes the summary or opening turn the conversation manager keeps "
            "in its state, which the session's message log cannot hold: nothing was written "
            "(the plugin repairs each request instead)"
        )
    live = getattr(session_manager, "_latest_agent_message", None)
    if isinstance(live, dict) and agent_id in live:
        raise SessionInUse(
            f"this session manager already restored agent {agent_id!r} into a live Agent, "
            "whose next sync would overwrite the repair: nothing was written. Repair with a "
            "new session manager for the same session before the agent is created"
        )
    _write(session_manager, agent_id, stored, records, fixed[len(prepend) :])
    return result


def _write(
    session_manager: Any,
    agent_id: str,
    stored: Any,
    records: list[Any],
    new: list[Any],
) -> None:
    from strands.types.session import SessionMessage

    repo = session_manager.session_repository
    session_id = session_manager.session_id
    old = [r.to_message() for r in records]
    everything = repo.list_messages(session_id=session_id, agent_id=agent_id)
    next_id = (everything[-1].message_id + 1) if everything else 0
    if len(new) >= len(old):
        for record, before, after in zip(records, old, new[: len(old)], strict=True):
            if after is not before:
                # What the restore reads: the redacted text where there is one.
                if record.redact_message is not None:
                    record.redact_message = after
                else:
                    record.message = after
                repo.update_message(session_id, agent_id, record)
        for k, message in enumerate(new[len(old) :]):
            repo.create_message(
                session_id, agent_id, SessionMessage.from_message(message, next_id + k)
            )
        return
    # Fewer messages: the repaired history after the log, and the restore moved to it.
    for k, message in enumerate(new):
        repo.create_message(session_id, agent_id, SessionMessage.from_message(message, next_id + k))
    state = dict(stored.conversation_manager_state or {})
    state["removed_message_count"] = len(everything)
    stored.conversation_manager_state = state
    repo.update_agent(session_id, stored)
