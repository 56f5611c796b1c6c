"""Blank text against ChatAnthropic's own formatter: toolpair reports Anthropic's A10
(``anthropic.empty_text``) exactly where the request body the real formatter builds
holds blank text Anthropic refuses, on every LangChain construct that can carry it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

import toolpair
from toolpair.integrations.langchain import codec_for, repair_report, validate_messages
from toolpair.integrations.langchain._codec import _trims_final

EMPTY = "messages: text content blocks must be non-empty"
BLANK = "messages: text content blocks must contain non-whitespace text"
CODE = "anthropic.empty_text"

MODEL = ChatAnthropic(model="claude-sonnet-4-5", api_key="test")
CODEC = codec_for(MODEL)


def body_of(history: list[BaseMessage]) -> list[dict[str, Any]]:
    """The ``messages`` of the request the installed ChatAnthropic would send."""
    return MODEL._get_request_payload(history)["messages"]


def refused(body: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(request message, A10 text) for every message of ``body`` Anthropic refuses for
    its text: an empty text block, or whitespace-only text and no non-blank text."""
    out = []
    for k, msg in enumerate(body):
        content = msg["content"]
        if isinstance(content, str):
            blocks, texts = [], [content] if content else []
        else:
            blocks = [b["text"] for b in content if b.get("type") == "text"]
            texts = blocks
        if "" in blocks:
            out.append((k, EMPTY))
        elif texts and not any(t.strip() for t in texts):
            out.append((k, BLANK))
    return out


def reported(history: list[BaseMessage], provider: str = "anthropic") -> list[tuple[int, str]]:
    return [
        (v.index, v.message)
        for v in toolpair.validate(history, provider, format=CODEC)
        if v.code == CODE
    ]


# -- the consistency property --------------------------------------------------------

TEXTS = ("", " ", "\n", "hi")
part = st.one_of(
    st.sampled_from(TEXTS),  # a bare string in list content
    st.sampled_from(TEXTS).map(lambda t: {"type": "text", "text": t}),
)
content = st.one_of(st.sampled_from(TEXTS), st.lists(part, min_size=1, max_size=3))


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    """Small histories with blank text in every construct, in every position: user and
    assistant; string content, string parts and text block dicts; "", " " and "\\n";
    alone, beside real text, beside a call (valid or invalid); first, middle, last."""
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage("sys"))
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["human", "ai", "call", "invalid"]))
        if kind == "human":
            out.append(HumanMessage(draw(content)))
        elif kind == "ai":
            out.append(AIMessage(draw(content)))
        elif kind == "call":
            n += 1
            call = {"type": "tool_call", "id": f"c{n}", "name": "f", "args": {}}
            out.append(AIMessage(draw(content), tool_calls=[call]))
            if draw(st.booleans()):
                out.append(ToolMessage("ok", tool_call_id=f"c{n}"))
        else:
            n += 1
            name = draw(st.sampled_from(["f", None]))
            bad = {"type": "invalid_tool_call", "id": f"c{n}", "name": name, "args": "{"}
            out.append(AIMessage(draw(content), invalid_tool_calls=[bad]))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_reported_iff_the_formatter_sends_refused_text(history: list[BaseMessage]) -> None:
    body = body_of(history)
    want = refused(body)
    got = reported(history)
    assert bool(got) == bool(want), (body, got)
    kept = [i for i, m in enumerate(history) if not isinstance(m, SystemMessage)]
    if len(body) == len(kept):
        # One request message per LangChain message: the indices line up.
        assert sorted(got) == sorted((kept[k], text) for k, text in want), body
    else:
        # Merged user messages or dropped empty assistant ones: the texts only.
        assert {t for _, t in got} == {t for _, t in want}, body
    # Portable holds a history to Anthropic's rules too, with the same formatter.
    assert reported(history, "portable") == got


# -- rejected examples and their accepted twins ----------------------------------------

CALL = {"type": "tool_call", "id": "c1", "name": "f", "args": {}}
Q = HumanMessage("q")
OK = AIMessage("ok")

