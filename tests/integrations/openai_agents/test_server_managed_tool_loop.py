"""A server-managed tool loop with the model set however a user sets it, the custom
client passed the way the SDK's docs (and ours) show: ``Agent(model=
OpenAIResponsesModel(model=..., openai_client=AsyncOpenAI(http_client=...)))``. The
model's first response calls a tool; the second request must carry that tool's
``function_call_output`` with the server id, exactly as the SDK sends it alone."""

from __future__ import annotations

import inspect
import json
import re

import openai
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
from agents.models.interface import Model
from agents.run import CallModelData, ModelInputData

import toolpair
from toolpair.integrations.openai_agents import ToolpairInputFilter, with_toolpair

from .harness import Server, call, hx, message, out, provider_for, user

pytestmark = pytest.mark.anyio

_RUN_ARGS = inspect.signature(Runner.run).parameters
SERVER_IDS = [{"previous_response_id": "resp_earlier"}]
if "conversation_id" in _RUN_ARGS:
    SERVER_IDS.append({"conversation_id": "conv_1"})
if "auto_previous_response_id" in _RUN_ARGS:
    SERVER_IDS.append({"auto_previous_response_id": True})

#: Where the model is set: a Model object on the agent (the docs' custom client), a
#: model name resolved by a provider, a Model object or a name on the RunConfig.
WHERE = ["agent Model", "agent name", "run_config Model", "run_config name"]
#: How toolpair is on: with_toolpair, or a bare ToolpairInputFilter in the slot.
HOW = ["with_toolpair", "bare filter"]


@function_tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"sunny in {city}"


def _custom_client_model(srv: Server) -> OpenAIResponsesModel:
    # As a user passes a custom client: the real model class and openai client, only
    # the HTTP transport is the mock server.
    http_client = hx.AsyncClient(transport=hx.MockTransport(srv.handler))
    client = openai.AsyncOpenAI(
        api_key="x", base_url="https://example.test/v1", http_client=http_client, max_retries=0
    )
    return OpenAIResponsesModel(model="gpt-5", openai_client=client)


def _setup(srv: Server, where: str, how: str | None) -> tuple[Agent, RunConfig]:
    rc = RunConfig()
    agent_model: str | Model | None = None
    if where == "agent Model":
        agent_model = _custom_client_model(srv)
    elif where == "agent name":
        agent_model = "gpt-5"
        rc = RunConfig(model_provider=provider_for(srv))
    elif where == "run_config Model":
        rc = RunConfig(model=_custom_client_model(srv))
    else:
        rc = RunConfig(model="gpt-5", model_provider=provider_for(srv))
    agent = Agent(name="a", tools=[lookup], model=agent_model)
    if how == "with_toolpair":
        rc = with_toolpair(rc)
    elif how == "bare filter":
        rc.call_model_input_filter = ToolpairInputFilter()
    return agent, rc


async def _tool_loop(where: str, how: str | None, streamed: bool, ids: dict) -> list[dict]:
    srv = Server([[call("lookup", {"city": "Paris"}, call_id="call_paris")], [message("sunny")]])
    agent, rc = _setup(srv, where, how)
    if streamed:
        result = Runner.run_streamed(agent, "weather in Paris?", run_config=rc, **ids)
        async for _ in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, "weather in Paris?", run_config=rc, **ids)
    assert result.final_output == "sunny"
    assert len(srv.bodies) == 2
    return srv.bodies


def _same_up_to_ids(a: object, b: object) -> bool:
    """Equal once the ids the mock server numbers (each server run counts on) are
    blanked."""

    def blank(x: object) -> str:
        return re.sub(r"\b(resp|fc|msg|rs)_\d{4}\b", r"\1_N", json.dumps(x, sort_keys=True))

    return blank(a) == blank(b)


def _server_id(body: dict) -> str | None:
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    return body.get("previous_response_id") or conversation


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
@pytest.mark.parametrize("ids", SERVER_IDS, ids=lambda d: next(iter(d)))
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("where", WHERE)
async def test_the_tool_result_reaches_the_model(where, how, ids, streamed):
    raw = await _tool_loop(where, None, streamed, ids)
    bodies = await _tool_loop(where, how, streamed, ids)
    second = bodies[1]
    outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [("call_paris", "sunny in Paris")]
    # The SDK chains the request to the server state (0.2.8 resends the whole turn with
    # the id given; later SDKs send the delta after the first response).
    assert _server_id(second) is not None
    assert _same_up_to_ids(_server_id(second), _server_id(raw[1]))
    assert _same_up_to_ids(second["input"], raw[1]["input"])
    # Outputs of server-side calls are legal with server state (R8); the core reads
    # previous_response_id from a body, a conversation is passed the same way.
    assert (
        toolpair.validate(second, "openai-responses", previous_response_id=_server_id(second)) == []
    )


@pytest.mark.parametrize("how", HOW)
async def test_a_client_managed_run_still_drops_an_orphan_output(how):
    """The accepted twin: no server id, so an output whose call is gone is an orphan
    (the Responses API rejects it: No tool call found for function call output)."""
    items = [out("call_gone", "42"), user("and now?")]
    raw = Server([[message("fine")]])
    agent, rc = _setup(raw, "agent Model", None)
    await Runner.run(agent, items, run_config=rc)
    codes = [v.code for v in toolpair.validate(raw.bodies[0], "openai-responses")]
    assert codes == ["openai-responses.orphan_output"]

    srv = Server([[message("fine")]])
    agent, rc = _setup(srv, "agent Model", how)
    await Runner.run(agent, items, run_config=rc)
    assert srv.bodies[0]["input"] == [user("and now?")]
    assert toolpair.validate(srv.bodies[0], "openai-responses") == []


def _filter_outside_a_run(items: list) -> list:
    agent = Agent(name="a", model=_custom_client_model(Server([])))
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions=None), agent=agent, context=None
    )
    return ToolpairInputFilter()(data).input


def test_when_the_run_cannot_be_read_a_leading_output_is_kept():
    """Called outside the SDK's run loop the filter cannot know the run keeps its
    history on the client: the outputs opening the input may answer server-side calls,
    so they go as they are; the rest is repaired as usual."""
    lone = [out("call_a", "1"), out("call_b", "2"), user("go on")]
    got = _filter_outside_a_run(lone)
    assert got == lone
    assert all(a is b for a, b in zip(got, lone, strict=True))
    # An output behind other items is no server delta: still an orphan, dropped.
    inner = [user("hi"), out("call_c", "3")]
    assert _filter_outside_a_run(inner) == [user("hi")]
    # An output whose call is in the input is not lone: judged as usual (Responses
    # takes a call anywhere in the input, so this pair is valid as it is)...
    call_d = {"type": "function_call", "call_id": "call_d", "name": "lookup", "arguments": "{}"}
    paired = [out("call_d", "4"), call_d]
    assert _filter_outside_a_run(paired) == paired
    # ...and a lone output after it is no longer at the head: dropped.
    got = _filter_outside_a_run([*paired, out("call_e", "5")])
    assert sorted(json.dumps(i, sort_keys=True) for i in got) == sorted(
        json.dumps(i, sort_keys=True) for i in paired
    )
