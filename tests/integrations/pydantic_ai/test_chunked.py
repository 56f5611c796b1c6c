"""Long pydantic-ai histories repaired in pieces (`toolpair.engine.chunked`, through
`PydanticAICodec.side` and the no-op verdict of a fragment, `check(..., frag)`): never
a different answer.

The piece path is forced on short generated histories (``MIN_MESSAGES = 0``) with runs
short enough that failing runs are split; its result must be the full path's, message
for message and fix for fix, and keep every repair property. Responses carry distinct
timestamps, so a synthesized return that lost its call's timestamp shows.
"""

from __future__ import annotations

import dataclasses
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ThinkingPart

import toolpair
from tests.support.pieces import full_path, pieces
from toolpair._api import parse
from toolpair.engine import chunked
from toolpair.engine.fast import Frag, check
from toolpair.integrations.pydantic_ai import PydanticAICodec, repair

from .adapter import FUZZ, check_properties, hazardous, histories
from .history import T0, call, req, res, ret, user
from .test_fast import SUPPORTED

sys.path.append(str(Path(__file__).parents[3] / "bench"))
import histories as H

#: Anything made later than this was made by repair (every input is dated 2024).
_FRESH = T0 + timedelta(days=365)


def _stable(x: Any) -> Any:
    """``x`` with the timestamps repair makes at the time it runs (a text part's) made
    equal; every other timestamp is kept, so one copied from a call's response is
    compared."""
    if isinstance(x, datetime):
        return "now" if x > _FRESH else x
    if isinstance(x, dict):
        return {k: _stable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_stable(v) for v in x]
    return x


def stable(history: list[ModelMessage]) -> list[Any]:
    return [_stable(dataclasses.asdict(m)) for m in history]


def dated(history: list[ModelMessage]) -> list[ModelMessage]:
    """Each response at its own time, as an agent run writes them."""
    return [
        dataclasses.replace(m, timestamp=T0 + timedelta(seconds=k))
        if isinstance(m, ModelResponse)
        else m
        for k, m in enumerate(history)
    ]


def assert_same_answer(history: list[ModelMessage], provider: str, run: int) -> None:
    with full_path():
        try:
            want = repair(history, provider)
        except toolpair.InvalidHistory as e:
            # A hazard can leave a part in the wrong kind of message: both paths say so.
            with pieces(run), pytest.raises(toolpair.InvalidHistory) as got_error:
                repair(history, provider)
            assert str(got_error.value) == str(e)
            return
    with pieces(run):
        got = repair(history, provider)
    assert stable(got.messages) == stable(want.messages)
    assert sorted(map(str, got.fixes)) == sorted(map(str, want.fixes))
    assert got.id_map == want.id_map
    # Untouched messages are the input's own objects on both paths.
    mine = {id(m) for m in history}
    assert [id(m) in mine for m in got.messages] == [id(m) in mine for m in want.messages]


@st.composite
def long_histories(draw: st.DrawFn) -> list[ModelMessage]:
    """Generated defective histories end to end, some with pydantic-ai hazards (thinking,
    retries, blank texts...), so there are many exchanges, clean and broken."""
    out: list[ModelMessage] = []
    for h in draw(st.lists(histories(), min_size=1, max_size=4)):
        out += draw(hazardous(h)) if draw(st.booleans()) else h
    return dated(out)


@pytest.mark.parametrize("provider", SUPPORTED)
@FUZZ
@given(history=long_histories(), run=st.sampled_from([1, 2, 8]))
def test_pieces_give_the_full_answer(provider: str, history: Any, run: int) -> None:
    assert_same_answer(history, provider, run)


@pytest.mark.parametrize("provider", SUPPORTED)
@FUZZ
@given(history=histories(), run=st.sampled_from([1, 2, 8]))
def test_pieces_keep_every_property(provider: str, history: Any, run: int) -> None:
    with pieces(run):
        check_properties(dated(history), provider)


# Examples ------------------------------------------------------------------------------


