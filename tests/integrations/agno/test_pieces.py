"""Long broken agno histories are repaired in pieces (`toolpair.engine.chunked`): the codec
tells the sides apart and its checkers clear fragments. Pieces are an optimisation,
never a different answer: every case here is compared with the full path."""

from __future__ import annotations

import logging
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agno.models.message import Message

import toolpair
from tests.support.pieces import answered_in_pieces
from toolpair._api import parse
from toolpair.engine import chunked
from toolpair.engine.fast import Frag, check
from toolpair.integrations.agno import repair_messages
from toolpair.integrations.agno._codec import AgnoCodec
from toolpair.providers import Context

PROVIDERS = ("anthropic", "openai", "openai-responses", "bedrock", "gemini", "mistral")
#: The providers whose checkers clear fragments: the others always take the full path.
PIECED = ("anthropic", "openai")
SEEDS = range(120)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # Every repair logs a WARNING summing up its fixes; thousands of them here.
    logger = logging.getLogger("toolpair")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def _say(role: str, text: str, **kw: Any) -> Message:
    return Message(role=role, content=text, **kw)


def _call(i: str, rng: random.Random, rare: bool) -> dict[str, Any]:
    tc: dict[str, Any] = {
        "id": i,
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": 1}'},
    }
    if rare and rng.random() < 0.02:
        tc["call_id"] = f"call_{i}"  # a Responses-made call: results may name either id
    return tc


def _result(i: str, rng: random.Random, rare: bool = False) -> Message:
    # An empty error result is broken for Anthropic (a piece repairs it) but only
    # filled in by the full path for OpenAI, which takes it whole then.
    if rng.random() < (0.05 if rare else 0.003):
        return Message(role="tool", tool_call_id=i, content="", tool_call_error=True)
    return Message(role="tool", tool_call_id=i, tool_name="lookup", content=f"out {i}")


def history(seed: int, exchanges: int = 24) -> list[Message]:
    """A history of agno messages with the defects stored histories have, each rare
    enough that most exchanges stay clean: lost, repeated, misplaced and orphaned
    results, reused ids, user text between a call and its results, system messages
    mid-history, reasoning, blank or trailing-whitespace text, Responses call_ids."""
    rng = random.Random(seed)
    p = 0.04 if seed % 3 else 0.12
    # What sends a whole history down the full path (reasoning, an empty message, a
    # system message mid-history, a Responses call_id, blank text) comes in one history
    # in four only, so that most of the rest are repaired in pieces.
    rare = seed % 4 == 0
    out: list[Message] = []
    if rng.random() < 0.7:
        out.append(_say("system", "be brief"))
    out.append(_say("user", "hi"))
    made: list[str] = []
    late: list[Message] = []  # results held back to land in a later exchange
    for t in range(exchanges):
        kw: dict[str, Any] = {}
        if rare and rng.random() < 0.05:
            kw["reasoning_content"] = "thinking it over"
        text = None
        if rng.random() < 0.5:
            text = rng.choice(["let me look", "ok ", "checking"]) if rng.random() < p else "ok"
            if rare and rng.random() < 0.05:
                text = " "
        ids = [f"toolu_{seed}_{t}_{j}" for j in range(rng.choice([0, 1, 1, 2, 3]))]
        if not ids and text is None and not (rare and rng.random() < 0.2):
            text = "ok"  # an empty message
        if ids and made and rng.random() < p / 4:
            # An id reused from an earlier exchange, and (below) a result that lands in a
            # later one: pieces cannot be kept apart then, the full path takes them.
            ids[0] = rng.choice(made)
        made.extend(ids)
        calls = [_call(i, rng, rare) for i in ids]
        out.append(Message(role="assistant", content=text, tool_calls=calls or None, **kw))
        if rare and rng.random() < 0.05:
            out.append(_say("system", "mind the budget"))
        results = [_result(i, rng, rare) for i in ids if rng.random() > p]
        if results and rng.random() < p:
            rng.shuffle(results)
        if results and rng.random() < p:
            results.append(results[0])  # answered twice
        if results and rng.random() < p / 4:
            late.append(results.pop())
        if results and rng.random() < p:
            results.insert(rng.randrange(len(results) + 1), _say("user", "hm?"))
        if rng.random() < p:
            results.append(_result(f"toolu_gone_{seed}_{t}", rng))  # an orphan
        if late and rng.random() < 0.3:
            results.append(late.pop(0))
        out.extend(results)
        if rng.random() < p and ids and not results:
            continue  # the next assistant turn follows the call at once
        if rng.random() < 0.7 or not ids:
            out.append(_say("user", rng.choice(["go on", "thanks", "and then?"])))
    if rng.random() < 0.5:
        out.append(_say("assistant", rng.choice(["done", "done  "])))
    return out


