"""Handoffs (default, remove_all_tools, nested history) and cancelled streams (both
modes): every request valid with toolpair; a broken transcript forwarded by a handoff
is rejected without it; the session is never rewritten."""

from __future__ import annotations

import inspect

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool, handoff
from agents.extensions import handoff_filters
from agents.result import RunResultStreaming

import toolpair
from toolpair.integrations.openai_agents import with_toolpair

from .harness import (
    Server,
    call,
    calls_cut_from_reasoning,
    fc,
    message,
    provider_for,
    reasoning,
    stored,
    user,
)

pytestmark = pytest.mark.anyio


@function_tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"sunny in {city}"


MODES = ["default", "remove_all_tools"]
if hasattr(handoff_filters, "nest_handoff_history"):
    MODES.append("nested")


def _agents(mode: str):
    b = Agent(name="b", tools=[lookup], model="gpt-5")
    if mode == "remove_all_tools":
        target = handoff(b, input_filter=handoff_filters.remove_all_tools)
    elif mode == "nested":
        target = handoff(b, input_filter=handoff_filters.nest_handoff_history)
    else:
        target = b
    a = Agent(name="a", tools=[lookup], handoffs=[target], model="gpt-5")
    return a


def _script():
    r1 = reasoning("lookup first")
    return [
        [r1, call("lookup", {"city": "Paris"})],
        [reasoning("hand over"), call("transfer_to_b", {})],
        [message("b here: sunny")],
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("poisoned", [False, True], ids=["clean", "dangling-input"])
async def test_handoff_requests(mode, poisoned):
    given = [user("weather?")]
    if poisoned:
        given = [user("earlier"), fc("call_old", item_id="fc_old"), user("weather?")]
    raw = Server(_script())
    await Runner.run(
        _agents(mode), list(given), run_config=RunConfig(model_provider=provider_for(raw))
    )
    srv = Server(_script())
    rc = with_toolpair(RunConfig(model_provider=provider_for(srv)))
    result = await Runner.run(_agents(mode), list(given), run_config=rc)
    assert result.last_agent.name == "b"
    assert len(srv.bodies) == 3
    for body in srv.bodies:
        assert toolpair.validate(body, "openai-responses") == []
        transcript = [i for b in srv.bodies for i in b["input"]]
        assert calls_cut_from_reasoning(body["input"], transcript) == []
    if poisoned and mode == "default":
        # The dangling call of the caller's input reaches agent b as it was.
        assert toolpair.validate(raw.bodies[-1], "openai-responses")


@pytest.mark.skipif(
    "mode" not in inspect.signature(RunResultStreaming.cancel).parameters,
    reason="cancel(mode=...) is 0.4.0+",
)
@pytest.mark.parametrize("mode", ["immediate", "after_turn"])
@pytest.mark.parametrize("trigger", ["reasoning_item_created", "tool_called", "tool_output"])
async def test_cancelled_stream_then_next_turn(mode, trigger):
    """A stream cancelled at each point of a parallel tool turn, then the next turn on
    the same session: both requests valid without and with toolpair, and the session
    holds exactly what the SDK wrote."""
    for wrap in (False, True):
        turn = [reasoning(), call("lookup", {"city": "Paris"}), call("lookup", {"city": "Rome"})]
        srv = Server([turn] * 3)
        session = SQLiteSession("cancel")
        rc = RunConfig(model_provider=provider_for(srv))
        if wrap:
            rc = with_toolpair(rc)
        agent = Agent(name="a", tools=[lookup], model="gpt-5")
        result = Runner.run_streamed(agent, "weather?", run_config=rc, session=session)
        async for event in result.stream_events():
            if getattr(event, "name", None) == trigger:
                result.cancel(mode=mode)
        kept = await stored(session)
        srv.replies[:] = [[message("sunny")]]
        await Runner.run(agent, "and now?", run_config=rc, session=session)
        for body in srv.bodies:
            assert toolpair.validate(body, "openai-responses") == []
        assert (await stored(session))[: len(kept)] == kept
