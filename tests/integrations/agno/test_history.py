"""select_history cuts stored agno history where agno's own limit leaves orphans."""

from __future__ import annotations

import pytest
from agno.models.message import Message
from agno.session.agent import AgentSession

import toolpair
from toolpair.integrations import agno as tp_agno

from .harness import answer, ask, calls_ab, result


def stored() -> list[Message]:
    return [
        Message(role="system", content="Be brief."),
        ask(),
        calls_ab(),
        result("call_A"),
        result("call_B", "rainy"),
        answer(),
    ]


@pytest.mark.parametrize("limit", range(0, 7))
def test_no_limit_splits_a_pair(limit: int) -> None:
    history = stored()
    picked = tp_agno.select_history(history, limit)
    assert picked[0] is history[0]
    assert len(picked) - 1 <= limit
    assert all(any(m is h for h in history) for m in picked)
    assert tp_agno.validate_messages([*picked, Message(role="user", content="?")], "openai") == []


def test_agno_limit_with_a_system_message_leaves_an_orphan_that_select_history_does_not() -> None:
    from agno.run.agent import RunOutput
    from agno.run.base import RunStatus

    run = RunOutput(
        run_id="r", agent_id="a", session_id="s", status=RunStatus.completed, messages=stored()
    )
    session = AgentSession(session_id="s", agent_id="a", runs=[run])
    agno_pick = session.get_messages(limit=3)
    assert [m.role for m in agno_pick] == ["system", "tool", "assistant"]
    assert tp_agno.validate_messages(agno_pick, "anthropic")
    ours = tp_agno.select_history(run.messages, 3)
    assert [m.role for m in ours] == ["system", "assistant"]
    assert toolpair.validate([{"role": "user", "content": "?"}], "anthropic") == []
