"""The no-op path of the pydantic-ai codec (the skeleton checkers over
`PydanticAICodec.skeleton`).

That it never says "certainly valid" where the full rules find something is a property
of the conformance suite (with this folder's hazards, `adapter.hazardous`). Here:
it must say so for an ordinary valid history, or repair would decode every history it
is given, and each hazard must send a history down the full path.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolReturnPart,
    UserPromptPart,
)

import toolpair
from toolpair._api import parse
from toolpair.engine.fast import certainly_valid, check
from toolpair.integrations.pydantic_ai import PydanticAICodec, repair, validate
from toolpair.testing.generate import abstract_history

from .adapter import HAS_OUTCOME, _legacy_retry, _retry_part, _server_call, render
from .history import T0, call, req, res, ret, user

FUZZ = settings(max_examples=int(os.environ.get("TOOLPAIR_FUZZ", "40")), deadline=None)

#: The providers these examples are written for (every provider's checker reads the
#: skeleton: `test_every_provider_takes_the_fast_path` holds the others to it).
SUPPORTED = ("anthropic", "openai", "portable")


def fast(history: list[Any], provider: str, **context: Any) -> bool:
    """The verdict repair acts on (exceptions in the checker mean the full path)."""
    p = parse(history, provider, PydanticAICodec(), context)
    return certainly_valid(p.codec, provider, p.raw, p.ctx)


def full(history: list[Any], provider: str, **context: Any) -> list[toolpair.Violation]:
    p = parse(history, provider, PydanticAICodec(), context)
    return p.profile.rules(p.messages, p.ctx)


def parse_ctx(provider: str) -> Any:
    return parse([], provider, PydanticAICodec(), {}).ctx


@FUZZ
@given(abstract=abstract_history(), provider=st.sampled_from(SUPPORTED))
def test_fast_path_is_taken_on_valid_histories(abstract: Any, provider: str) -> None:
    # Generated histories without defects hold nothing the checkers give up on, so
    # there the fast path agrees with the full rules exactly: taken whenever they find
    # nothing, also once repair has made them valid for the strictest profile.
    history = render(abstract)
    assert fast(history, provider) == (full(history, provider) == [])
    fixed = repair(history, provider).messages
    assert full(fixed, provider) == []
    assert fast(fixed, provider)


# Examples ------------------------------------------------------------------------------


def realistic(n: int, portable_ids: bool = False, plain: bool = False) -> list[ModelMessage]:
    """An agent's history: system prompt, questions, parallel calls with text and
    thinking before them, answered results (one a failure with content), answers."""
    counter = itertools.count()

    def cid() -> str:
        k = next(counter)
        return f"call{k:05d}" if portable_ids else f"toolu_01{k:022d}"

    out: list[ModelMessage] = [req(SystemPromptPart("You are helpful.", timestamp=T0), user("hi"))]
    while len(out) < n:
        a, b = cid(), cid()
        # ``plain``: without the thinking and the text beside calls that some APIs'
        # strict rules refuse (Bedrock B3 without a model).
        said = [] if plain else [ThinkingPart("plan", signature="sig"), TextPart("Looking.")]
        out.append(res(*said, call(a), call(b)))
        fail = (
            ToolReturnPart("get_x", "timeout", tool_call_id=b, timestamp=T0, outcome="failed")
            if HAS_OUTCOME
            else ret(b, "timeout")
        )
        out.append(req(ret(a, {"temp": 21}), fail))
        c = cid()
        out.append(res(call(c)))
        out.append(req(ret(c, [1, 2, 3])))
        out.append(res(TextPart("It is 21 degrees.")))
        out.append(req(user("thanks, and tomorrow?")))
    return out


@pytest.mark.parametrize("provider", SUPPORTED)
def test_a_realistic_valid_history_takes_the_fast_path(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = realistic(200, portable_ids=provider == "portable")
    assert full(history, provider) == []
    assert check(PydanticAICodec(), provider, history, parse_ctx(provider)) is True

    def no_decoding(self: Any, messages: Any) -> Any:
        raise AssertionError("the fast path decodes nothing")

    monkeypatch.setattr(PydanticAICodec, "decode", no_decoding)
    r = repair(history, provider)
    assert r.fixes == []
    assert r.messages is not history
    assert len(r.messages) == len(history)
    assert all(a is b for a, b in zip(r.messages, history, strict=True))
    assert validate(history, provider) == []


def test_anthropic_ids_are_not_portable() -> None:
    history = realistic(20)
    assert full(history, "portable")
    assert not fast(history, "portable")


def test_retry_prompts_with_content_answer_their_call() -> None:
    # pydantic-ai's retries are ordinary results (sent with is_error): they keep the
    # fast path as long as they say something.
    for make in (_retry_part, _legacy_retry):
        history = [
            req(user("q")),
            res(call("t1"), call("t2")),
            req(make("bad args", "t1"), ret("t2")),
            res(call("t1b")),
            req(ret("t1b"), make("answer in JSON", None)),
            res(TextPart("done")),
            req(user("next")),
        ]
        for provider in ("anthropic", "openai"):
            assert full(history, provider) == []
            assert fast(history, provider), provider


def test_thinking_mid_history_keeps_the_fast_path_when_thinking_is_unknown() -> None:
    history = [
        req(user("q")),
        res(ThinkingPart("a", signature="s"), call("t1"), ThinkingPart("b")),
        req(ret("t1")),
        res(ThinkingPart("c", signature="s2"), TextPart("done")),
        req(user("next")),
    ]
    for provider in ("anthropic", "openai"):
        assert fast(history, provider)
    # Context a thinking rule reads (H1, H2) sends it down the full path.
    assert not fast(history, "anthropic", thinking=True)
    assert not fast(history, "anthropic", thinking=False)


#: The providers whose rules read blank text and empty messages (OpenAI's read neither:
#: `test_what_openai_reads_nothing_of_keeps_the_fast_path`).
STRICT = ("anthropic", "portable")


def _hazards() -> dict[str, tuple[list[ModelMessage], tuple[str, ...]]]:
    """name -> (history, the providers on which it must not be certainly valid)."""
    every = SUPPORTED
    return {
        "dangling_call": ([req(user("q")), res(call("t1"))], every),
        "unanswered_in_next_request": (
            [req(user("q")), res(call("t1"), call("t2")), req(ret("t1")), res(TextPart("x"))],
            every,
        ),
        "orphan_return": ([req(user("q")), res(TextPart("hi")), req(ret("t9"))], every),
        "duplicate_return": (
            [req(user("q")), res(call("t1")), req(ret("t1"), ret("t1")), res(TextPart("x"))],
            every,
        ),
        "duplicate_in_next_request": (
            [req(user("q")), res(call("t1")), req(ret("t1")), req(ret("t1")), res(TextPart("x"))],
            every,
        ),
        "return_after_text": (
            [req(user("q")), res(call("t1")), req(user("and"), ret("t1")), res(TextPart("x"))],
            every,
        ),
        "user_turn_between": (
            [req(user("q")), res(call("t1")), req(user("?")), req(ret("t1")), res(TextPart("x"))],
            every,
        ),
        "blank_user_text": ([req(user("   ")), res(TextPart("x")), req(user("q"))], STRICT),
        "blank_assistant_text": ([req(user("q")), res(TextPart("")), req(user("q2"))], STRICT),
        "blank_text_in_list": (
            [req(UserPromptPart([" ", ImageUrl("u")])), res(TextPart("x")), req(user("q"))],
            STRICT,
        ),
        "empty_retry_for_a_call": (
            [req(user("q")), res(call("t1")), req(_retry_part("", "t1")), req(user("q2"))],
            ("anthropic", "portable"),
        ),
        "empty_legacy_retry": (
            [req(user("q")), res(call("t1")), req(_legacy_retry([], "t1")), req(user("q2"))],
            ("anthropic", "portable"),
        ),
        "retry_answering_nothing": (
            [req(user("q")), res(TextPart("x")), req(_legacy_retry("bad", "t7"))],
            every,
        ),
        "server_tool": (
            [req(user("q")), res(_server_call(), TextPart("x")), req(user("q"))],
            every,
        ),
        "empty_request": ([req(user("q")), res(TextPart("x")), req()], STRICT),
        "empty_response": ([req(user("q")), res(), req(user("q2"))], STRICT),
        "bad_id": (
            [req(user("q")), res(call("a b")), req(ret("a b")), res(TextPart("x"))],
            ("anthropic", "portable"),
        ),
        "empty_id": ([req(user("q")), res(call("")), req(ret("")), res(TextPart("x"))], every),
        "repeated_call_id": (
            [req(user("q")), res(call("t1"), call("t1")), req(ret("t1"), ret("t1"))],
            every,
        ),
        "id_used_twice": (
            [req(user("q")), res(call("t1")), req(ret("t1")), res(call("t1")), req(ret("t1"))],
            ("anthropic", "portable"),
        ),
        "text_after_call": (
            [req(user("q")), res(call("t1"), TextPart("then")), req(ret("t1"))],
            ("anthropic", "portable"),
        ),
        "final_trailing_whitespace": (
            [req(user("q")), res(TextPart("done "))],
            ("anthropic", "portable"),
        ),
        "ends_on_a_response": ([req(user("q")), res(TextPart("done"))], ("portable",)),
        "long_id": (
            [req(user("q")), res(call("t" * 41)), req(ret("t" * 41)), res(TextPart("x"))],
            ("openai", "portable"),
        ),
    }


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", sorted(_hazards()))
def test_each_hazard_takes_the_full_path(name: str) -> None:
    history, providers = _hazards()[name]
    for provider in providers:
        assert not fast(history, provider), provider


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_what_openai_reads_nothing_of_keeps_the_fast_path() -> None:
    # Blank text and empty messages are the strict profiles' hazards only; a tool-less
    # retry prompt is sent as its model_response() text, whatever its content.
    hazards = _hazards()
    for name in ("blank_user_text", "blank_assistant_text", "blank_text_in_list"):
        history = hazards[name][0]
        assert full(history, "openai") == []
        assert fast(history, "openai"), name
    for name in ("empty_request", "empty_response"):
        history = hazards[name][0]
        assert full(history, "openai") == []
        assert fast(history, "openai"), name
    details = [req(user("q")), res(TextPart("x")), req(_legacy_retry([{"msg": "x"}], None))]
    for provider in SUPPORTED:
        assert full(details, provider) == []
        assert fast(details, provider), provider


def test_context_the_rules_read_takes_the_full_path() -> None:
    history = [
        req(user("q")),
        res(call("abcdefgh1")),
        req(ret("abcdefgh1")),
        res(TextPart("x")),
        req(user("more")),
    ]
    for provider in SUPPORTED:
        assert fast(history, provider)
    assert not fast(history, "anthropic", tools=[{"name": "get_x"}])
    assert not fast(history, "anthropic", thinking=True)
    assert not fast(history, "portable", thinking=False)
    assert not fast(history, "portable", tool_config=False)
    assert not fast(history, "portable", tokenizer_version=3)
    assert not fast(history, "portable", thought_signatures=True)


def test_unknown_parts_and_messages_take_the_full_path() -> None:
    @dataclasses.dataclass
    class Odd:
        part_kind: str = "speech"

    history = [req(user("q")), res(TextPart("x")), req(user("y"))]
    for provider in SUPPORTED:
        # A request part no rule reads inside is content of the user's turn, as text is.
        odd = [*history[:2], req(Odd())]
        assert full(odd, provider) == []
        assert fast(odd, provider)
        assert not fast([*history[:2], req(Odd(), ret("t1"))], provider)
        assert not fast([*history[:1], res(Odd()), history[2]], provider)
        assert not fast([*history, {"role": "user", "content": "q"}], provider)
        assert not fast([*history[:2], ModelRequest(parts="abc")], provider)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", [p for p in toolpair.PROVIDERS if p not in SUPPORTED])
def test_every_provider_takes_the_fast_path(provider: str) -> None:
    # Every provider's checker reads the skeleton: a history its rules accept takes the
    # no-op path (the verdict repair acts on, under the profile's checker).
    plain = realistic(12, portable_ids=True, plain=True)
    assert full(plain, provider) == []
    p = parse(plain, provider, PydanticAICodec(), {})
    assert certainly_valid(p.codec, p.profile.checker, p.raw, p.ctx)
    said = realistic(12, portable_ids=True)
    p = parse(said, provider, PydanticAICodec(), {})
    if certainly_valid(p.codec, p.profile.checker, p.raw, p.ctx):
        assert full(said, provider) == []