def _dump(m: Message) -> dict[str, Any]:
    # A message repair made has a fresh uuid and timestamp: not part of the answer.
    return m.model_dump(exclude={"id", "created_at"})


def _answer(
    history: list[Message], out: list[Message], fixes: list[Any]
) -> tuple[list[Any], list[str]]:
    """A stable view of a repair: each message as the input object it is (by position)
    or as its dump, and the fixes."""
    where = {id(m): k for k, m in enumerate(history)}
    msgs = [("same", where[id(m)]) if id(m) in where else ("new", _dump(m)) for m in out]
    return msgs, sorted(map(str, fixes))


@pytest.fixture
def pieces() -> Iterator[None]:
    old = chunked.MIN_MESSAGES, chunked._RUN
    yield
    chunked.MIN_MESSAGES, chunked._RUN = old


def _repair(history: list[Message], provider: str, *, in_pieces: bool) -> toolpair.Repaired:
    chunked.MIN_MESSAGES = 0 if in_pieces else 10**9
    return toolpair.repair(history, provider, format=AgnoCodec())


@pytest.mark.parametrize("run", [1, 2, 8])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_pieces_give_the_full_paths_answer(
    provider: str, run: int, pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunked._RUN = run
    taken = answered_in_pieces(monkeypatch)
    for seed in SEEDS:
        h = history(seed)
        before = [_dump(m) for m in h]
        full = _repair(h, provider, in_pieces=False)
        got = _repair(h, provider, in_pieces=True)
        assert _answer(h, got.messages, got.fixes) == _answer(h, full.messages, full.fixes), seed
        assert got.id_map == full.id_map, seed
        assert [_dump(m) for m in h] == before, seed  # the input is never mutated
        if got.fixes:
            # Idempotent, in pieces too: the repaired history needs nothing more.
            # (What has no truthful repair, such as trailing whitespace on the final
            # text, is reported again each time.)
            again = _repair(got.messages, provider, in_pieces=True)
            assert [f for f in again.fixes if f.kind != "unrepaired"] == [], seed
            assert all(a is b for a, b in zip(again.messages, got.messages, strict=True))
        if not [f for f in got.fixes if f.kind == "unrepaired"]:
            assert toolpair.validate(got.messages, provider, format=AgnoCodec()) == [], seed
    if provider in PIECED:
        # The comparison is not vacuous: many broken histories were repaired in pieces
        # (about half: reused ids, results that land in a later exchange and what
        # `history` keeps rare send the others down the full path).
        assert sum(taken) > len(SEEDS) // 3, sum(taken)
    else:
        assert not any(taken)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repair_messages_in_pieces_gives_the_full_paths_answer(provider: str, pieces: None) -> None:
    """The integration's own entry point, with the formatter fixes it makes first for
    some providers, gives the same answer in pieces as whole."""
    for seed in SEEDS:
        h = history(seed, exchanges=16)
        chunked.MIN_MESSAGES = 10**9
        full = repair_messages(h, provider)
        chunked.MIN_MESSAGES = 0
        got = repair_messages(h, provider)
        assert (got is h) == (full is h), seed
        assert _answer(h, list(got), [])[0] == _answer(h, list(full), [])[0], seed


def test_a_call_id_result_across_pieces_takes_the_full_path(pieces: None) -> None:
    """A result may name a Responses call_id, which only a decode of the whole history
    maps back to its call: such a history is never answered in pieces."""
    h = [_say("user", "hi")]
    h.append(
        Message(
            role="assistant",
            tool_calls=[
                {"id": "fc_1", "call_id": "call_1", "type": "function", "function": {}},
            ],
        )
    )
    h += [_say("user", "wait"), _say("assistant", "sure"), _say("user", "go")]
    h.append(Message(role="tool", tool_call_id="call_1", content="late"))
    h += [_say("assistant", "done")]
    for provider in PIECED:
        full = _repair(h, provider, in_pieces=False)
        got = _repair(h, provider, in_pieces=True)
        assert _answer(h, got.messages, got.fixes) == _answer(h, full.messages, full.fixes)


def _ctx() -> Context:
    return Context(shape="chat")


def test_a_fragment_that_is_not_first_follows_a_user_turn() -> None:
    codec = AgnoCodec()
    call = {"id": "toolu_1", "type": "function", "function": {"name": "f"}}
    frag = [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id="toolu_1", content="x"),
    ]
    for provider in PIECED:
        seen: set[str] = set()
        f = Frag(False, False, "user", seen)
        assert check(codec, provider, frag, _ctx(), f) is True
        assert seen == {"toolu_1"}
        assert f.thinking is False
        # The same ids again, in another fragment: refused, and nothing is recorded.
        again = Frag(False, False, "user", seen)
        assert check(codec, provider, frag, _ctx(), again) is None
        assert seen == {"toolu_1"}


