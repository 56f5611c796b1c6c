"""Real agent runs (FunctionModel) over poisoned histories, every processor shape, the
persisting processor against the request-only guard, and provider detection."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentedModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import UsageLimits

import toolpair
from toolpair.integrations.pydantic_ai import (
    RepairGuard,
    history_repairer,
    provider_for,
    repair,
    repair_history,
    validate,
)

from .history import (
    PAI_MAJOR,
    agent_with_processor,
    call,
    get_x,
    poisoned,
    req,
    res,
    ret,
    user,
)
from .wire import WIRE_MODELS, Capture

pytestmark = pytest.mark.anyio


class Recorder:
    """A FunctionModel body that records what the model was shown and answers text."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return ModelResponse(parts=[TextPart("ok")])


SHAPES = [
    pytest.param(dict(takes_ctx=True, is_async=False), id="sync-ctx"),
    pytest.param(dict(takes_ctx=True, is_async=True), id="async-ctx"),
    pytest.param(dict(takes_ctx=False, is_async=False), id="sync"),
    pytest.param(dict(takes_ctx=False, is_async=True), id="async"),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("case", sorted(poisoned()))
async def test_every_processor_shape_repairs_every_case(shape: dict[str, bool], case: str) -> None:
    history = poisoned()[case]
    rec = Recorder()
    agent = agent_with_processor(
        FunctionModel(rec.respond), history_repairer(**shape), tools=[get_x]
    )
    result = await agent.run("q2", message_history=history)
    assert result.output == "ok"
    assert validate(rec.seen[-1], "portable") == []
    assert validate(result.all_messages()[:-1], "portable") == []


async def test_ready_made_processor_reads_the_provider_off_the_run() -> None:
    capture = Capture()
    agent = agent_with_processor(WIRE_MODELS["anthropic"](capture), repair_history, tools=[get_x])
    await agent.run("q2", message_history=poisoned()["non_adjacent"])
    assert toolpair.validate(capture.last, "anthropic") == []


async def test_processor_persists_guard_does_not() -> None:
    history = poisoned()["duplicate"]
    rec = Recorder()
    persisted = await agent_with_processor(FunctionModel(rec.respond), repair_history).run(
        "q2", message_history=history
    )
    assert validate(persisted.all_messages()[:-1], "portable") == []

    rec = Recorder()
    guarded = await Agent(FunctionModel(rec.respond), capabilities=[RepairGuard()]).run(
        "q2", message_history=history
    )
    assert validate(rec.seen[-1], "portable") == []
    kept = guarded.all_messages()
    assert all(a is b for a, b in zip(kept, history, strict=False))
    assert validate(kept[: len(history)], "portable") != []


def _evict_calls(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A careless compaction: drops every response that made tool calls."""
    return [m for m in messages if not (isinstance(m, ModelResponse) and m.tool_calls)]


def _one_call_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    if not any(isinstance(m, ModelResponse) for m in messages) and len(last.parts) == 1:
        return ModelResponse(parts=[call("c1", 5)])
    if any("5" in str(getattr(p, "content", "")) for p in last.parts):
        return ModelResponse(parts=[TextPart("answered")])
    # The tool output never reached the model: a real model would call the tool again.
    return ModelResponse(parts=[call(f"c{len(messages)}", 5)])


async def test_evicting_processor_does_not_send_an_empty_request() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return _one_call_then_answer(messages, info)

    if PAI_MAJOR >= 2:
        from pydantic_ai.capabilities import ProcessHistory

        agent = Agent(
            FunctionModel(model),
            tools=[get_x],
            capabilities=[ProcessHistory(_evict_calls), ProcessHistory(repair_history)],
        )
    else:
        agent = agent_with_processor(
            FunctionModel(model),
            lambda ms: repair_history_plain(_evict_calls(ms)),
            tools=[get_x],
        )
    result = await agent.run("go", usage_limits=UsageLimits(request_limit=4))
    assert result.output == "answered"
    last = seen[-1][-1]
    assert isinstance(last, ModelRequest) and last.parts
    # The tool's output survives as text the model can read.
    assert any("5" in str(getattr(p, "content", "")) for p in last.parts)
    assert validate(seen[-1], "portable") == []


repair_history_plain = history_repairer(takes_ctx=False)


def test_provider_for_the_real_model_classes() -> None:
    models: dict[str, Any] = {name: make(Capture()) for name, make in WIRE_MODELS.items()}
    for name, model in models.items():
        assert provider_for(model) == name
        assert provider_for(InstrumentedModel(model)) == name
    fallback = FallbackModel(models["anthropic"], models["openai"])
    assert provider_for(fallback) == "portable"
    assert provider_for(FunctionModel(Recorder().respond)) == "portable"
    assert provider_for(TestModel()) == "portable"


def test_provider_for_google_and_mistral() -> None:
    google = pytest.importorskip("pydantic_ai.models.google")
    mistral = pytest.importorskip("pydantic_ai.models.mistral")
    from pydantic_ai.providers.google import GoogleProvider
    from pydantic_ai.providers.mistral import MistralProvider

    gm = google.GoogleModel("gemini-2.5-flash", provider=GoogleProvider(api_key="test"))
    mm = mistral.MistralModel("mistral-large-latest", provider=MistralProvider(api_key="test"))
    assert (provider_for(gm), provider_for(mm)) == ("gemini", "mistral")


def test_valid_history_comes_back_as_the_same_objects() -> None:
    history = [req(user("q")), res(call("t1")), req(ret("t1"))]
    assert validate(history, "anthropic") == []
    repaired = repair(history, "anthropic")
    assert not repaired.changed
    assert all(a is b for a, b in zip(repaired.messages, history, strict=True))


async def test_evicting_processor_alone_breaks_the_run() -> None:
    """Why the test above matters: without toolpair the same eviction either loops (2.x
    drops the orphaned results silently) or sends them orphaned (1.x)."""
    from pydantic_ai.exceptions import UsageLimitExceeded

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return _one_call_then_answer(messages, info)

    agent = agent_with_processor(FunctionModel(model), _evict_calls, tools=[get_x])
    if PAI_MAJOR >= 2:
        with pytest.raises(UsageLimitExceeded):
            await agent.run("go", usage_limits=UsageLimits(request_limit=4))
    else:
        await agent.run("go", usage_limits=UsageLimits(request_limit=4))
        assert validate(seen[-1], "portable") != []
