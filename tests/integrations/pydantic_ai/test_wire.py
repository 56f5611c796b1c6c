"""The real provider model classes on a capturing transport: every poisoned history
reaches the wire valid with toolpair, and the same run without toolpair sends a body
the provider would reject wherever pydantic-ai's own cleaning does not fix it."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ParamValidationError
from pydantic_ai import Agent
from pydantic_ai import direct as pai_direct
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

import toolpair
from toolpair.integrations.pydantic_ai import RepairGuard, model_request, repair_history

from .history import PAI_MAJOR, agent_with_processor, get_x, poisoned, req, user
from .wire import BEDROCK_MODEL_ID, WIRE_MODELS, Capture

_ALL = ("anthropic", "bedrock", "openai", "openai-responses")
#: Responses pairs by call_id anywhere in the input, so non-adjacent results pass there;
#: toolpair counts outputs per call_id, so a duplicate output is reported on all four.
_ADJACENT = ("anthropic", "bedrock", "openai")

#: Which poisoned histories reach each provider broken when pydantic-ai maps them as
#: stored (the direct API, and 1.x agent runs, which only merge consecutive requests).
DIRECT_BROKEN: dict[str, tuple[str, ...]] = {
    "dangling": _ALL,
    "duplicate": _ALL,
    "empty_ids": _ALL,  # each half gets its own random id when sent
    "non_adjacent": _ADJACENT,
    "orphan": _ALL,
    "split": (),  # consecutive result turns: merged by the API / adapter, or tool messages
    "text_first": _ADJACENT,
}

#: What is left broken after a 2.x agent run's own cleaning (it synthesizes dangling
#: returns, drops orphans, merges split results and hoists them, but keeps text in the
#: result turn, which Bedrock refuses).
AGENT_BROKEN: dict[int, dict[str, tuple[str, ...]]] = {
    1: DIRECT_BROKEN,
    2: {
        "duplicate": _ALL,
        "empty_ids": _ALL,
        "non_adjacent": _ADJACENT,
        "text_first": ("bedrock",),
    },
}

pytestmark = pytest.mark.anyio

CASES = sorted(poisoned())
PROVIDERS = sorted(WIRE_MODELS)
PARAMS = ModelRequestParameters(
    function_tools=[
        ToolDefinition(
            name="get_x",
            parameters_json_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        )
    ]
)


def _cases_fixed() -> list[Any]:
    return [
        pytest.param(case, provider, id=f"{case}-{provider}")
        for case in CASES
        for provider in PROVIDERS
    ]


def _violations(body: dict[str, Any], provider: str) -> list[toolpair.Violation]:
    # A Converse body does not name its model (the URL does): judge it for the one sent.
    model = BEDROCK_MODEL_ID if provider == "bedrock" else None
    return toolpair.validate(body, provider, model=model)


async def _run(provider: str, case: str, *, fix: str | None) -> dict[str, Any]:
    capture = Capture()
    model = WIRE_MODELS[provider](capture)
    if fix == "processor":
        agent = agent_with_processor(model, repair_history, tools=[get_x])
    elif fix == "guard":
        agent = Agent(model, tools=[get_x], capabilities=[RepairGuard()])
    else:
        agent = Agent(model, tools=[get_x])
    result = await agent.run("q2", message_history=poisoned()[case])
    assert result.output == "ok"
    return capture.last


@pytest.mark.parametrize("case, provider", _cases_fixed())
async def test_processor_makes_the_wire_valid(provider: str, case: str) -> None:
    body = await _run(provider, case, fix="processor")
    assert _violations(body, provider) == []


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", CASES)
async def test_without_toolpair(provider: str, case: str) -> None:
    expected = provider in AGENT_BROKEN[PAI_MAJOR].get(case, ())
    try:
        body = await _run(provider, case, fix=None)
    except ParamValidationError:
        # boto3 refuses the empty toolUseId before anything is sent.
        assert expected and case == "empty_ids"
        return
    found = _violations(body, provider)
    assert bool(found) == expected, found


@pytest.mark.skipif(PAI_MAJOR < 2, reason="the request-only guard hook is 2.x's")
@pytest.mark.parametrize("case, provider", _cases_fixed())
async def test_guard_makes_the_wire_valid(provider: str, case: str) -> None:
    body = await _run(provider, case, fix="guard")
    assert _violations(body, provider) == []


@pytest.mark.parametrize("case, provider", _cases_fixed())
async def test_direct_model_request(case: str, provider: str) -> None:
    history = [*poisoned()[case], req(user("q2"))]
    capture = Capture()
    try:
        await pai_direct.model_request(
            WIRE_MODELS[provider](capture), history, model_request_parameters=PARAMS
        )
        broken = bool(_violations(capture.last, provider))
    except ParamValidationError:
        broken = True
    assert broken == (provider in DIRECT_BROKEN[case])
    capture = Capture()
    await model_request(WIRE_MODELS[provider](capture), history, model_request_parameters=PARAMS)
    assert _violations(capture.last, provider) == []
