"""Property: for generated ChatMessage histories, toolpair's verdict on the framework
history agrees with its verdict on the request body the real provider LLM sends for it,
and the repaired history always sends a valid body."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from li_history import calls, result, say, snapshot, system, user
from li_wire import FakeAnthropic, FakeOpenAI, accept_all, anthropic_llm, openai_llm
from llama_index.core.base.llms.types import ChatMessage

import toolpair
from toolpair.integrations.llamaindex import repair_messages, validate_messages

IDS = ["toolu_a", "toolu_b", "toolu_c", "toolu_d"]

#: One history step: (kind, ids, text flag).
step = st.one_of(
    st.tuples(st.just("user"), st.just(()), st.booleans()),
    st.tuples(st.just("say"), st.just(()), st.booleans()),
    st.tuples(
        st.just("calls"),
        st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True),
        st.booleans(),
    ),
    st.tuples(
        st.just("result"), st.lists(st.sampled_from(IDS), min_size=1, max_size=1), st.booleans()
    ),
)


def _build(steps: list[tuple[str, Any, bool]], with_system: bool) -> list[ChatMessage]:
    history: list[ChatMessage] = [system("You add numbers.")] if with_system else []
    for n, (kind, ids, flag) in enumerate(steps):
        if kind == "user":
            history.append(user(f"question {n}"))
        elif kind == "say":
            history.append(say(f"answer {n}"))
        elif kind == "calls":
            history.append(calls(*ids, text=f"calling {n}" if flag else ""))
        else:
            history.append(result(ids[0], text=f"result {n}"))
    return history


histories = st.builds(_build, st.lists(step, min_size=1, max_size=9), st.booleans())


_SERVERS: dict[str, Any] = {
    "anthropic": FakeAnthropic([], check=accept_all),
    "openai": FakeOpenAI([], check=accept_all),
}
_LLMS: dict[str, Any] = {
    "anthropic": anthropic_llm(_SERVERS["anthropic"]),
    "openai": openai_llm(_SERVERS["openai"]),
}


def _sent(provider: str, history: list[ChatMessage]) -> dict[str, Any]:
    """The request body the real LlamaIndex LLM sends for ``history``."""
    server = _SERVERS[provider]
    server.bodies.clear()
    _LLMS[provider].chat(history)
    (body,) = server.bodies
    return body


def _agrees(provider: str, history: list[ChatMessage]) -> None:
    before = snapshot(history)
    framework = validate_messages(history, provider)
    body = _sent(provider, history)
    wire = toolpair.validate(body, provider)
    assert bool(framework) == bool(wire), (framework, wire, body)
    event(f"{provider} valid" if not wire else f"{provider} invalid")

    repaired = repair_messages(history, provider)
    assert toolpair.validate(_sent(provider, repaired.messages), provider) == []
    assert validate_messages(repaired.messages, provider) == []
    assert snapshot(history) == before
    if not repaired.changed:
        assert all(a is b for a, b in zip(repaired.messages, history, strict=True))


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(histories)
def test_anthropic_verdicts_agree(history: list[ChatMessage]) -> None:
    _agrees("anthropic", history)


@SETTINGS
@given(histories)
def test_openai_verdicts_agree(history: list[ChatMessage]) -> None:
    _agrees("openai", history)