#: name -> (rejected history, its accepted twin, index, A10 text).
CASES: dict[str, tuple[list[BaseMessage], list[BaseMessage], int, str]] = {
    "user_string_whitespace": ([HumanMessage(" "), OK, Q], [HumanMessage("a"), OK, Q], 0, BLANK),
    "user_string_newline_middle": (
        [Q, OK, HumanMessage("\n"), OK, Q],
        # merged with the next user message, its string content is dropped
        [Q, OK, HumanMessage("\n"), Q, OK, Q],
        2,
        BLANK,
    ),
    "user_list_string_part": (
        [Q, OK, HumanMessage([" "]), OK, Q],
        [Q, OK, HumanMessage([{"type": "text", "text": " "}, "a"]), OK, Q],
        2,
        BLANK,
    ),
    "user_list_empty_part_beside_text": (
        [HumanMessage(["", "a"]), OK, Q],
        [HumanMessage([{"type": "text", "text": ""}, "a"]), OK, Q],
        0,
        EMPTY,
    ),
    "merged_user_whitespace_parts": (
        [Q, OK, HumanMessage([" "]), HumanMessage(["\n"]), OK, Q],
        [Q, OK, HumanMessage([" "]), HumanMessage(["b"]), OK, Q],
        2,
        BLANK,
    ),
    "assistant_string_middle": ([Q, AIMessage(" "), Q], [Q, AIMessage(""), Q], 1, BLANK),
    "assistant_beside_a_call": (
        [Q, AIMessage(" ", tool_calls=[CALL]), ToolMessage("r", tool_call_id="c1"), Q],
        [Q, AIMessage("", tool_calls=[CALL]), ToolMessage("r", tool_call_id="c1"), Q],
        1,
        BLANK,
    ),
    "assistant_list_empty_part": (
        [Q, AIMessage(["", "a"]), Q],
        [Q, AIMessage([{"type": "text", "text": ""}, "a"]), Q],
        1,
        EMPTY,
    ),
}


#: Whitespace-only text beside a tool use: held to A10 only without a model.
BESIDE_A_CALL = {"assistant_beside_a_call"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_and_accepted_twin(name: str) -> None:
    bad, good, index, text = CASES[name]
    assert refused(body_of(bad)), "the formatter must send what Anthropic refuses"
    assert not refused(body_of(good))
    if name in BESIDE_A_CALL:
        # A recorded 200 (claude-haiku-4-5, tests/recorded) took whitespace-only text
        # beside a tool use: a named model is not held to it, the strict set still is.
        assert not [v for v in validate_messages(bad, MODEL) if v.code == CODE]
        violations = [
            v for v in toolpair.validate(bad, "anthropic", format=CODEC) if v.code == CODE
        ]
    else:
        violations = [v for v in validate_messages(bad, MODEL) if v.code == CODE]
    assert (violations[0].index, violations[0].message) == (index, text)
    # Merged into one request message, each LangChain message is reported for itself.
    assert {v.message for v in violations} == {text}
    assert len(violations) == (2 if name.startswith("merged") else 1)
    assert not [v for v in validate_messages(good, MODEL) if v.code == CODE]
    assert not [v for v in toolpair.validate(good, "anthropic", format=CODEC) if v.code == CODE]


def test_final_assistant_follows_the_installed_formatter() -> None:
    # 1.x strips the final assistant message: blank string content goes as "" (which
    # Anthropic takes there), a blank string part ending it as an empty block; 0.3.x
    # sends both as they are.
    whole = [Q, AIMessage(" ")]
    tail = [Q, AIMessage(["a", " "])]
    if _trims_final():
        assert reported(whole) == [] and refused(body_of(whole)) == []
        assert reported(tail) == [(1, EMPTY)] == refused(body_of(tail))
    else:
        assert reported(whole) == [(1, BLANK)] == refused(body_of(whole))
        assert reported(tail) == [] == refused(body_of(tail))


# -- repair ------------------------------------------------------------------------------


def test_repair_reports_sent_blank_text_and_changes_nothing() -> None:
    # LangChain has no no-op checker, so nothing can clear this history unread: the
    # full rules see the blank text, and repair (which has no truthful fix for it)
    # leaves it and reports it.
    history = [HumanMessage(" "), OK, Q]
    result = repair_report(history, MODEL)
    assert [str(f) for f in result.fixes] == [f"unrepaired at 0: [{CODE}] {BLANK}"]
    assert not result.changed
    assert all(a is b for a, b in zip(result.messages, history, strict=True))


def test_repair_leaves_blank_text_beside_a_real_fix() -> None:
    # A dangling call is answered; the blank text beside it stays, reported.
    history = [Q, AIMessage(" ", tool_calls=[CALL]), Q]
    # The strict set (no model) holds the blank text to A10; a named model is not
    # (a recorded 200), so there only the dangling call is answered.
    named = repair_report(history, MODEL)
    assert [f.kind for f in named.fixes] == ["synthetic_result"]
    assert named.messages[1] is history[1]
    result = toolpair.repair(history, "anthropic", format=CODEC)
    kinds = [f.kind for f in result.fixes]
    assert "unrepaired" in kinds and kinds.count("unrepaired") == 1
    (left,) = result.unrepaired
    assert (left.index, left.detail) == (1, f"[{CODE}] {BLANK}")
    assert result.messages[1] is history[1]
    assert result.messages[0] is history[0]
    assert isinstance(result.messages[2], ToolMessage)
    assert result.messages[3] is history[2]


def test_repair_ignores_blank_text_the_formatter_drops() -> None:
    history = [HumanMessage([{"type": "text", "text": " "}, "a"]), OK, Q]
    result = repair_report(history, MODEL)
    assert result.fixes == []
    assert all(a is b for a, b in zip(result.messages, history, strict=True))
