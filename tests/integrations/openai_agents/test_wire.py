"""Real Runner.run / run_streamed with the real OpenAIResponsesModel and
OpenAIChatCompletionsModel on a mock transport: each poisoned input is rejected by the
core validator on the captured body without toolpair, and accepted with it."""

from __future__ import annotations

import copy
import json

import pytest
from agents import Agent, RunConfig, Runner, function_tool

import toolpair
from toolpair.integrations.openai_agents import ToolpairInputFilter, with_toolpair

from .harness import Server, call, fc, message, out, rs, user

pytestmark = pytest.mark.anyio


@function_tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"sunny in {city}"


def _model(srv: Server):
    return srv.responses_model() if srv.kind == "responses" else srv.chat_model()


def _provider(srv: Server) -> str:
    return "openai-responses" if srv.kind == "responses" else "openai"


async def _run(srv: Server, items, run_config=None, streamed=False):
    agent = Agent(name="a", tools=[lookup], model=_model(srv))
    given = copy.deepcopy(items)
    if streamed:
        result = Runner.run_streamed(agent, items, run_config=run_config)
        async for _ in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, items, run_config=run_config)
    assert items == given, "the caller's items were changed"
    return result


POISONED = {
    # result.to_input_list() of a run parked on an approval, passed back as new input.
    "dangling call": [user("hi"), fc("call_d", item_id="fc_d"), user("go on")],
    # The docs' `input[-N:]` filter recipe leaves the output of a cut-off call first.
    "orphan output": [out("call_gone", "42"), user("and now?")],
    # Two parallel calls, the first never answered, the second's output behind a user
    # message (what a cancelled turn and a reordering backend leave).
    "split batch": [
        user("weather and time?"),
        fc("call_w", item_id="fc_w"),
        fc("call_t", item_id="fc_t"),
        user("(interrupted)"),
        out("call_t", "09:00"),
    ],
    # A trimmed reasoning item: the call keeps the fc_ id tied to it... and a reasoning
    # item left last with nothing after it.
    "reasoning last": [user("hi"), rs("rs_alone")],
}


@pytest.mark.parametrize("kind", ["responses", "chat"])
@pytest.mark.parametrize("case", list(POISONED))
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_poisoned_input_rejected_without_and_valid_with(kind, case, streamed):
    if kind == "chat" and case == "reasoning last":
        pytest.skip("the chat converter drops a reasoning item with nothing after it")
    raw = Server([[message("fine")]], kind=kind)
    await _run(raw, POISONED[case], streamed=streamed)
    assert toolpair.validate(raw.bodies[0], _provider(raw)), "the SDK sent it valid already"

    srv = Server([[message("fine")]], kind=kind)
    await _run(srv, POISONED[case], with_toolpair(), streamed=streamed)
    assert toolpair.validate(srv.bodies[0], _provider(srv)) == []


@pytest.mark.parametrize("kind", ["responses", "chat"])
async def test_valid_history_is_sent_as_the_sdk_sends_it(kind):
    """Do no harm: a valid input gives the same request body with and without toolpair."""
    items = [user("q"), fc("call_1"), out("call_1", "r"), user("next")]
    a = Server([[call("lookup", {"city": "Paris"})], [message("done")]], kind=kind)
    await _run(a, items)
    b = Server([[call("lookup", {"city": "Paris"})], [message("done")]], kind=kind)
    await _run(b, items, with_toolpair())
    key = "input" if kind == "responses" else "messages"
    # Call ids the mock server made up differ between the two servers.
    assert [m.get("type") or m.get("role") for m in a.bodies[1][key]] == [
        m.get("type") or m.get("role") for m in b.bodies[1][key]
    ]
    assert a.bodies[0][key] == b.bodies[0][key]
    assert all(toolpair.validate(body, _provider(b)) == [] for body in b.bodies)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
@pytest.mark.parametrize("kind", ["responses", "chat"])
async def test_parallel_calls_run_and_stay_paired(kind, streamed):
    srv = Server(
        [[call("lookup", {"city": "Paris"}), call("lookup", {"city": "Tokyo"})], [message("ok")]],
        kind=kind,
    )
    await _run(srv, [user("two cities"), fc("call_x")], with_toolpair(), streamed=streamed)
    assert len(srv.bodies) == 2
    for body in srv.bodies:
        assert toolpair.validate(body, _provider(srv)) == []
    key = "input" if kind == "responses" else "messages"
    assert len(srv.bodies[1][key]) > len(srv.bodies[0][key])


