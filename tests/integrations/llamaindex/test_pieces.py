"""Long broken LlamaIndex histories are repaired in pieces (`toolpair.engine.chunked`): the
codec tells the sides apart and checks fragments. The pieces must give exactly what
the full path gives, for every provider the codec's checker supports."""

from __future__ import annotations

import logging
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

import toolpair
from tests.support.pieces import answered_in_pieces, full_path
from toolpair.engine import chunked
from toolpair.engine.fast import Frag, check
from toolpair.integrations.llamaindex import repair_messages, validate_messages
from toolpair.integrations.llamaindex._repair import CODEC
from toolpair.providers import Context, get_profile

from .history import (
    ThinkingBlock,
    ToolCallBlock,
    legacy_calls,
    result,
    say,
    snapshot,
    system,
    user,
)

PROVIDERS = ("anthropic", "openai")


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # Every repair logs a warning; hundreds of them only slow the run down.
    logging.getLogger("toolpair").disabled = True
    yield
    logging.getLogger("toolpair").disabled = False


@pytest.fixture
def pieces_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Every history, however short, goes through the piece path (restored after);
    the list it gives says, for each repair, whether the pieces answered."""
    saved = chunked.MIN_MESSAGES, chunked._RUN
    chunked.MIN_MESSAGES = 0
    yield answered_in_pieces(monkeypatch)
    chunked.MIN_MESSAGES, chunked._RUN = saved


def _full(history: list[Any], provider: str, **options: Any) -> Any:
    with full_path():
        return repair_messages(history, provider, **options)


def _call_message(rng: random.Random, ids: list[str], text: str, thinking: float) -> ChatMessage:
    """An assistant message calling ``ids`` in one of the shapes LlamaIndex stores."""
    shape = rng.random()
    if ToolCallBlock is None or shape < 0.1:
        return legacy_calls(*ids, text=text, shape="openai")
    if shape < 0.2:
        return legacy_calls(*ids, text=text, shape="anthropic")
    blocks: list[Any] = []
    if ThinkingBlock is not None and rng.random() < thinking:
        blocks.append(ThinkingBlock(content="hm", additional_information={"signature": "s"}))
    if text:
        blocks.append(TextBlock(text=text))
    for i in ids:
        # String arguments are what the OpenAI LLM stores; Anthropic needs an object.
        args: Any = '{"a": 1}' if rng.random() < 0.05 else {"a": 1}
        blocks.append(ToolCallBlock(tool_call_id=i, tool_name="add", tool_kwargs=args))
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


def _error(call_id: str, text: str) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.TOOL,
        content=text,
        additional_kwargs={"tool_call_id": call_id, "is_error": True},
    )


def history(seed: int) -> list[ChatMessage]:
    """A LlamaIndex agent history of 10 to 25 exchanges with a few defects of the kinds
    stored histories have: lost, repeated, misplaced and orphaned results, ids reused,
    calls in the shapes older LLMs wrote, blank or trailing text, stray system messages."""
    rng = random.Random(seed)
    # Thinking anywhere or a system message between a call and its results sends the
    # whole history down the full path: only some histories have them.
    thinking = 0.05 if seed % 10 == 0 else 0.0
    between = 0.05 if seed % 10 == 1 else 0.0
    # An id reused across exchanges ties them together: often the full path too.
    reuse = 0.03 if seed % 10 == 2 else 0.0
    out: list[ChatMessage] = [system("You add numbers.")] if rng.random() < 0.5 else []
    used: list[str] = []
    n = 0
    for e in range(rng.randint(10, 25)):
        if rng.random() < 0.1:
            out.append(system(f"note {e}"))
        out.append(user(f"question {e}" if rng.random() > 0.02 else " "))
        for r in range(rng.randint(0, 3)):
            ids = []
            for _ in range(rng.randint(1, 3)):
                if used and rng.random() < reuse:
                    ids.append(rng.choice(used))  # an id reused from an earlier exchange
                else:
                    n += 1
                    ids.append(f"toolu_{seed}_{n}")
            ids = list(dict.fromkeys(ids))
            used += ids
            text = f"calling {r}" if rng.random() < 0.3 else ""
            out.append(_call_message(rng, ids, text, thinking))
            if rng.random() < between:
                out.append(system("between"))
            answers = [result(i, text=f"result {i}") for i in ids]
            if rng.random() < 0.1:
                rng.shuffle(answers)
            if rng.random() < 0.06:
                answers.pop(rng.randrange(len(answers)))  # a result lost
            if answers and rng.random() < 0.05:
                answers.append(answers[0])  # a result stored twice
            if rng.random() < 0.04:
                answers.insert(0, result(f"ghost_{seed}_{n}"))  # its call is nowhere
            if rng.random() < 0.03:
                answers.append(_error(ids[0], " "))  # an error result without content
            if answers and rng.random() < 0.04:
                answers.insert(rng.randrange(len(answers)), user("wait"))
            out += answers
        if rng.random() < 0.9:
            text = f"answer {e}" + (" " if rng.random() < 0.05 else "")
            out.append(say(text))
    if rng.random() < 0.1 and out:
        del out[rng.randrange(len(out))]
    return out


def _dump(messages: list[Any], inputs: list[Any]) -> list[Any]:
    """What a message list holds, and which of its messages are input objects."""
    kept = {id(m) for m in inputs}
    return [(m.model_dump(), id(m) in kept) for m in messages]


def _same(a: Any, b: Any, history: list[Any]) -> None:
    assert _dump(a.messages, history) == _dump(b.messages, history)
    assert sorted(map(str, a.fixes)) == sorted(map(str, b.fixes))
    assert a.id_map == b.id_map


SEEDS = range(150)


@pytest.mark.parametrize("run", [1, 2, 8])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_pieces_give_the_full_paths_answer(
    provider: str, run: int, pieces_always: list[bool]
) -> None:
    chunked._RUN = run
    by_pieces = 0
    for seed in SEEDS:
        h = history(seed)
        before = snapshot(h)
        pieces_always.clear()
        got = repair_messages(h, provider)
        by_pieces += pieces_always == [True]
        want = _full(h, provider)
        _same(got, want, h)
        assert snapshot(h) == before
        if not any(f.kind == "unrepaired" for f in got.fixes):
            assert validate_messages(got.messages, provider) == [], seed
        again = repair_messages(got.messages, provider)
        assert all(a is b for a, b in zip(again.messages, got.messages, strict=True))
    # The generator breaks most histories in a way pieces can repair.
    assert by_pieces > len(SEEDS) // 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_policy_options_give_the_full_paths_answer(
    provider: str, pieces_always: list[bool]
) -> None:
    for seed in range(40):
        h = history(seed)
        _same(
            repair_messages(h, provider, orphans="text"),
            _full(h, provider, orphans="text"),
            h,
        )


def _bench_history() -> list[Any]:
    bench = Path(__file__).resolve().parents[3] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import histories
    finally:
        sys.path.remove(str(bench))
    return histories.framework("llamaindex", 2000, defects=True)  # type: ignore[no-any-return]


@pytest.mark.skipif(ToolCallBlock is None, reason="the bench writes ToolCallBlocks")
def test_the_benchs_broken_history_is_repaired_in_pieces() -> None:
    h = _bench_history()
    ctx = Context(shape=CODEC.shape, format=CODEC.name)
    pieces = chunked.repair(h, CODEC, get_profile("anthropic"), toolpair.Policy(), ctx)
    assert pieces is not None
    got = repair_messages(h, "anthropic")
    _same(got, _full(h, "anthropic"), h)
    assert got.fixes
    # Most messages are handed back untouched, as the same objects.
    kept = {id(m) for m in h}
    assert sum(id(m) in kept for m in got.messages) > len(h) * 9 // 10


def _frag(first: bool = False, last: bool = False, seen: set[str] | None = None) -> Frag:
    return Frag(first, last, "user", set() if seen is None else seen)


def _fast(msgs: list[Any], provider: str, frag: Frag | None = None) -> Any:
    return check(CODEC, provider, msgs, Context(shape="chat", format="llamaindex"), frag)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_clean_fragment_adds_its_ids_and_says_whether_it_thinks(provider: str) -> None:
    msgs = [legacy_calls("c1", "c2", shape="anthropic"), result("c2"), result("c1"), say("ok")]
    frag = _frag()
    assert _fast(msgs, provider, frag) is True
    assert frag.seen == {"c1", "c2"}
    assert frag.thinking is False


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_fragment_reusing_an_id_is_refused(provider: str) -> None:
    msgs = [legacy_calls("c1", shape="anthropic"), result("c1"), say("ok")]
    frag = _frag(seen={"c1"})
    assert _fast(msgs, provider, frag) is None
    assert frag.seen == {"c1"}
    twice = [*msgs, user("again"), *msgs]
    assert _fast(twice, provider, _frag()) is None


def test_trailing_whitespace_only_matters_in_the_last_fragment() -> None:
    msgs = [user("q"), say("answer ")]
    assert _fast(msgs, "anthropic") is None
    assert _fast(msgs, "anthropic", _frag(first=True)) is True
    assert _fast(msgs, "anthropic", _frag(first=True, last=True)) is None


@pytest.mark.skipif(ThinkingBlock is None, reason="llama-index-core < 0.14.3")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_fragment_that_thinks_says_so(provider: str) -> None:
    thought = ThinkingBlock(content="hm", additional_information={"signature": "s"})
    msgs = [ChatMessage(role=MessageRole.ASSISTANT, blocks=[thought, TextBlock(text="ok")])]
    frag = _frag()
    assert _fast(msgs, provider, frag) is True
    assert frag.thinking is True


@pytest.mark.parametrize("provider", ["bedrock", "gemini", "mistral", "portable"])
def test_other_providers_end_the_piece_path_before_decoding_anything(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Their no-op path reads the skeleton too; their pieces are the full path's
    # (`LlamaIndexCodec.pieces`).
    # (Mistral's rules, and so the portable ones, refuse an assistant message last.)
    ends_with_assistant_ok = provider in ("bedrock", "gemini")
    assert _fast([user("q"), say("a")], provider) is (True if ends_with_assistant_ok else None)
    assert CODEC.pieces is not None and provider not in CODEC.pieces
    h = _bench_history()

    def refuse(messages: Any) -> Any:
        raise AssertionError("decoded")

    monkeypatch.setattr(CODEC, "decode", refuse)
    ctx = Context(shape=CODEC.shape, format=CODEC.name)
    assert chunked.repair(h, CODEC, get_profile(provider), toolpair.Policy(), ctx) is None


def test_sides() -> None:
    sk = CODEC.skeleton([system("s"), user("q"), say("a"), result("c")])
    assert sk is not None
    assert [role for role, _ in sk] == ["system", "user", "assistant", "tool"]
