"""The synchronous SDK path: LiteLLM runs ``async_pre_call_deployment_hook`` only for
``acompletion``; ``toolpair.integrations.litellm.patch()`` makes the real
``litellm.completion`` and ``Router.completion`` (CrewAI, DSPy, smolagents, Aider and
most scripts call these) repair each attempt as the async path does. Against the fake
upstream on loopback: without the patch the strict upstream refuses the broken history,
with it the body it received is valid for its API."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm import Router

import toolpair
from tests.support.histories import DANGLING_CHAT, TOOLS
from tests.support.upstream import Upstream
from toolpair.integrations import litellm as tp_litellm
from toolpair.integrations.litellm import ToolpairGuardrail, is_patched, patch, unpatch

from .deployments import Counting, deployment
from .test_guardrail import _failed_over_repaired, _guarded

CLAUDE = "anthropic/claude-sonnet-4-6"


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    original = litellm.completion
    yield litellm.callbacks
    unpatch()
    litellm.callbacks[:] = saved
    assert litellm.completion is original


def _claude(up: Upstream, *args: Any, **kwargs: Any) -> Any:
    return litellm.completion(
        *args, api_base=up.url("strict"), api_key="sk-fake", tools=TOOLS, **kwargs
    )


def test_sync_completion_is_repaired_once_patched(up: Upstream, callbacks: list[Any]) -> None:
    callbacks.append(ToolpairGuardrail())
    up.clear()
    # The guardrail alone: LiteLLM runs no hook of it on the synchronous path.
    with pytest.raises(litellm.BadRequestError, match="tool_use"):
        _claude(up, model=CLAUDE, messages=DANGLING_CHAT)
    [refused] = up.bodies("strict")
    assert toolpair.validate(refused.body, "anthropic")[0].code == "anthropic.missing_result"

    patch()
    up.clear()
    out = _claude(up, model=CLAUDE, messages=DANGLING_CHAT)
    assert out.choices[0].message.content == "done"
    [sent] = up.bodies("strict")
    assert sent.path == "/strict/v1/messages"
    assert toolpair.validate(sent.body, "anthropic") == []
    assert sent.body["messages"][2]["content"][0]["tool_use_id"] == "call_1"
    # The caller's list is not touched.
    assert DANGLING_CHAT[2] == {"role": "user", "content": "and?"}

    # Positional model and messages, as `completion(model, messages)` takes them.
    up.clear()
    _claude(up, CLAUDE, DANGLING_CHAT)
    [sent] = up.bodies("strict")
    assert toolpair.validate(sent.body, "anthropic") == []


def test_router_completion_failover_is_repaired_for_each_attempt(
    up: Upstream, callbacks: list[Any]
) -> None:
    router = _guarded(up, callbacks)
    with pytest.raises(litellm.ServiceUnavailableError, match="tool_result"):
        router.completion(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS)
    patch()
    up.clear()
    out = router.completion(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS)
    assert out.choices[0].message.content == "done"
    _failed_over_repaired(up)


def test_reject_mode_on_the_sync_path_sends_nothing(up: Upstream, callbacks: list[Any]) -> None:
    callbacks.append(ToolpairGuardrail(toolpair_mode="reject"))
    patch()
    up.clear()
    with pytest.raises(Exception) as e:
        _claude(up, model=CLAUDE, messages=DANGLING_CHAT)
    [v] = toolpair.validate(DANGLING_CHAT, "anthropic", format="openai")
    assert v.message in str(getattr(e.value, "detail", e.value))
    assert up.bodies() == []


def test_patch_is_idempotent_reversible_and_runs_once_per_attempt(
    up: Upstream, callbacks: list[Any]
) -> None:
    original = litellm.completion
    counting = Counting()
    seen = counting.seen
    callbacks.append(counting)
    assert not is_patched()
    patch()
    patched = litellm.completion
    patch()
    assert litellm.completion is patched and is_patched()
    assert tp_litellm.patch is patch

    up.clear()
    _claude(up, model=CLAUDE, messages=DANGLING_CHAT)
    assert seen == ["completion"]
    # acompletion runs LiteLLM's own hook, once: the patch does not run it again.
    seen.clear()
    up.clear()
    asyncio.run(
        litellm.acompletion(
            model=CLAUDE,
            messages=DANGLING_CHAT,
            tools=TOOLS,
            api_base=up.url("strict"),
            api_key="sk-fake",
        )
    )
    assert len(seen) == 1
    [sent] = up.bodies("strict")
    assert toolpair.validate(sent.body, "anthropic") == []

    # From a thread whose event loop is running (a sync tool inside an async app).
    seen.clear()
    up.clear()

    async def inside_a_loop() -> Any:
        return _claude(up, model=CLAUDE, messages=DANGLING_CHAT)

    asyncio.run(inside_a_loop())
    assert seen == ["completion"]

    # From another thread.
    seen.clear()
    worker = threading.Thread(
        target=_claude, args=(up,), kwargs={"model": CLAUDE, "messages": DANGLING_CHAT}
    )
    worker.start()
    worker.join()
    assert seen == ["completion"]

    unpatch()
    unpatch()
    assert litellm.completion is original and not is_patched()
    seen.clear()
    up.clear()
    with pytest.raises(litellm.BadRequestError):
        _claude(up, model=CLAUDE, messages=DANGLING_CHAT)
    assert seen == []


def test_without_a_guardrail_the_patch_changes_nothing(up: Upstream, callbacks: list[Any]) -> None:
    patch()
    up.clear()
    router = Router(model_list=[deployment("lax", "hosted_vllm/qwen3-coder", up.url("lax/v1"))])
    router.completion(model="lax", messages=DANGLING_CHAT, tools=TOOLS)
    [seen] = up.bodies()
    assert seen.body["messages"][2] == {"role": "user", "content": "and?"}