async def test_filter_alone_and_composed_with_an_inner_filter():
    """The standalone filter repairs; an inner filter runs first and its output (here
    the docs' `input[-2:]` trimming recipe) is what gets repaired."""
    from agents.run import ModelInputData

    seen = []

    def docs_recipe(data):
        seen.append(list(data.model_data.input))
        return ModelInputData(
            input=data.model_data.input[-2:], instructions=data.model_data.instructions
        )

    items = [user("q"), fc("call_1"), out("call_1", "r"), user("next")]
    raw = Server([[message("x")]])
    await _run(raw, items, RunConfig(call_model_input_filter=docs_recipe))
    assert toolpair.validate(raw.bodies[0], "openai-responses")

    srv = Server([[message("x")]])
    rc = RunConfig(call_model_input_filter=ToolpairInputFilter(inner=docs_recipe))
    await _run(srv, items, rc)
    assert toolpair.validate(srv.bodies[0], "openai-responses") == []
    assert srv.bodies[0]["input"] == [{"role": "user", "content": "next"}]
    assert len(seen) == 2

    srv2 = Server([[message("x")]])
    await _run(srv2, items, with_toolpair(RunConfig(call_model_input_filter=docs_recipe)))
    assert srv2.bodies[0]["input"] == [{"role": "user", "content": "next"}]


def test_filter_returns_untouched_items_as_the_same_objects():
    from agents.run import CallModelData, ModelInputData

    items = [user("q"), fc("call_1"), out("call_1", "r"), user("next")]
    data = CallModelData(
        model_data=ModelInputData(input=list(items), instructions="be brief"),
        agent=Agent(name="a", model="gpt-5"),
        context=None,
    )
    assert ToolpairInputFilter()(data) is data.model_data
    broken = [*items, fc("call_2")]
    data = CallModelData(
        model_data=ModelInputData(input=list(broken), instructions="be brief"),
        agent=Agent(name="a", model="gpt-5"),
        context=None,
    )
    fixed = ToolpairInputFilter()(data)
    assert fixed.instructions == "be brief"
    assert all(a is b for a, b in zip(fixed.input, broken[:-1], strict=False))
    assert fixed.input[-1]["type"] == "function_call_output"
    assert broken[-1] == fc("call_2")


async def test_with_toolpair_keeps_other_settings():
    rc = RunConfig(workflow_name="w", tracing_disabled=True, model="gpt-5")
    on = with_toolpair(rc)
    assert on.workflow_name == "w" and on.tracing_disabled is True and on.model == "gpt-5"
    assert rc.call_model_input_filter is None
    assert with_toolpair(on) is on


async def test_composes_with_the_sdks_tool_output_trimmer():
    """The SDK's ToolOutputTrimmer (0.9.0+) in the slot runs first; its trimmed outputs
    are sent as it made them and a dangling call still gets its result."""
    trimmer_mod = pytest.importorskip("agents.extensions.tool_output_trimmer")
    big = "x" * 5000
    items = [user("q0"), fc("call_big"), out("call_big", big), user("q1"), user("q2")]
    items += [user("q3"), fc("call_open")]
    trimmer = trimmer_mod.ToolOutputTrimmer(recent_turns=1, max_output_chars=100)
    srv = Server([[message("x")]])
    await _run(srv, items, with_toolpair(RunConfig(call_model_input_filter=trimmer)))
    sent = srv.bodies[0]["input"]
    assert toolpair.validate(srv.bodies[0], "openai-responses") == []
    first = next(i for i in sent if i.get("call_id") == "call_big" and "output" in i)
    assert len(str(first["output"])) < len(big)
    assert any(i.get("call_id") == "call_open" and "output" in i for i in sent)


def test_with_toolpair_takes_over_a_bare_filter_and_wraps_each_resolved_model():
    from agents.run import ModelInputData

    from toolpair.integrations.openai_agents import ToolpairModel

    def inner(data):
        return ModelInputData(input=data.model_data.input, instructions="x")

    on = with_toolpair(
        RunConfig(call_model_input_filter=ToolpairInputFilter("anthropic", inner=inner))
    )
    assert on.call_model_input_filter.inner is inner
    assert on.call_model_input_filter.provider == "anthropic"
    srv = Server([])
    from .harness import provider_for

    on = with_toolpair(RunConfig(model_provider=provider_for(srv)))
    a, b = on.model_provider.get_model("gpt-5"), on.model_provider.get_model("gpt-5")
    assert isinstance(a, ToolpairModel) and a is b  # the inner provider caches: one wrapper
    assert a.model == "gpt-5"  # everything else is the wrapped model's
    assert a.target() == ("openai-responses", "gpt-5")


