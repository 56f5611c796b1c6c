"""Approval interruptions (0.8.0+): the bare call `to_input_list()` leaves, resuming
the RunState (approve and reject), and a rejected approval's own output kept."""

from __future__ import annotations

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool

import toolpair
from toolpair.integrations.openai_agents import with_toolpair

from .harness import Server, call, message, stored, user

pytestmark = pytest.mark.anyio

try:
    from agents import RunState  # noqa: F401
except ImportError:  # before 0.8.0
    pytest.skip("approvals and RunState are 0.8.0+", allow_module_level=True)


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _agent(srv: Server) -> Agent:
    return Agent(name="a", tools=[delete_file], model=srv.responses_model())


async def _park(srv: Server, run_config=None, session=None):
    result = await Runner.run(_agent(srv), "delete /tmp/x", run_config=run_config, session=session)
    assert result.interruptions, "the run did not stop for approval"
    return result


async def test_to_input_list_after_an_interruption_sends_a_bare_call():
    first = Server([[call("delete_file", {"path": "/tmp/x"})]])
    parked = await _park(first)
    items = parked.to_input_list()
    assert items[-1]["type"] == "function_call"
    follow_up = [*items, user("never mind, what time is it?")]

    raw = Server([[message("noon")]])
    await Runner.run(_agent(raw), follow_up)
    violations = toolpair.validate(raw.bodies[0], "openai-responses")
    assert "openai-responses.missing_output" in [v.code for v in violations]

    fixed = Server([[message("noon")]])
    await Runner.run(_agent(fixed), follow_up, run_config=with_toolpair())
    assert toolpair.validate(fixed.bodies[0], "openai-responses") == []


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_resume_after_approval_stays_valid_and_keeps_the_sdks_output(decision):
    srv = Server([[call("delete_file", {"path": "/tmp/x"})], [message("done")]])
    session = SQLiteSession("hitl")
    rc = with_toolpair()
    parked = await _park(srv, rc, session)
    before = await stored(session)
    state = parked.to_state()
    getattr(state, decision)(parked.interruptions[0])
    await Runner.run(_agent(srv), state, run_config=rc, session=session)
    body = srv.bodies[-1]
    assert toolpair.validate(body, "openai-responses") == []
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 1
    text = str(outputs[0]["output"])
    if decision == "approve":
        assert text == "deleted /tmp/x"
    else:
        # The SDK's own rejection text, not toolpair's neutral error result.
        assert "deleted" not in text and "toolpair" not in text.lower()
        assert "not" in text.lower() or "reject" in text.lower() or "denied" in text.lower()
    after = await stored(session)
    assert after[: len(before)] == before


async def test_resume_through_pair_safe_session_stores_what_the_sdk_stores():
    """Resuming a parked run writes through the SDK's checked session path (tail reads
    with exact limits): PairSafeSession stores the same items as the bare session."""
    from toolpair.integrations.openai_agents import PairSafeSession

    kinds = []
    for wrap in (False, True):
        srv = Server([[call("delete_file", {"path": "/tmp/x"})], [message("done")]])
        inner = SQLiteSession("hitl-safe")
        session = PairSafeSession(inner) if wrap else inner
        parked = await _park(srv, with_toolpair(), session)
        state = parked.to_state()
        state.approve(parked.interruptions[0])
        await Runner.run(_agent(srv), state, run_config=with_toolpair(), session=session)
        kinds.append([i.get("type") or i.get("role") for i in await stored(inner)])
        assert toolpair.validate(srv.bodies[-1], "openai-responses") == []
    assert kinds[0] == kinds[1]
    assert kinds[1].count("function_call_output") == 1
