"""Poisoned pydantic-ai histories, one per shape toolpair repairs, and version helpers."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import datetime, timezone
from importlib.metadata import version
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

PAI_MAJOR = int(version("pydantic-ai-slim").split(".")[0])
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def get_x(n: int = 0) -> int:
    """The one tool every poisoned history calls."""
    return n


def req(*parts: Any) -> ModelRequest:
    return ModelRequest(parts=list(parts))


def res(*parts: Any) -> ModelResponse:
    return ModelResponse(parts=list(parts), timestamp=T0, model_name="m")


def call(cid: str, n: int = 0) -> ToolCallPart:
    return ToolCallPart("get_x", {"n": n}, tool_call_id=cid)


def ret(cid: str, content: Any = 1) -> ToolReturnPart:
    return ToolReturnPart("get_x", content, tool_call_id=cid, timestamp=T0)


def user(text: str) -> UserPromptPart:
    return UserPromptPart(text, timestamp=T0)


def poisoned() -> dict[str, list[ModelMessage]]:
    """Fresh objects each call: a test may compare identities."""
    return {
        "dangling": [
            req(user("q1")),
            res(call("t1", 1), call("t2", 2)),
            req(ret("t1")),
            res(TextPart("partial")),
        ],
        "non_adjacent": [
            req(user("q1")),
            res(call("t1")),
            req(user("still there?")),
            res(TextPart("yes")),
            req(ret("t1")),
            res(TextPart("done")),
        ],
        "duplicate": [
            req(user("q1")),
            res(call("t1")),
            req(ret("t1", 1), ret("t1", 2)),
            res(TextPart("done")),
        ],
        "empty_ids": [
            req(user("q1")),
            res(call("")),
            req(ret("")),
            res(TextPart("done")),
        ],
        "orphan": [
            req(user("q1")),
            res(TextPart("hello")),
            req(ret("t9"), user("more")),
            res(TextPart("done")),
        ],
        "split": [
            req(user("q1")),
            res(call("t1", 1), call("t2", 2)),
            req(ret("t1")),
            req(ret("t2")),
            res(TextPart("done")),
        ],
        "text_first": [
            req(user("q1")),
            res(call("t1")),
            req(user("and also"), ret("t1")),
            res(TextPart("done")),
        ],
    }


def agent_with_processor(model: Any, processor: Callable[..., Any], **kwargs: Any) -> Agent[Any]:
    """The documented way to install a history processor on this major version."""
    if PAI_MAJOR >= 2:
        from pydantic_ai.capabilities import ProcessHistory

        return Agent(model, capabilities=[ProcessHistory(processor)], **kwargs)
    with warnings.catch_warnings():
        # 1.x's late releases deprecate the kwarg in favour of the 2.x capability.
        warnings.filterwarnings("ignore", message=".*history_processors.*")
        return Agent(model, history_processors=[processor], **kwargs)