def _chunked_repair(history: list[ModelMessage], provider: str) -> Any:
    p = parse(history, provider, PydanticAICodec(), {})
    return chunked.repair(p.raw, p.codec, p.profile, toolpair.Policy(), p.ctx)


@pytest.mark.parametrize("run", [1, 2, 8])
def test_the_bench_history_is_repaired_in_pieces(run: int) -> None:
    history = H.framework("pydantic-ai", 2000, defects=True)
    with pieces(run):
        assert _chunked_repair(history, "anthropic") is not None
        got = repair(history, "anthropic")
    with full_path():
        want = repair(history, "anthropic")
    assert got.fixes
    assert stable(got.messages) == stable(want.messages)
    assert sorted(map(str, got.fixes)) == sorted(map(str, want.fixes))
    kept = {id(m) for m in history} & {id(m) for m in got.messages}
    assert len(kept) > 0.9 * len(history)


def _exchanges(n: int, start: int = 0) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for k in range(start, start + n):
        a, b = f"call{k:05d}", f"call{k + 5000:05d}"
        out += [res(call(a), call(b)), req(ret(a), ret(b)), res(TextPart("ok")), req(user("go"))]
    return out


@pytest.mark.parametrize("provider", SUPPORTED)
def test_a_dangling_call_is_answered_with_its_response_time(provider: str) -> None:
    # The pieces are all decoded before any is repaired: a synthesized return in the
    # first broken piece still takes the time of its call's response.
    history = dated([req(user("hi")), *_exchanges(20)])
    del history[6]  # a return request: two calls dangle
    del history[61]  # and two more, further on
    with pieces(2):
        assert _chunked_repair(history, provider) is not None
        got = repair(history, provider)
    with full_path():
        want = repair(history, provider)
    assert stable(got.messages) == stable(want.messages)
    made = [
        (p.tool_call_id, p.timestamp)
        for m in got.messages
        if m not in history
        for p in m.parts
        if p.part_kind == "tool-return"
    ]
    assert len(made) == 4
    times = {
        p.tool_call_id: m.timestamp for m in history for p in m.parts if p.part_kind == "tool-call"
    }
    assert all(when == times[i] for i, when in made)


@pytest.mark.parametrize("provider", SUPPORTED)
def test_a_fragment_is_checked_in_its_place(provider: str) -> None:
    codec, ctx = PydanticAICodec(), parse([], provider, PydanticAICodec(), {}).ctx
    body = _exchanges(2)
    # Not first: it follows a request, so it may (and here must) open with a response.
    frag = Frag(False, False, "user", set())
    assert check(codec, provider, body, ctx, frag) is True
    assert frag.thinking is False
    assert frag.seen == {"call00000", "call05000", "call00001", "call05001"}
    # Its ids again, anywhere later in the conversation: refused, seen unchanged.
    again = Frag(False, False, "user", frag.seen)
    assert check(codec, provider, _exchanges(1, 1), ctx, again) is not True
    assert frag.seen == {"call00000", "call05000", "call00001", "call05001"}
    # The whole history's first-message rules are the first fragment's only.
    first = Frag(True, False, None, set())
    verdict = check(codec, provider, body, ctx, first)
    assert (verdict is True) == (provider != "portable")
    # A10 (no trailing whitespace at the end) binds the last fragment only.
    if provider == "anthropic":
        tail = [*body, res(TextPart("done "))]
        assert check(codec, provider, tail, ctx, Frag(False, False, "user", set()))
        assert check(codec, provider, tail, ctx, Frag(False, True, "user", set())) is None
    # Thinking is reported, for the core to leave such histories to the full path.
    think = [res(ThinkingPart("hm", signature="s"), TextPart("ok")), req(user("go"))]
    frag = Frag(False, False, "user", set())
    if check(codec, provider, think, ctx, frag) is True:
        assert frag.thinking is True


def test_side() -> None:
    codec = PydanticAICodec()
    assert codec.side(res(TextPart("x"))) == "a"
    assert codec.side(req(user("x"))) == "u"
    assert codec.side("not a message") == "u"