@pytest.mark.parametrize("use_responses", [True, False], ids=["responses", "chat"])
async def test_the_sdks_openai_provider_with_a_model_name(use_responses):
    """`OpenAIProvider(use_responses=...)` resolving `Agent(model="gpt-4.1")`: the model
    the provider builds is wrapped and tells which API the items go to."""
    from agents import OpenAIProvider

    srv = Server([[message("fine")]], kind="responses" if use_responses else "chat")
    provider = OpenAIProvider(openai_client=srv.client(), use_responses=use_responses)
    agent = Agent(name="a", tools=[lookup], model="gpt-4.1")
    items = POISONED["split batch"]
    await Runner.run(
        agent, list(items), run_config=with_toolpair(RunConfig(model_provider=provider))
    )
    assert toolpair.validate(srv.bodies[0], _provider(srv)) == []
    assert ("input" in srv.bodies[0]) is use_responses


def test_pydantic_items_are_judged_as_dicts_and_kept_as_given():
    """A caller may put the SDK's own pydantic items in the input
    (``new_items[i].raw_item``): they are judged like the dicts the SDK dumps them to,
    and where nothing changes them they stay the objects given."""
    from openai.types.responses import ResponseFunctionToolCall

    from toolpair.integrations.openai_agents import repair_items

    call_obj = ResponseFunctionToolCall(
        type="function_call", call_id="call_p", name="lookup", arguments="{}"
    )
    items = [user("q"), call_obj, user("and?")]
    fixed = repair_items(items, "openai-responses")
    assert fixed[0] is items[0] and fixed[1] is call_obj
    assert [i.get("type") for i in fixed if isinstance(i, dict)] == [
        None,
        "function_call_output",
        None,
    ]
    assert fixed[2]["call_id"] == "call_p"
    done = [*items[:2], out("call_p"), items[2]]
    assert repair_items(done, "openai-responses") is done


@pytest.mark.parametrize("kind", ["responses", "chat"])
async def test_history_from_a_chat_model_is_not_taken_for_broken(kind):
    """Items a Chat Completions model produced carry the id ``__fake_id__``, which the
    SDK strips before sending: a valid history of them is sent untouched, with no fix
    and no warning, whichever API the next model speaks."""
    import logging

    fake = "__fake_id__"
    history = [
        user("q"),
        {**fc("c1"), "id": fake},
        out("c1"),
        {
            "type": "message",
            "role": "assistant",
            "id": fake,
            "status": "completed",
            "content": [{"type": "output_text", "text": "a", "annotations": []}],
        },
        user("q2"),
        {**fc("c2"), "id": fake},
        out("c2"),
    ]
    from toolpair.integrations.openai_agents import repair_items
    from toolpair.integrations.openai_agents._filter import _SDK_STRIPS_FAKE_IDS

    provider = "openai-responses" if kind == "responses" else "openai"
    sent = repair_items(history, provider)
    if provider == "openai" or _SDK_STRIPS_FAKE_IDS:
        assert sent is history
    else:
        # Before 0.9 OpenAIResponsesModel sends the placeholder, which the API rejects:
        # the copies without it go instead.
        assert [i.get("id") for i in sent] == [None] * len(history)
        assert [i for i in sent if i is history[2]] == [history[2]]
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("toolpair").addHandler(handler)
    try:
        srv = Server([[message("x")]], kind=kind)
        await _run(srv, history, with_toolpair())
    finally:
        logging.getLogger("toolpair").removeHandler(handler)
    assert records == []
    assert toolpair.validate(srv.bodies[0], _provider(srv)) == []


@pytest.mark.parametrize("kind", ["responses", "chat"])
async def test_a_reused_call_id_keeps_both_pairs_on_the_wire(kind):
    """The SDK keeps one input item per call id: a later turn reusing a call id would
    lose that call and its output. with_toolpair gives the later pair a fresh id."""
    from toolpair.integrations.openai_agents import _filter

    items = [
        user("q"),
        fc("call_1"),
        out("call_1", "first"),
        user("again"),
        fc("call_1"),
        out("call_1", "second"),
        user("and?"),
    ]
    srv = Server([[message("fine")]], kind=kind)
    await _run(srv, items, with_toolpair())
    body = srv.bodies[0]
    assert toolpair.validate(body, _provider(srv)) == []
    sent = json.dumps(body)
    assert "first" in sent and "second" in sent
    if _filter._SDK_DEDUPES:
        raw = Server([[message("fine")]], kind=kind)
        await _run(raw, items)
        alone = json.dumps(raw.bodies[0])  # what the SDK alone sends: one output of two
        assert not ("first" in alone and "second" in alone)
