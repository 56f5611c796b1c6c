"""The no-op path of the pydantic-ai codec (`PydanticAICodec.certainly_valid`).

It may only say "certainly valid" where the full rules find nothing (the property,
over the reliability suite's generated histories, their repaired outputs and
pydantic-ai specific hazards added to both), and it must say so for an ordinary valid
history, or repair would decode every history it is given (the examples).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pai_histories import T0, call, req, res, ret, user
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolReturnPart,
    UserPromptPart,
)
from test_reliability import FUZZ, HAS_OUTCOME, histories, render

import toolpair
from toolpair._api import parse
from toolpair._fast import certainly_valid
from toolpair.integrations.pydantic_ai import PydanticAICodec, repair, validate

sys.path.append(str(Path(__file__).parents[2] / "core"))
from gen import abstract_history

#: The providers the codec has a checker for; every other one takes the full path.
SUPPORTED = ("anthropic", "openai", "portable")


def fast(history: list[Any], provider: str, **context: Any) -> bool:
    """The verdict repair acts on (exceptions in the checker mean the full path)."""
    p = parse(history, provider, PydanticAICodec(), context)
    return certainly_valid(p.codec, provider, p.raw, p.ctx)


def full(history: list[Any], provider: str, **context: Any) -> list[toolpair.Violation]:
    p = parse(history, provider, PydanticAICodec(), context)
    return p.profile.rules(p.messages, p.ctx)


def _retry_part(content: Any, call_id: str | None) -> Any:
    """A retry prompt as this pydantic-ai version writes it: 2.x answers a call with a
    ``retried`` return and sends call-less feedback as a `RetryFeedbackPart`; 1.x has
    `RetryPromptPart` for both."""
    import pydantic_ai.messages as m

    if hasattr(m, "RetryFeedbackPart"):
        if call_id is not None:
            return ToolReturnPart(
                "get_x", content, tool_call_id=call_id, timestamp=T0, outcome="retried"
            )
        return m.RetryFeedbackPart(content, retry=m.RetryInfo("validation_error"), timestamp=T0)
    if call_id is not None:
        return m.RetryPromptPart(content, tool_name="get_x", tool_call_id=call_id, timestamp=T0)
    return m.RetryPromptPart(content, timestamp=T0)


def _legacy_retry(content: Any, call_id: str | None) -> Any:
    """`RetryPromptPart` itself, deprecated on 2.x but still read by the codec."""
    from pydantic_ai.messages import RetryPromptPart

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if call_id is None:
            return RetryPromptPart(content, timestamp=T0)
        return RetryPromptPart(content, tool_name="get_x", tool_call_id=call_id, timestamp=T0)


def _server_call() -> Any:
    import pydantic_ai.messages as m

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = getattr(m, "NativeToolCallPart", None) or m.BuiltinToolCallPart
    return cls("web_search", {"q": "x"}, tool_call_id="srvtoolu_1", provider_name="anthropic")


# Hazards added to generated histories ---------------------------------------------------

HAZARDS = (
    "retry_for_return",
    "legacy_retry_for_return",
    "retry_feedback",
    "empty_error_return",
    "blank_text",
    "trailing_space",
    "system_prompt",
    "thinking",
    "empty_message",
    "move_part",
    "blank_in_list",
    "server_tool",
)


def _replace_part(history: list[ModelMessage], i: int, k: int, part: Any) -> None:
    parts = list(history[i].parts)
    parts[k] = part
    history[i] = dataclasses.replace(history[i], parts=parts)


def _insert_part(history: list[ModelMessage], i: int, k: int, part: Any) -> None:
    parts = list(history[i].parts)
    parts.insert(k, part)
    history[i] = dataclasses.replace(history[i], parts=parts)


def _where(history: list[ModelMessage], kind: str) -> list[tuple[int, int]]:
    return [
        (i, k) for i, m in enumerate(history) for k, p in enumerate(m.parts) if p.part_kind == kind
    ]


@st.composite
def hazardous(draw: st.DrawFn, history: list[ModelMessage]) -> list[ModelMessage]:
    """``history`` with a few pydantic-ai specific hazards; new messages where changed,
    so the original (possibly a repair's output sharing objects) stays as it was."""
    out = list(history)
    requests = [i for i, m in enumerate(out) if isinstance(m, ModelRequest)]
    responses = [i for i, m in enumerate(out) if isinstance(m, ModelResponse)]
    contents = st.sampled_from(["fix the args", "", "  ", None, [], ["x"]])
    for h in draw(st.lists(st.sampled_from(HAZARDS), max_size=3)):
        returns = _where(out, "tool-return")
        texts = _where(out, "text") + _where(out, "user-prompt")
        if h in ("retry_for_return", "legacy_retry_for_return", "empty_error_return") and returns:
            i, k = draw(st.sampled_from(returns))
            cid = out[i].parts[k].tool_call_id
            content = draw(contents)
            if h == "retry_for_return":
                part = _retry_part(content if content is not None else "", cid)
            elif h == "legacy_retry_for_return":
                part = _legacy_retry(content if content is not None else "", cid)
            elif HAS_OUTCOME:
                part = ToolReturnPart("get_x", content, tool_call_id=cid, outcome="failed")
            else:
                part = ToolReturnPart("get_x", content, tool_call_id=cid)
            _replace_part(out, i, k, part)
        elif h == "retry_feedback" and requests:
            i = draw(st.sampled_from(requests))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(out, i, k, _retry_part(draw(st.sampled_from(["use JSON", ""])), None))
        elif h == "blank_text" and texts:
            i, k = draw(st.sampled_from(texts))
            text = draw(st.sampled_from(["", " ", "\n", "ok "]))
            part = out[i].parts[k]
            _replace_part(out, i, k, dataclasses.replace(part, content=text))
        elif h == "trailing_space":
            out.append(res(TextPart(draw(st.sampled_from(["done ", "done\n", "done"])))))
        elif h == "system_prompt" and requests:
            i = draw(st.sampled_from(requests))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(out, i, k, SystemPromptPart("be brief", timestamp=T0))
        elif h == "thinking" and responses:
            i = draw(st.sampled_from(responses))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(
                out, i, k, ThinkingPart("hm", signature=draw(st.sampled_from(["s", None])))
            )
        elif h == "empty_message":
            i = draw(st.integers(0, len(out)))
            out.insert(i, draw(st.sampled_from([req(), res()])))
        elif h == "move_part" and out:
            i = draw(st.integers(0, len(out) - 1))
            parts = list(out[i].parts)
            if len(parts) > 1:
                a, b = draw(st.permutations(range(len(parts))))[:2]
                parts[a], parts[b] = parts[b], parts[a]
                out[i] = dataclasses.replace(out[i], parts=parts)
        elif h == "blank_in_list" and requests:
            i = draw(st.sampled_from(requests))
            part = UserPromptPart([draw(st.sampled_from(["", " ", "look"])), ImageUrl("u")])
            _insert_part(out, i, draw(st.integers(0, len(out[i].parts))), part)
        elif h == "server_tool" and responses:
            _insert_part(out, draw(st.sampled_from(responses)), 0, _server_call())
    return out


@FUZZ
@given(
    data=st.data(),
    history=histories(),
    repaired_for=st.sampled_from((None, *SUPPORTED)),
)
def test_fast_path_never_hides_a_violation(
    data: st.DataObject, history: list[ModelMessage], repaired_for: str | None
) -> None:
    if repaired_for is not None:
        history = repair(history, repaired_for).messages
    if data.draw(st.booleans()):
        history = data.draw(hazardous(history))
    for provider in toolpair.PROVIDERS:
        verdict = PydanticAICodec().certainly_valid(history, provider, parse_ctx(provider))
        if provider not in SUPPORTED:
            assert verdict is None
        elif fast(history, provider):
            assert full(history, provider) == []


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


def realistic(n: int, portable_ids: bool = False) -> list[ModelMessage]:
    """An agent's history: system prompt, questions, parallel calls with text and
    thinking before them, answered results (one a failure with content), answers."""
    counter = itertools.count()

    def cid() -> str:
        k = next(counter)
        return f"call{k:05d}" if portable_ids else f"toolu_01{k:022d}"

    out: list[ModelMessage] = [req(SystemPromptPart("You are helpful.", timestamp=T0), user("hi"))]
    while len(out) < n:
        a, b = cid(), cid()
        out.append(
            res(ThinkingPart("plan", signature="sig"), TextPart("Looking."), call(a), call(b))
        )
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
    assert PydanticAICodec().certainly_valid(history, provider, parse_ctx(provider)) is True

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
        "blank_user_text": ([req(user("   ")), res(TextPart("x")), req(user("q"))], every),
        "blank_assistant_text": ([req(user("q")), res(TextPart("")), req(user("q2"))], every),
        "blank_text_in_list": (
            [req(UserPromptPart([" ", ImageUrl("u")])), res(TextPart("x")), req(user("q"))],
            every,
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
        "legacy_retry_with_details": (
            [req(user("q")), res(TextPart("x")), req(_legacy_retry([{"msg": "x"}], None))],
            every,
        ),
        "server_tool": (
            [req(user("q")), res(_server_call(), TextPart("x")), req(user("q"))],
            every,
        ),
        "empty_request": ([req(user("q")), res(TextPart("x")), req()], every),
        "empty_response": ([req(user("q")), res(), req(user("q2"))], every),
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
        assert not fast([*history[:2], req(Odd())], provider)
        assert not fast([*history[:1], res(Odd()), history[2]], provider)
        assert not fast([*history, {"role": "user", "content": "q"}], provider)
        assert not fast([*history[:2], ModelRequest(parts="abc")], provider)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", [p for p in toolpair.PROVIDERS if p not in SUPPORTED])
def test_other_providers_take_the_full_path(provider: str) -> None:
    history = realistic(12)
    assert PydanticAICodec().certainly_valid(history, provider, parse_ctx(provider)) is None
