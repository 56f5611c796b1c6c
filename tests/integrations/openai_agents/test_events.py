"""What a repaired request reports, on a real Agents SDK run: one `RepairEvent` per
repaired model call (source "openai_agents"), the same event to ``on_repair``, whether
the model wrapper or the input filter repairs it."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, RunConfig, Runner

import toolpair
from toolpair import RepairEvent
from toolpair.integrations.openai_agents import ToolpairInputFilter, with_toolpair

from .harness import Server, call, message, user


def _dangling() -> list[Any]:
    return [user("weather?"), call("get_weather", {"city": "Paris"}), user("still there?")]


def _run(run_config: RunConfig) -> Server:
    srv = Server([[message("done")]])
    Runner.run_sync(
        Agent(name="a", model=srv.responses_model()), _dangling(), run_config=run_config
    )
    assert len(srv.bodies) == 1
    return srv


@pytest.mark.parametrize("how", ["with_toolpair", "filter"])
def test_one_event_per_repaired_request(how: str, subscribed: list[RepairEvent]) -> None:
    seen: list[RepairEvent] = []
    if how == "with_toolpair":
        rc = with_toolpair(on_repair=seen.append)
    else:
        rc = RunConfig(call_model_input_filter=ToolpairInputFilter(on_repair=seen.append))
    srv = _run(rc)
    assert toolpair.validate(srv.bodies[-1], "openai-responses") == []
    assert len(seen) == 1
    assert seen == subscribed
    assert (seen[0].source, seen[0].provider) == ("openai_agents", "openai-responses")
    assert seen[0].fixes.get("synthetic_result") == 1
