"""Checks and repairs of what a Strands ``RepositorySessionManager`` (file, S3,
AgentCore, or any ``SessionRepository``) holds for an agent.

Both read the stored log the way ``RepositorySessionManager.initialize`` restores it
(from the conversation manager's ``removed_message_count``, after the summary it keeps)
and write nothing: the stored log is append-only, and the repair is what a request
should carry, which `ToolpairModel` / `ToolpairPlugin` build at every request anyway.
Strands' own restore-time fix (``_fix_broken_tool_use``, 1.x) drops orphaned results
and leaves text beside results; `repair_session` keeps every real result and text,
answers an interrupted call with an error result, and follows the provider's rules.
"""

from __future__ import annotations

from typing import Any

import toolpair
from toolpair import Policy, Repaired, Violation

from ._detect import detect_provider
from ._model import FORMAT, repair_messages


def stored_messages(session_manager: Any, agent_id: str = "default") -> list[Any]:
    """The messages ``session_manager`` restores for ``agent_id``, as it restores them
    (before Strands' own restore-time fix)."""
    repo = session_manager.session_repository
    session_id = session_manager.session_id
    stored = repo.read_agent(session_id, agent_id)
    if stored is None:
        raise LookupError(f"session {session_id!r} has no agent {agent_id!r}")
    state = stored.conversation_manager_state or {}
    offset = int(state.get("removed_message_count", 0))
    prepend = [state["summary_message"]] if state.get("summary_message") else []
    records = repo.list_messages(session_id=session_id, agent_id=agent_id, offset=offset)
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
) -> Repaired:
    """The stored history of ``agent_id`` repaired for ``provider`` (``.messages``, and
    every change in ``.fixes``). Nothing is written to the session."""
    if agent is not None:
        agent_id = agent.agent_id
    target, model_id = _target(agent, provider, model)
    messages = stored_messages(session_manager, agent_id)
    return repair_messages(messages, target, model=model_id, policy=policy)
