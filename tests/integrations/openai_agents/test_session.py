"""Sessions: SQLiteSession (in memory) through the real runner and Responses model.
The SDK's own limit and the docs' recipes send broken input; PairSafeSession,
trim_filter and with_toolpair send it whole; the stored items are never rewritten."""

from __future__ import annotations

import copy

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession

import toolpair
from toolpair.integrations.openai_agents import PairSafeSession, trim_filter, with_toolpair

from .harness import (
    Server,
    calls_cut_from_reasoning,
    history_with_tools,
    message,
    stored,
    user,
)

pytestmark = pytest.mark.anyio

try:
    from agents.memory import SessionSettings
except ImportError:  # before 0.8.0
    SessionSettings = None

needs_settings = pytest.mark.skipif(SessionSettings is None, reason="SessionSettings is 0.8.0+")


async def _session(history: list[dict], name: str = "s") -> SQLiteSession:
    s = SQLiteSession(name)
    await s.add_items(copy.deepcopy(history))
    return s


async def _turn(session, run_config=None) -> dict:
    srv = Server([[message("ok")]])
    agent = Agent(name="a", model=srv.responses_model())
    await Runner.run(agent, "new question", session=session, run_config=run_config)
    return srv.bodies[0]


async def _assert_unchanged(session, history: list[dict]) -> None:
    """The stored history is as it was, and what the run appended is the SDK's own new
    turn (the user message and the model's reply), nothing toolpair made."""
    now = await stored(session)
    assert now[: len(history)] == history
    added = now[len(history) :]
    assert [i.get("role") or i.get("type") for i in added] == ["user", "assistant"]


@needs_settings
async def test_session_limit_cuts_reasoning_and_pair_safe_session_does_not():
    history = history_with_tools(3)
    broken = []
    for limit in range(1, len(history) + 1):
        rc = RunConfig(session_settings=SessionSettings(limit=limit))
        raw = await _turn(await _session(history), rc)
        cut = calls_cut_from_reasoning(raw["input"], history)
        broken += cut
        if cut:
            # The core validator's strict set (no model) sees it too: an fc_ call with no
            # reasoning item before it.
            codes = [v.code for v in toolpair.validate(raw["input"], "openai-responses")]
            assert "openai-responses.call_without_reasoning" in codes, limit

        s = await _session(history)
        body = await _turn(PairSafeSession(s), rc)
        assert calls_cut_from_reasoning(body["input"], history) == [], limit
        assert toolpair.validate(body, "openai-responses") == [], limit
        await _assert_unchanged(s, history)

        s = await _session(history)
        body = await _turn(s, with_toolpair(rc))
        # For gpt-5 the request alone cannot show the cut (its server takes an fc_ item
        # it stored without reasoning), so with_toolpair leaves it: PairSafeSession,
        # which reads the stored items, is the fix (above).
        assert toolpair.validate(body, "openai-responses") == [], limit
        await _assert_unchanged(s, history)
    assert broken, "the SDK's limit never cut a call from its reasoning item"


@pytest.mark.skipif(
    not hasattr(RunConfig, "__dataclass_fields__")
    or "session_input_callback" not in RunConfig.__dataclass_fields__,
    reason="session_input_callback is 0.3.0+",
)
async def test_docs_session_callback_recipe():
    """The docs' `history[-10:] + new_input` callback leaves a call's output first."""
    history = [*history_with_tools(3), user("thanks"), user("more"), user("again")]
    assert history[-10]["type"] == "function_call_output"

    def recipe(h, new):
        return h[-10:] + new

    raw = await _turn(await _session(history), RunConfig(session_input_callback=recipe))
    assert toolpair.validate(raw, "openai-responses")

    s = await _session(history)
    body = await _turn(s, with_toolpair(RunConfig(session_input_callback=recipe)))
    assert toolpair.validate(body, "openai-responses") == []
    assert calls_cut_from_reasoning(body["input"], history) == []
    await _assert_unchanged(s, history)


async def test_trim_filter_keeps_whole_units_within_budget():
    history = history_with_tools(6)
    srv = Server([[message("ok")]])
    agent = Agent(name="a", model=srv.responses_model())
    s = await _session(history)
    budget = 60
    await Runner.run(
        agent,
        "new question",
        session=s,
        run_config=RunConfig(call_model_input_filter=trim_filter(budget)),
    )
    sent = srv.bodies[0]["input"]
    assert len(sent) < len(history)
    assert toolpair.validate(srv.bodies[0], "openai-responses") == []
    assert calls_cut_from_reasoning(sent, history) == []
    assert sent[-1] == {"role": "user", "content": "new question"}
    assert toolpair.count_tokens(sent, format="openai-responses") <= budget
    await _assert_unchanged(s, history)


async def test_get_items_limit_returns_whole_units_only():
    history = history_with_tools(3)
    s = PairSafeSession(await _session(history))
    for limit in range(1, len(history) + 2):
        got = await s.get_items(limit=limit)
        assert got == history[len(history) - len(got) :]
        assert len(got) <= max(limit, 4)
        assert calls_cut_from_reasoning(got, history) == []
        assert toolpair.validate(got, "openai-responses") == []
    assert await s.get_items() == history


async def test_get_items_never_opens_with_a_stored_orphan_output(caplog):
    history = [
        {"type": "function_call_output", "call_id": "call_lost", "output": "x"},
        *history_with_tools(1),
    ]
    inner = await _session(history)
    s = PairSafeSession(inner)
    with caplog.at_level("WARNING", logger="toolpair"):
        assert (await s.get_items(limit=100))[0] == user("question 0")
    # Left out, and said so: an output whose call is gone has no truthful repair.
    assert "orphan_result_dropped" in caplog.text and "call_lost" in caplog.text
    assert await s.get_items() == history[1:]
    assert await stored(inner) == history


async def test_pop_item_removes_a_whole_unit():
    history = history_with_tools(2)
    inner = await _session(history)
    s = PairSafeSession(inner)
    # The newest unit is the final message; before it the reasoning, call and output.
    assert await s.pop_item() == history[-1]
    assert await stored(inner) == history[:-1]
    assert await s.pop_item() == history[-2]
    assert await stored(inner) == history[:-4]
    # The SDK's own rewinds (they pass wrapper=) pop exactly one item.
    assert await s.pop_item(wrapper=object()) == history[-5]
    assert await stored(inner) == history[:-5]


async def test_pair_safe_session_through_multi_turn_runs():
    """Turns with tool calls through PairSafeSession store exactly what SQLiteSession
    alone stores."""
    from .harness import call
    from .test_wire import lookup

    async def run(session):
        srv = Server([[call("lookup", {"city": "Paris"})], [message("sunny")]] * 2)
        agent = Agent(name="a", tools=[lookup], model=srv.responses_model())
        for q in ("q1", "q2"):
            await Runner.run(agent, q, session=session)
        return srv

    plain = SQLiteSession("p")
    await run(plain)
    safe_inner = SQLiteSession("q")
    await run(PairSafeSession(safe_inner))
    a, b = await stored(plain), await stored(safe_inner)
    assert [i.get("type") or i.get("role") for i in a] == [
        i.get("type") or i.get("role") for i in b
    ]
