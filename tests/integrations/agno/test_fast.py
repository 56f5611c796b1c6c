"""The agno no-op path (`AgnoCodec.skeleton`, read by the core's checkers) on the
shapes it is about.

The conformance suite (test_conformance.py) holds it to "never says valid where the full
rules find something" over generated histories; these examples pin that a realistic
valid history really takes the fast path (nothing is decoded, the very same objects
come back) and that every hazard sends the history down the full path, with the full
rules' verdict beside each one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from agno.media import Image
from agno.models.message import Message

import toolpair
from toolpair import InvalidHistory
from toolpair._api import parse
from toolpair.engine import skeleton
from toolpair.engine.fast import certainly_valid, check
from toolpair.integrations.agno import AgnoCodec, repair_messages

from .harness import call

sys.path.append(str(Path(__file__).parents[3] / "bench"))
import histories as H

FAST = ("anthropic", "openai")


def fast(history: list[Any], provider: str, **context: Any) -> bool:
    """The verdict the core's no-op path gets for this history."""
    codec = AgnoCodec()
    p = parse(history, provider, codec, context)
    return certainly_valid(codec, p.profile.checker, history, p.ctx)


def full(history: list[Any], provider: str) -> list[str]:
    return [v.code for v in toolpair.validate(history, provider, format=AgnoCodec())]


def user(text: str = "Weather in Paris and Rome?", **kw: Any) -> Message:
    return Message(role="user", content=text, **kw)


def calls(*ids: str, text: str | None = "Checking.", **kw: Any) -> Message:
    return Message(role="assistant", content=text, tool_calls=[call(i, "Paris") for i in ids], **kw)


def result(i: str, content: Any = "sunny", **kw: Any) -> Message:
    return Message(role="tool", tool_call_id=i, tool_name="get_weather", content=content, **kw)


def say(text: str = "Paris is sunny, Rome is rainy.", **kw: Any) -> Message:
    return Message(role="assistant", content=text, **kw)


def realistic() -> list[Message]:
    """What agno stores for a few runs with tools: a system prompt, parallel calls, an
    error result, reasoning, an image, a text part list, a call-only turn."""
    return [
        Message(role="system", content="You are a weather bot."),
        user(),
        calls("toolu_01A", "toolu_01B", reasoning_content="Two cities: two calls."),
        result("toolu_01B", "rainy"),
        result("toolu_01A", "upstream timeout", tool_call_error=True),
        calls("toolu_01C", text=None),
        result("toolu_01C"),
        say(),
        user("And this one?", images=[Image(url="https://example.com/sky.png")]),
        Message(role="user", content=[{"type": "text", "text": "Be brief."}]),
        say("Clear sky."),
    ]


@pytest.mark.parametrize("provider", FAST)
def test_realistic_histories_are_certainly_valid(provider: str) -> None:
    for history in (realistic(), H.framework("agno", 400)):
        assert full(history, provider) == []
        assert fast(history, provider)


