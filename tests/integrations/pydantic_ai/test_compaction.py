"""Pair-safe trimming and tool-result clearing as history processors."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolpair.integrations.pydantic_ai import clear_tool_results, trim_history, validate

from .history import agent_with_processor, call, get_x, req, res, ret, user

pytestmark = pytest.mark.anyio


def _long_history(turns: int) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for i in range(turns):
        out += [
            req(user(f"question {i} " + "words " * 40)),
            res(call(f"t{i}a", i), call(f"t{i}b", i)),
            req(ret(f"t{i}a", "result " * 60), ret(f"t{i}b", "result " * 60)),
            res(TextPart(f"answer {i}")),
        ]
    return out


class Seen:
    def __init__(self) -> None:
        self.last: list[ModelMessage] = []

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.last = list(messages)
        return ModelResponse(parts=[TextPart("ok")])


async def test_trim_keeps_whole_pairs_and_the_new_request() -> None:
    history = _long_history(8)
    seen = Seen()
    agent = agent_with_processor(FunctionModel(seen.respond), trim_history(800), tools=[get_x])
    await agent.run("latest question", message_history=history)
    assert len(seen.last) < len(history)
    assert validate(seen.last, "portable") == []
    assert any("latest question" in str(getattr(p, "content", "")) for p in seen.last[-1].parts)


async def test_clear_tool_results_keeps_the_pairs() -> None:
    history = _long_history(4)
    seen = Seen()
    agent = agent_with_processor(
        FunctionModel(seen.respond), clear_tool_results(keep=2, placeholder="[cleared]")
    )
    await agent.run("go on", message_history=history)
    returns = [p for m in seen.last for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 8
    assert [r.content == "[cleared]" for r in returns] == [True] * 6 + [False] * 2
    assert validate(seen.last, "portable") == []
    # The stored history's own parts were not edited in place.
    assert history[2].parts[0].content == "result " * 60
