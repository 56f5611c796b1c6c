"""Blank text and Anthropic's A10 (`PydanticAICodec.sends_blank_text`).

Anthropic rejects an empty text block, and a whitespace-only one in a message with no
other non-blank text. toolpair judges only the blank text pydantic-ai's own formatter
(``AnthropicModel._map_message``) puts into the request, so the main test runs that
formatter on small histories holding blank text in every construct pydantic-ai has, and
asserts that toolpair reports ``anthropic.empty_text`` exactly where the body it built
holds such a message, with the same wording and the same message.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelResponse,
    TextContent,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

import toolpair
from toolpair._api import parse
from toolpair.engine.fast import certainly_valid
from toolpair.integrations.pydantic_ai import PydanticAICodec, repair, validate

from .history import call, req, res, ret, user

EMPTY = "messages: text content blocks must be non-empty"
BLANK = "messages: text content blocks must contain non-whitespace text"
CODE = "anthropic.empty_text"

BLANKS = ["", " ", "\n", " \t\n"]
TEXTS = [*BLANKS, "hi"]

_MODEL = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(api_key="test"))
_PARAMS = ModelRequestParameters()


def body_of(history: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """The ``messages`` pydantic-ai's Anthropic model would send for ``history``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _, messages = asyncio.run(_MODEL._map_message(list(history), _PARAMS, {}))
    return [dict(m) for m in messages]


def expected(body: Sequence[dict[str, Any]]) -> dict[int, str]:
    """Body index -> the A10 message Anthropic gives for it: an empty text block, else
    whitespace-only text (a block, or string content) with no non-blank text beside it."""
    out: dict[int, str] = {}
    for j, m in enumerate(body):
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [b["text"] for b in blocks if b.get("type") == "text"]
        if any(t == "" for t in texts):
            out[j] = EMPTY
        elif texts and not any(t.strip() for t in texts):
            out[j] = BLANK
    return out


def reported(history: Sequence[ModelMessage], provider: str = "anthropic") -> dict[int, str]:
    found = [v for v in validate(list(history), provider) if v.code == CODE]
    out = {v.index: v.message for v in found}
    assert len(out) == len(found), found  # one violation per message
    return out


def aligned(history: Sequence[ModelMessage]) -> tuple[list[dict[str, Any]], list[int]]:
    """The body, and for each of its messages the history message it came from.

    pydantic-ai maps each message on its own and leaves out the ones that map to
    nothing (all their text dropped), which this checks by formatting them one by one."""
    body = body_of(history)
    origin: list[int] = []
    pieces: list[dict[str, Any]] = []
    for k, m in enumerate(history):
        one = body_of([m])
        assert len(one) <= 1
        origin += [k] * len(one)
        pieces += one
    assert pieces == body
    return body, origin


def no_op_refuses(history: list[ModelMessage], provider: str) -> bool:
    p = parse(history, provider, PydanticAICodec(), {})
    return not certainly_valid(p.codec, provider, p.raw, p.ctx)


# --- the property ------------------------------------------------------------------

text = st.sampled_from(TEXTS)
list_item = st.one_of(
    text,
    text.map(TextContent),
    st.just(ImageUrl("https://example.com/a.png")),
)
user_prompt = st.one_of(
    text.map(user),
    st.lists(list_item, min_size=1, max_size=3).map(lambda items: UserPromptPart(items)),
)


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    """Requests and responses in any order (blank text first, in the middle, last; a
    response may follow a response), each holding user prompts or texts of every
    blankness, alone, beside real text and beside calls or their returns."""
    out: list[ModelMessage] = []
    ids = iter(f"t{n}" for n in range(100))
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            parts: list[Any] = []
            for _ in range(draw(st.integers(1, 3))):
                parts.append(ret(next(ids)) if draw(st.integers(0, 3)) == 0 else draw(user_prompt))
            out.append(req(*parts))
        else:
            parts = []
            for _ in range(draw(st.integers(1, 3))):
                parts.append(
                    call(next(ids)) if draw(st.integers(0, 3)) == 0 else TextPart(draw(text))
                )
            out.append(res(*parts))
    return out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_reported_exactly_where_the_formatter_sends_blank_text(
    history: list[ModelMessage],
) -> None:
    body, origin = aligned(history)
    want = {origin[j]: message for j, message in expected(body).items()}
    assert reported(history) == want, body
    # The union of all providers holds Anthropic's rule, asked the same way.
    assert reported(history, "portable") == want
    # The same body as wire dicts, judged by the rule itself, agrees.
    wire = {v.index: v.message for v in toolpair.validate(body, "anthropic") if v.code == CODE}
    assert {origin[j]: message for j, message in wire.items()} == want
    if want:
        for provider in ("anthropic", "portable"):
            assert no_op_refuses(history, provider)


# --- examples ----------------------------------------------------------------------