@pytest.mark.parametrize("provider", FAST)
def test_a_valid_history_is_not_decoded_and_comes_back_as_it_is(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = H.framework("agno", 400)

    def no_decode(self: AgnoCodec, messages: Any) -> Any:
        raise AssertionError("the fast path decodes nothing")

    monkeypatch.setattr(AgnoCodec, "decode", no_decode)
    assert repair_messages(history, provider) is history
    r = toolpair.repair(history, provider, format=AgnoCodec())
    assert r.fixes == []
    assert len(r.messages) == len(history)
    assert all(a is b for a, b in zip(r.messages, history, strict=True))


@pytest.mark.parametrize("provider", FAST)
def test_repaired_bench_defects_are_certainly_valid_again(provider: str) -> None:
    history = H.framework("agno", 400, defects=True)
    assert not fast(history, provider)
    assert full(history, provider)
    out = repair_messages(history, provider)
    assert fast(out, provider)
    assert full(out, provider) == []


def _with(m: Message, **update: Any) -> Message:
    return m.model_copy(update=update)


#: name -> (history, the providers whose rules it breaks). The checker must not say
#: "valid" for any of them on those providers; where a provider's rules accept the
#: shape, the entry's verdict there is checked too (True, or None for shapes the
#: checker leaves to the full path on purpose).
HAZARDS: dict[str, tuple[list[Any], dict[str, bool | None]]] = {
    "dangling call at the end": (
        [user(), calls("a", "b"), result("a")],
        {"anthropic": False, "openai": False},
    ),
    "dangling call before the answer": (
        [user(), calls("a", "b"), result("a"), say()],
        {"anthropic": False, "openai": False},
    ),
    "only calls at the end": ([user(), calls("a")], {"anthropic": False, "openai": False}),
    "orphan tool message": (
        [user(), say("Let me see."), result("z"), say()],
        {"anthropic": False, "openai": False},
    ),
    "tool message first": ([result("z"), user(), say()], {"anthropic": False, "openai": False}),
    "duplicate result": (
        [user(), calls("a"), result("a"), result("a", "again"), say()],
        {"anthropic": False, "openai": False},
    ),
    "result answered again a turn later": (
        [user(), calls("a"), result("a"), say(), result("a"), say()],
        {"anthropic": False, "openai": False},
    ),
    "user text between results": (
        [user(), calls("a", "b"), result("a"), user("Hurry."), result("b"), say()],
        {"anthropic": False, "openai": False},
    ),
    "an image between results": (
        [
            user(),
            calls("a", "b"),
            result("a"),
            Message(role="user", images=[Image(url="https://example.com/x.png")]),
            result("b"),
            say(),
        ],
        {"anthropic": False, "openai": False},
    ),
    "same id twice in one message": (
        [user(), calls("a", "a"), result("a"), result("a"), say()],
        {"anthropic": False, "openai": False},
    ),
    # Anthropic holds ids unique inside one assistant turn only (A4: claude-sonnet-4-5
    # took an id a later turn reused): the full path decides, and finds it valid.
    "one id in two turns": (
        [user(), calls("a"), result("a"), say(), user(), calls("a"), result("a"), say()],
        {"openai": True},
    ),
    "id with characters Anthropic rejects": (
        [user(), calls("functions.get:1"), result("functions.get:1"), say()],
        {"anthropic": False, "openai": True},
    ),
    "id longer than OpenAI's 40": (
        [user(), calls("a" * 41), result("a" * 41), say()],
        {"anthropic": True, "openai": False},
    ),
    "text after a call in a merged turn": (
        [user(), calls("a"), say("Also..."), result("a"), say()],
        {"anthropic": False, "openai": False},
    ),
    "blank text part": (
        [user(), say("Hi."), Message(role="user", content=[{"type": "text", "text": " "}])],
        {"anthropic": False, "openai": True},
    ),
    # Not a violation (the API never sees a blank string as a text block), but the
    # checker leaves every blank text to the full path.
    "blank string content": (
        [user(), say(" "), user("ok"), say()],
        {"anthropic": None, "openai": True},
    ),
    "empty error result": (
        [user(), calls("a"), result("a", "", tool_call_error=True), say()],
        {"anthropic": False, "openai": True},
    ),
    "error result without content": (
        [user(), calls("a"), result("a", None, tool_call_error=True), say()],
        {"anthropic": False, "openai": True},
    ),
    "trailing whitespace at the end": (
        [user(), say("Done.\n")],
        {"anthropic": False, "openai": True},
    ),
    "Responses call_id": (
        [
            user(),
            Message(role="assistant", tool_calls=[{**call("fc_1", "Paris"), "call_id": "c1"}]),
            result("c1"),
            say(),
        ],
        {"anthropic": None, "openai": None},
    ),
    "thinking block in list content": (
        [user(), say(), user(), _with(say(), content=[{"type": "thinking", "thinking": "x"}])],
        {"anthropic": False, "openai": True},
    ),
    "unknown role": ([user(), _with(say(), role="robot")], {"anthropic": None, "openai": None}),
    "not an agno message": (
        [user(), {"role": "assistant", "content": "hi"}],
        {"anthropic": None, "openai": None},
    ),
    "content of a wrong type": (
        [user(), _with(say(), content=5)],
        {"anthropic": None, "openai": None},
    ),
    "calls on a user message": (
        [_with(user(), tool_calls=[call("a", "Paris")]), say()],
        {"anthropic": None, "openai": None},
    ),
    "tool_calls not a list": (
        [user(), _with(calls("a"), tool_calls=(call("a", "Paris"),)), result("a"), say()],
        {"anthropic": None, "openai": None},
    ),
}


@pytest.mark.parametrize("name", sorted(HAZARDS))
@pytest.mark.parametrize("provider", FAST)
def test_hazards_take_the_full_path(name: str, provider: str) -> None:
    history, verdicts = HAZARDS[name]
    expected = verdicts.get(provider)
    if expected is True:
        assert fast(history, provider)
        assert full(history, provider) == []
        return
    assert not fast(history, provider)
    if expected is False:
        assert full(history, provider)


@pytest.mark.parametrize("provider", FAST)
def test_context_the_rules_read_takes_the_full_path(provider: str) -> None:
    history = realistic()
    if provider == "anthropic":
        assert not fast(history, provider, thinking=True)
        assert not fast(history, provider, thinking=False)
        assert not fast(history, provider, tools=[{"name": "get_weather"}])
    else:
        # The chat view joins assistant messages of an item-shaped history: the
        # verdict holds for that view too.
        p = parse(history, provider, AgnoCodec(), {})
        p.ctx.shape = "items"
        if check(AgnoCodec(), provider, history, p.ctx):
            assert p.profile.rules(p.messages, p.ctx) == []


@pytest.mark.parametrize("provider", [p for p in toolpair.PROVIDERS if p not in FAST])
def test_other_providers_get_the_fast_path_too(provider: str) -> None:
    # agno's own checkers knew two providers; the core's read its skeleton for all.
    plain = [user(), calls("toolu_01A", text=None), result("toolu_01A"), say(), user("Thanks.")]
    for history in (realistic(), H.framework("agno", 400), plain):
        if fast(history, provider):
            assert full(history, provider) == []
    if provider in ("openai-responses", "gemini", "vertex", "deepseek", "deepseek-responses"):
        assert fast(plain, provider)
        assert fast(H.framework("agno", 400), provider)


@pytest.mark.parametrize("provider", [None, *toolpair.PROVIDERS])
def test_the_skeleton_agrees_with_decode(provider: str | None) -> None:
    codec = AgnoCodec(provider)
    histories = [realistic(), H.framework("agno", 400), H.framework("agno", 400, defects=True)]
    histories += [h for h, _ in HAZARDS.values()]
    for history in histories:
        sk = codec.skeleton(history)
        if sk is None:
            continue
        try:
            decoded = codec.decode(history)
        except InvalidHistory:
            raise AssertionError("a skeleton of a history decode refuses") from None
        assert sk == skeleton.from_view(decoded)
