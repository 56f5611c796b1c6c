"""Property: the verdict toolpair gives on a pydantic-ai history agrees with its verdict
on the body the real model class puts on the wire for that history.

The history goes through `pydantic_ai.direct.model_request`, which maps it as stored
(none of pydantic-ai's own cleaning), so the wire shows exactly what the codec read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pai_histories import call, req, res, ret, user
from pai_wire import WIRE_MODELS, Capture
from pydantic_ai import direct
from pydantic_ai.messages import ModelMessage, TextPart

import toolpair
from toolpair.integrations.pydantic_ai import validate

IDS = ["t1", "t2", "t3"]

request_part = st.one_of(
    st.builds(user, st.sampled_from(["hi", "more", "why?"])),
    st.builds(ret, st.sampled_from(IDS), st.sampled_from([1, "done", ""])),
)
response_part = st.one_of(
    st.builds(TextPart, st.sampled_from(["ok", "let me check"])),
    st.builds(call, st.sampled_from(IDS), st.integers(0, 3)),
)
request = st.lists(request_part, min_size=1, max_size=3).map(lambda ps: req(*ps))
response = st.lists(response_part, min_size=1, max_size=3).map(lambda ps: res(*ps))


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    """Requests and responses alternate, as in every history an agent run writes; the
    last request ends with a user turn, as every run's request does."""
    turns = draw(st.integers(0, 3))
    out: list[ModelMessage] = [req(user("start"))]
    for _ in range(turns):
        out.append(draw(response))
        out.append(draw(request))
    last = out[-1]
    out[-1] = req(*last.parts, user("now answer")) if turns else req(user("start"), user("go"))
    return out


def _wire_verdict(provider: str, history: list[ModelMessage]) -> list[toolpair.Violation]:
    capture = Capture()
    asyncio.run(direct.model_request(WIRE_MODELS[provider](capture), history))
    # The request is sent without tools, so Bedrock's toolConfig rule (B6, about the
    # request, which no message history can show) is not part of the comparison.
    return [
        v
        for v in toolpair.validate(capture.last, provider)
        if v.code != "bedrock.missing_tool_config"
    ]


@pytest.mark.parametrize("provider", sorted(WIRE_MODELS))
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories())
def test_framework_verdict_matches_wire_verdict(provider: str, history: Any) -> None:
    framework = validate(history, provider)
    wire = _wire_verdict(provider, history)
    assert bool(framework) == bool(wire), (framework, wire)
