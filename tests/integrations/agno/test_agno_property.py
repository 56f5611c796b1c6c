"""For generated agno histories, the verdict toolpair gives on the agno messages agrees
with its verdict on the request body the real formatter builds from them; and with the
patch on, that body is always valid."""

from __future__ import annotations

from typing import Any

from _agno_harness import MODELS, PROVIDERS, Capture, call, tools
from agno.agent import Agent
from agno.models.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolpair
from toolpair.integrations import agno as tp_agno


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    # "fc_" ids are valid item ids on every provider, so only pairing decides the verdict.
    for t in range(draw(st.integers(1, 3))):
        out.append(Message(role="user", content=f"question {t}"))
        ids = [f"fc_{t}{j}" for j in range(draw(st.integers(0, 3)))]
        if not ids:
            out.append(Message(role="assistant", content=f"answer {t}"))
            continue
        out.append(
            Message(
                role="assistant", content="Checking.", tool_calls=[call(i, "Paris") for i in ids]
            )
        )
        answered = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
        results = [
            Message(role="tool", tool_call_id=i, tool_name="get_weather", content="sunny")
            for i in draw(st.permutations(answered))
        ]
        if results and draw(st.booleans()):
            results.insert(draw(st.integers(0, len(results))), Message(role="user", content="hm?"))
        if draw(st.booleans()):
            results.append(
                Message(role="tool", tool_call_id=f"gone_{t}", tool_name="get_weather", content="?")
            )
        out.extend(results)
        if draw(st.booleans()):
            out.append(Message(role="assistant", content=f"answer {t}"))
    out.append(Message(role="user", content="And now?"))
    return out


def wire_body(provider: str, history: list[Message]) -> dict[str, Any]:
    cap = Capture()
    agent = Agent(model=MODELS[provider](cap), tools=tools(), telemetry=False)
    agent.run(input=history)
    return cap.last


_settings = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(history=histories(), provider=st.sampled_from(PROVIDERS))
def test_agno_verdict_agrees_with_wire_verdict(history: list[Message], provider: str) -> None:
    tp_agno.unpatch()
    framework = tp_agno.validate_messages(history, provider)
    wire = toolpair.validate(wire_body(provider, history), provider)
    if provider == "gemini":
        # Gemini's wire has no ids, only counts: a mispaired batch of the right size is
        # accepted there, so only "valid here implies valid there" holds.
        assert wire == [] or framework, (framework, wire)
    else:
        assert bool(framework) == bool(wire), (framework, wire)


@_settings
@given(history=histories(), provider=st.sampled_from(PROVIDERS))
def test_patched_wire_is_always_valid(history: list[Message], provider: str) -> None:
    before = [m.model_dump() for m in history]
    with tp_agno.patched():
        body = wire_body(provider, history)
    assert toolpair.validate(body, provider) == []
    assert [m.model_dump() for m in history] == before
