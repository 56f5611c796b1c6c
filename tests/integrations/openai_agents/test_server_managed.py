"""Server-managed runs (previous_response_id, conversation_id, auto_previous_response_id):
with_toolpair finds out through the models its provider resolves and leaves a lone
output alone, because its call lives on the server (Responses R8)."""

from __future__ import annotations

import inspect

import pytest
from agents import Agent, RunConfig, Runner, function_tool

import toolpair
from toolpair.integrations.openai_agents import ToolpairInputFilter, with_toolpair

from .harness import Server, call, message, out, provider_for

pytestmark = pytest.mark.anyio

_RUN_ARGS = inspect.signature(Runner.run).parameters


@function_tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"sunny in {city}"


async def _continue(srv: Server, run_config: RunConfig, streamed=False, **server_ids):
    """A run that resumes a stored response: its input is the output of the call the
    stored response made."""
    agent = Agent(name="a", tools=[lookup], model="gpt-5")
    items = [out("call_on_server", "sunny")]
    if streamed:
        result = Runner.run_streamed(agent, items, run_config=run_config, **server_ids)
        async for _ in result.stream_events():
            pass
    else:
        await Runner.run(agent, items, run_config=run_config, **server_ids)
    return srv.bodies[0]


SERVER_IDS = [{"previous_response_id": "resp_stored"}]
if "conversation_id" in _RUN_ARGS:
    SERVER_IDS.append({"conversation_id": "conv_stored"})


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
@pytest.mark.parametrize("ids", SERVER_IDS, ids=lambda d: next(iter(d)))
@pytest.mark.parametrize("where", ["provider", "run_config.model"])
async def test_lone_output_is_kept_in_a_server_managed_run(ids, where, streamed):
    raw = Server([[message("ok")]])
    raw_body = await _continue(raw, RunConfig(model_provider=provider_for(raw)), **ids)
    assert raw_body["input"][0]["call_id"] == "call_on_server"

    srv = Server([[message("ok")]])
    if where == "provider":
        rc = with_toolpair(RunConfig(model_provider=provider_for(srv)))
    else:
        rc = with_toolpair(RunConfig(model=srv.responses_model()))
    body = await _continue(srv, rc, streamed=streamed, **ids)
    assert body["input"] == raw_body["input"]
    assert toolpair.validate(body, "openai-responses", previous_response_id="server") == []


async def test_the_bare_filter_keeps_the_lone_output_of_a_server_managed_run():
    """The SDK hands filters no server ids; the bare filter reads them from the run loop
    that calls it, so the lone output is kept here too."""
    srv = Server([[message("ok")]])
    rc = RunConfig(model_provider=provider_for(srv), call_model_input_filter=ToolpairInputFilter())
    body = await _continue(srv, rc, previous_response_id="resp_stored")
    assert [i.get("call_id") for i in body["input"]] == ["call_on_server"]
    assert body["previous_response_id"] == "resp_stored"


@pytest.mark.skipif("auto_previous_response_id" not in _RUN_ARGS, reason="0.6.2+")
async def test_auto_previous_response_id_tool_loop_is_sent_as_the_sdk_sends_it():
    bodies = []
    for wrap in (False, True):
        srv = Server([[call("lookup", {"city": "Paris"})], [message("sunny")]])
        rc = RunConfig(model_provider=provider_for(srv))
        if wrap:
            rc = with_toolpair(rc)
        agent = Agent(name="a", tools=[lookup], model="gpt-5")
        await Runner.run(agent, "weather?", run_config=rc, auto_previous_response_id=True)
        bodies.append(srv.bodies)
    raw, fixed = bodies
    assert len(raw) == len(fixed) == 2
    # The second request sends only the output, chained to the first response.
    assert [i["type"] for i in fixed[1]["input"]] == ["function_call_output"]
    assert fixed[1].get("previous_response_id")
    assert [i.get("type") for i in raw[1]["input"]] == [i.get("type") for i in fixed[1]["input"]]
