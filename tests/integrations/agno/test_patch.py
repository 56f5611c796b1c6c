"""patch()/unpatch()/patched()/guard() behave like an OpenTelemetry instrumentor:
idempotent, thread-safe, fully reversible, and without effect on what they did not wrap."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest
from agno.models.base import Model

from toolpair import Policy
from toolpair.integrations import agno as tp_agno
from toolpair.integrations.agno import _patch

from .harness import MODELS, POISONED, Capture, seeded_agent


def snapshot() -> dict[tuple[type, str], Any]:
    """Every attribute patch() may replace, as it stands now."""
    out: dict[tuple[type, str], Any] = {}
    for cls in _patch._all_subclasses(Model):
        for name in (*_patch.RETRY_WRAPPERS, *_patch.TOKEN_COUNTERS, "_format_messages"):
            if name in vars(cls):
                out[(cls, name)] = vars(cls)[name]
    return out


@pytest.fixture(autouse=True)
def _clean_patch() -> Any:
    tp_agno.unpatch()
    yield
    tp_agno.unpatch()


def test_patch_wraps_the_retry_wrappers_and_token_counters() -> None:
    from agno.models.anthropic import Claude
    from agno.models.aws import AwsBedrock

    tp_agno.patch()
    for name in _patch.RETRY_WRAPPERS:
        assert getattr(vars(Model)[name], "__toolpair__", False)
    if "count_tokens" in vars(Claude):  # provider token counting came with agno 3
        assert getattr(vars(Claude)["count_tokens"], "__toolpair__", False)
    assert getattr(vars(AwsBedrock)["_format_messages"], "__toolpair__", False)


def test_unpatch_restores_every_original() -> None:
    before = snapshot()
    tp_agno.patch()
    assert snapshot() != before
    tp_agno.unpatch()
    after = snapshot()
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)
    assert not tp_agno.is_patched()


def test_patch_twice_wraps_once() -> None:
    tp_agno.patch()
    first = snapshot()
    tp_agno.patch()
    second = snapshot()
    assert all(second[k] is first[k] for k in first)
    for name in _patch.RETRY_WRAPPERS:
        inner = vars(Model)[name].__wrapped__
        assert not getattr(inner, "__toolpair__", False)


def test_unpatch_without_patch_and_twice_is_harmless() -> None:
    before = snapshot()
    tp_agno.unpatch()
    tp_agno.patch()
    tp_agno.unpatch()
    tp_agno.unpatch()
    assert all(snapshot()[k] is v for k, v in before.items())


def test_patch_and_unpatch_under_threads() -> None:
    before = snapshot()
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(50):
                tp_agno.patch()
                if i % 2:
                    tp_agno.unpatch()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    tp_agno.patch()
    for name in _patch.RETRY_WRAPPERS:
        wrapper = vars(Model)[name]
        assert wrapper.__wrapped__ is before[(Model, name)]
    tp_agno.unpatch()
    assert all(snapshot()[k] is v for k, v in before.items())


def test_patched_context_restores_and_nests() -> None:
    before = snapshot()
    with tp_agno.patched():
        inside = snapshot()
        with tp_agno.patched():
            assert all(snapshot()[k] is v for k, v in inside.items())
        assert tp_agno.is_patched()
    assert not tp_agno.is_patched()
    assert all(snapshot()[k] is v for k, v in before.items())


def test_patched_context_keeps_an_outer_patch() -> None:
    tp_agno.patch()
    with tp_agno.patched(policy=Policy(placeholder="gone")):
        assert _patch._state.policy == Policy(placeholder="gone")
    assert tp_agno.is_patched()
    assert _patch._state.policy is None


def test_policy_reaches_the_wire() -> None:
    cap = Capture()
    with tp_agno.patched(policy=Policy(placeholder="Tool never ran.")):
        seeded_agent(MODELS["openai"](cap), POISONED["orphan_call"]()).run("x", session_id="s1")
    tool_msgs = [m for m in cap.last["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == ["sunny", "Tool never ran."]


def test_guard_is_per_instance_and_reversible() -> None:
    a, b = MODELS["openai"](Capture()), MODELS["openai"](Capture())
    cls = type(a)
    tp_agno.guard(a)
    tp_agno.guard(a)
    assert tp_agno.is_guarded(a) and not tp_agno.is_guarded(b)
    assert type(a).__mro__[1] is cls
    assert isinstance(a, cls)
    assert type(a) is type(tp_agno.guard(MODELS["openai"](Capture())))
    assert type(copy.deepcopy(a)) is type(a)
    assert snapshot()[(Model, "_invoke_with_retry")] is vars(Model)["_invoke_with_retry"]
    tp_agno.unguard(a)
    assert type(a) is cls
    tp_agno.unguard(b)
    assert type(b) is cls


def test_guard_and_patch_together_stay_valid() -> None:
    cap = Capture()
    model = tp_agno.guard(MODELS["anthropic"](cap))
    with tp_agno.patched():
        seeded_agent(model, POISONED["orphan_call"]()).run("x", session_id="s1")
    import toolpair

    assert toolpair.validate(cap.last, "anthropic") == []


def test_unreadable_history_is_sent_as_agno_would() -> None:
    from agno.models.message import Message

    stored = [Message(role="user", content="hi"), Message(role="narrator", content="?")]
    with tp_agno.patched():
        out = _patch._prepared(MODELS["openai"](Capture()), stored, None)
    assert out is stored


@pytest.mark.parametrize(
    ("factory", "provider"),
    [
        ("agno.models.anthropic:Claude", "anthropic"),
        ("agno.models.aws:Claude", "anthropic"),
        ("agno.models.aws:AwsBedrock", "bedrock"),
        ("agno.models.openai:OpenAIChat", "openai"),
        ("agno.models.openai.like:OpenAILike", "openai"),
        ("agno.models.openai:OpenAIResponses", "openai-responses"),
        ("agno.models.google:Gemini", "gemini"),
        ("agno.models.mistral:MistralChat", "mistral"),
    ],
)
def test_provider_follows_the_model_class(factory: str, provider: str) -> None:
    module, name = factory.split(":")
    cls = getattr(pytest.importorskip(module), name)
    assert tp_agno.provider_for(cls.__new__(cls)) == provider


def test_unknown_model_classes_get_the_portable_rules() -> None:
    class InHouse(Model):
        pass

    assert tp_agno.provider_for(InHouse) == "portable"
