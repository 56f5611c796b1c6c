"""ToolpairGuardrail in the real LiteLLM Router with hostile histories: ids carrying
newlines and terminal escapes, a role of a megabyte, 20,000 calls. Every log line it
causes is one line, bounded, escaped, and free of body content, in every mode."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm import Router

import toolpair
from tests.support.upstream import Upstream
from toolpair.integrations.litellm import ToolpairGuardrail

from .deployments import deployment

SECRET = "SECRET-CONTENT-42"


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved


def _router(up: Upstream) -> Router:
    return Router(
        model_list=[
            deployment("lax-chat", "hosted_vllm/qwen3-coder", up.url("lax/v1"), "sk-fake-" + SECRET)
        ]
    )


def _calls(n: int) -> list[dict[str, Any]]:
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "weather", "arguments": f'{{"q": "{SECRET}"}}'},
        }
        for i in range(n)
    ]
    calls[0]["id"] = "evil\n[forged] toolpair repaired\x1b[2J\u202e"
    return calls


def _history(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": SECRET},
        {"role": "assistant", "content": None, "tool_calls": _calls(n)},
        {"role": "user", "content": SECRET},
    ]


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "toolpair"]


@pytest.mark.parametrize("mode", ["repair", "observe"])
def test_hostile_ids_and_20000_calls_give_one_bounded_escaped_line(
    up: Upstream, callbacks: list[Any], caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    callbacks.append(ToolpairGuardrail(toolpair_mode=mode))
    up.clear()
    # WARNING for a repair, INFO in observe mode.
    with caplog.at_level(logging.INFO, logger="toolpair"):
        asyncio.run(_router(up).acompletion(model="lax-chat", messages=_history(20000)))
    [seen] = up.bodies("lax")
    if mode == "repair":
        assert toolpair.validate(seen.body, "openai") == []
    [line] = _lines(caplog)
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert "\\u000a" in line  # the newline of the id, escaped
    assert len(line) < 1024 and "more" in line
    assert SECRET not in caplog.text


def test_reject_logs_one_bounded_line(
    up: Upstream, callbacks: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    callbacks.append(ToolpairGuardrail(toolpair_mode="reject"))
    up.clear()
    with caplog.at_level(logging.WARNING, logger="toolpair"), pytest.raises(Exception) as e:
        asyncio.run(_router(up).acompletion(model="lax-chat", messages=_history(20000)))
    assert getattr(e.value, "status_code", None) == 400
    assert up.bodies() == []
    [line] = _lines(caplog)
    assert "\n" not in line and "\x1b" not in line and len(line) < 1024
    assert SECRET not in caplog.text


@pytest.mark.parametrize("mode", ["repair", "reject", "observe"])
def test_an_unreadable_history_is_logged_without_its_content(
    caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    guard = ToolpairGuardrail(toolpair_mode=mode)
    huge_role = SECRET + "x" * 1_000_000
    for messages in (
        [{"role": "user", "content": "x"}, {"role": huge_role, "content": SECRET}],
        [{"role": "user", "content": "x"}, SECRET * 1000],
    ):
        kwargs: dict[str, Any] = {"model": "openai/gpt-4.1", "messages": messages}
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="toolpair"):
            out = asyncio.run(guard.async_pre_call_deployment_hook(kwargs, "acompletion"))
        assert out is kwargs and kwargs["messages"] is messages
        [line] = _lines(caplog)
        assert "could not read" in line and "message 1" in line
        assert SECRET not in line and len(line) < 300