def test_trailing_whitespace_is_the_last_fragments_rule_only() -> None:
    codec = AgnoCodec()
    frag = [_say("assistant", "done  "), _say("user", "ok"), _say("assistant", "so  ")]
    assert check(codec, "anthropic", frag, _ctx()) is None
    assert check(codec, "anthropic", frag, _ctx(), Frag(False, True, "user", set())) is None
    inner = Frag(False, False, "user", set())
    assert check(codec, "anthropic", frag, _ctx(), inner) is True


def test_a_fragment_with_reasoning_says_so() -> None:
    codec = AgnoCodec()
    frag = [Message(role="assistant", content="ok", reasoning_content="hm"), _say("user", "go")]
    for provider in PIECED:
        f = Frag(False, False, "user", set())
        assert check(codec, provider, frag, _ctx(), f) is True
        assert f.thinking is True


def test_system_messages_never_start_a_piece_after_an_assistant_turn() -> None:
    """Anthropic leaves system messages out of its turns: an assistant message after
    one continues the assistant turn before it, so no boundary may fall there."""
    codec = AgnoCodec()
    h = [_say("user", "hi"), _say("assistant", "a"), _say("system", "s"), _say("assistant", "b")]
    sk = codec.skeleton(h)
    assert sk is not None
    assert [role for role, _ in sk] == ["user", "assistant", "system", "assistant"]
    assert codec.starts(h) == [0, 1]


@pytest.mark.parametrize("provider", ["openai-responses", "gemini", "bedrock", "mistral"])
def test_a_provider_without_a_fragment_check_sends_the_history_down_the_full_path(
    provider: str, pieces: None
) -> None:
    h = history(1)
    full = _repair(h, provider, in_pieces=False)
    codec = AgnoCodec()
    # Its no-op path reads the skeleton; its pieces are the full path's (`Codec.pieces`).
    assert codec.pieces is not None and provider not in codec.pieces
    assert check(codec, provider, h, _ctx()) is None
    got = _repair(h, provider, in_pieces=True)
    assert _answer(h, got.messages, got.fixes) == _answer(h, full.messages, full.fixes)


def test_the_benchs_broken_history_is_repaired_in_pieces() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    try:
        import histories as H
    finally:
        sys.path.pop(0)
    h = H.framework("agno", 2000, defects=True)
    p = parse(h, "anthropic", AgnoCodec(), {})
    got = chunked.repair(p.raw, p.codec, p.profile, toolpair.Policy(), p.ctx)
    assert got is not None
    natives, fixes, id_map = got
    old = chunked.MIN_MESSAGES
    chunked.MIN_MESSAGES = 10**9
    try:
        full = toolpair.repair(h, "anthropic", format=AgnoCodec())
    finally:
        chunked.MIN_MESSAGES = old
    assert fixes
    assert _answer(h, natives, fixes) == _answer(h, full.messages, full.fixes)
    assert id_map == full.id_map
    pieced = toolpair.repair(h, "anthropic", format=AgnoCodec())
    assert _answer(h, pieced.messages, pieced.fixes) == _answer(h, full.messages, full.fixes)