REJECTED = {
    "user_space": ([req(user(" ")), res(TextPart("a")), req(user("q"))], 0),
    "user_newline_last": ([req(user("q")), res(TextPart("a")), req(user("\n"))], 2),
    "user_list": ([req(UserPromptPart(["", " "])), res(TextPart("a")), req(user("q"))], 0),
    "user_text_content": (
        [req(UserPromptPart([TextContent(" "), ImageUrl("https://example.com/a.png")]))],
        0,
    ),
    "user_beside_return": (
        [req(user("q")), res(call("t1")), req(ret("t1"), user(" ")), res(TextPart("a"))],
        2,
    ),
    "assistant_space": ([req(user("q")), res(TextPart(" ")), req(user("q2"))], 1),
    "assistant_beside_call": (
        [req(user("q")), res(TextPart("\n"), call("t1")), req(ret("t1"))],
        1,
    ),
}

#: The same histories with the blank text empty (pydantic-ai drops it) or beside real
#: text in its message (Anthropic accepts that).
ACCEPTED = {
    "user_space": [req(user("")), res(TextPart("a")), req(user("q"))],
    "user_newline_last": [req(user("q")), res(TextPart("a")), req(user("\n"), user("q"))],
    "user_list": [req(UserPromptPart(["", ""])), res(TextPart("a")), req(user("q"))],
    "user_text_content": [
        req(UserPromptPart([TextContent(""), ImageUrl("https://example.com/a.png")]))
    ],
    "user_beside_return": [
        req(user("q")),
        res(call("t1")),
        req(ret("t1"), user(" "), user("and")),
        res(TextPart("a")),
    ],
    "assistant_space": [req(user("q")), res(TextPart("")), req(user("q2"))],
    "assistant_beside_call": [req(user("q")), res(TextPart(""), call("t1")), req(ret("t1"))],
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_example(name: str) -> None:
    history, index = REJECTED[name]
    found = [v for v in validate(history, "anthropic") if v.code == CODE]
    assert [(v.index, v.message) for v in found] == [(index, BLANK)]
    assert expected(body_of(history))  # the formatter does send it
    assert no_op_refuses(history, "anthropic")


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_twin(name: str) -> None:
    history = ACCEPTED[name]
    assert [v for v in validate(history, "anthropic") if v.code == CODE] == []
    assert not expected(body_of(history))


def test_pydantic_ai_never_sends_an_empty_text_block() -> None:
    # Every empty text is dropped, so A10's "non-empty" wording never applies here.
    history = [
        req(user(""), UserPromptPart(["", TextContent("")])),
        res(TextPart(""), call("t1")),
        req(ret("t1"), user("")),
    ]
    assert reported(history) == {}
    assert not expected(body_of(history))


def test_sends_blank_text_per_construct() -> None:
    codec = PydanticAICodec()
    sent = {
        "TextPart('')": (res(TextPart("")), False),
        "TextPart(' ')": (res(TextPart(" ")), True),
        "user('')": (req(user("")), False),
        "user('\\n')": (req(user("\n")), True),
        "user(['', ''])": (req(UserPromptPart(["", ""])), False),
        "user(['', ' '])": (req(UserPromptPart(["", " "])), True),
        "user([TextContent('')])": (req(UserPromptPart([TextContent("")])), False),
        "user([TextContent(' ')])": (req(UserPromptPart([TextContent(" ")])), True),
    }
    for name, (message, want) in sent.items():
        (block,) = codec.decode([message])[0].blocks
        assert block.kind == "text" and block.text is not None and not block.text.strip()
        for provider in ("anthropic", "portable"):
            assert codec.sends_blank_text(block, provider) is want, name
        assert bool(expected(body_of([message]))) is want, name


# --- repair ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_repair_reports_blank_text_and_leaves_it(name: str) -> None:
    history, index = REJECTED[name]
    out = repair(history, "anthropic")
    # Repair has no fix for blank text (dropping or filling it would change what was
    # said), so it reports it as unrepaired and changes nothing.
    assert [(f.kind, f.index) for f in out.fixes] == [("unrepaired", index)]
    assert BLANK in out.fixes[0].detail
    assert not out.changed
    assert all(a is b for a, b in zip(out.messages, history, strict=True))
    assert repair(out.messages, "anthropic").fixes == out.fixes


def test_repair_of_a_long_history_reports_blank_text_in_its_piece() -> None:
    # Long histories are repaired in pieces, each cleared by the no-op checker or
    # decoded; the piece holding the blank text must be decoded and judged.
    history: list[ModelMessage] = []
    for n in range(150):
        history += [req(user(f"q{n}")), res(call(f"c{n}")), req(ret(f"c{n}")), res(TextPart("a"))]
    history[301] = res(TextPart(" "), call("c75"))
    out = repair(history, "anthropic")
    assert [(f.kind, f.index) for f in out.fixes] == [("unrepaired", 301)]
    assert all(a is b for a, b in zip(out.messages, history, strict=True))


def test_a_repaired_history_keeps_its_blank_text_reported() -> None:
    # A dangling call is fixed; the blank text beside it is still reported, not lost.
    history = [req(user("q")), res(TextPart(" "), call("t1")), req(user("next"))]
    out = repair(history, "anthropic")
    assert ("unrepaired", 1) in [(f.kind, f.index) for f in out.fixes]
    assert out.changed
    assert out.messages[1] is history[1]
    assert isinstance(out.messages[1], ModelResponse)
    assert out.messages[1].parts[0] == TextPart(" ")
    assert [v.index for v in validate(out.messages, "anthropic")] == [1]
