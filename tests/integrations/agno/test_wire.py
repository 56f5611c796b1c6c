"""An agent run over a poisoned stored conversation, with real agno model classes and
a mock transport: the request body each provider would receive is rejected without
toolpair and accepted with it, and nothing toolpair made reaches the stored session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import toolpair
from toolpair.integrations import agno as tp_agno

from .harness import MODELS, POISONED, PROVIDERS, Capture, seeded_agent


def run(agent: Any, mode: str) -> None:
    if mode == "run":
        agent.run("And now?", session_id="s1")
    elif mode == "stream":
        for _ in agent.run("And now?", session_id="s1", stream=True):
            pass
    elif mode == "arun":
        asyncio.run(agent.arun("And now?", session_id="s1"))
    else:

        async def consume() -> None:
            async for _ in agent.arun("And now?", session_id="s1", stream=True):
                pass

        asyncio.run(consume())


@pytest.fixture(autouse=True)
def _clean_patch() -> Any:
    yield
    tp_agno.unpatch()


# A batch split by a user message is legal where pairing is by id anywhere in the input
# (Responses) or where the formatter merges the split turn back together (Gemini).
_VALID_AS_IS = {("openai-responses", "split_batch"), ("gemini", "split_batch")}


@pytest.mark.parametrize(
    ("provider", "case"),
    [(p, c) for p in PROVIDERS for c in sorted(POISONED) if (p, c) not in _VALID_AS_IS],
)
def test_unpatched_request_is_rejected(provider: str, case: str) -> None:
    cap = Capture()
    run(seeded_agent(MODELS[provider](cap), POISONED[case]()), "run")
    assert len(cap.bodies) == 1
    assert toolpair.validate(cap.last, provider), cap.last


@pytest.mark.parametrize("case", sorted(POISONED))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_patched_request_is_valid(provider: str, case: str) -> None:
    cap = Capture()
    stored = POISONED[case]()
    agent = seeded_agent(MODELS[provider](cap), stored)
    with tp_agno.patched():
        run(agent, "run")
    assert len(cap.bodies) == 1
    assert toolpair.validate(cap.last, provider) == [], cap.last


# Each SDK's streaming and async clients are separate code paths in agno (separate
# invoke methods and formatter calls), so every mode is checked on the wire.
_MODES = [
    ("anthropic", "stream"),
    ("anthropic", "arun"),
    ("anthropic", "astream"),
    ("openai", "stream"),
    ("openai", "arun"),
    ("openai", "astream"),
    ("openai-responses", "arun"),
    ("gemini", "arun"),
]
_MODES = [(p, m) for p, m in _MODES if p in PROVIDERS]


@pytest.mark.parametrize(("provider", "mode"), _MODES)
def test_every_invoke_path_is_repaired(provider: str, mode: str) -> None:
    cap = Capture()
    run(seeded_agent(MODELS[provider](cap), POISONED["orphan_call"]()), mode)
    assert toolpair.validate(cap.last, provider)
    cap2 = Capture()
    with tp_agno.patched():
        run(seeded_agent(MODELS[provider](cap2), POISONED["orphan_call"]()), mode)
    assert toolpair.validate(cap2.last, provider) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nothing_is_written_back(provider: str) -> None:
    cap = Capture()
    stored = POISONED["orphan_call"]()
    agent = seeded_agent(MODELS[provider](cap), stored)
    before = [m.model_dump() for m in stored]
    with tp_agno.patched():
        run(agent, "run")
    assert [m.model_dump() for m in stored] == before
    session = agent.get_session("s1")
    old = session.runs[0]
    assert [m.model_dump(exclude={"metrics"}) for m in old.messages] == [
        m.model_dump(exclude={"metrics"}) for m in stored
    ]
    # no placeholder result reaches any stored run
    for stored_run in session.runs:
        assert not any(getattr(m, "toolpair_synthetic", False) for m in stored_run.messages)


def test_placeholder_is_an_error_result_answering_the_dangling_call() -> None:
    cap = Capture()
    with tp_agno.patched():
        run(seeded_agent(MODELS["anthropic"](cap), POISONED["orphan_call"]()), "run")
    results = [
        block
        for msg in cap.last["messages"]
        if isinstance(msg["content"], list)
        for block in msg["content"]
        if block.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == ["call_A", "call_B"]
    assert results[0]["content"] == "sunny"
    assert results[1]["content"] and results[1]["content"] != "sunny"


def test_token_counting_is_repaired() -> None:
    from agno.models.anthropic import Claude

    if "count_tokens" not in vars(Claude):
        pytest.skip("this agno has no provider token counting")
    cap = Capture()
    model = MODELS["anthropic"](cap)
    history = POISONED["orphan_call"]()
    model.count_tokens(history)
    assert toolpair.validate(cap.last, "anthropic")
    with tp_agno.patched():
        assert model.count_tokens(history) == 7
        assert asyncio.run(model.acount_tokens(history)) == 7
    assert cap.urls[-1].endswith("/count_tokens")
    assert toolpair.validate(cap.bodies[-2], "anthropic") == []
    assert toolpair.validate(cap.bodies[-1], "anthropic") == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_guard_repairs_only_its_model(provider: str) -> None:
    guarded_cap, plain_cap = Capture(), Capture()
    guarded = tp_agno.guard(MODELS[provider](guarded_cap))
    plain = MODELS[provider](plain_cap)
    run(seeded_agent(guarded, POISONED["orphan_call"]()), "run")
    run(seeded_agent(plain, POISONED["orphan_call"]()), "run")
    assert toolpair.validate(guarded_cap.last, provider) == []
    assert toolpair.validate(plain_cap.last, provider)
    assert not tp_agno.is_patched()
