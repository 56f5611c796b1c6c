"""The no-op checkers on the shapes their shortcuts are about.

The property tests hold every checker to "never says valid where the full rules find
something" over generated histories; these examples pin the corners the Anthropic
checker's shortcuts (ids checked in bulk, results matched by position) must get right,
each with the verdict of the full rules beside it.
"""

from __future__ import annotations

from typing import Any

import pytest

import toolpair
from toolpair._api import parse
from toolpair.engine import skeleton
from toolpair.formats import _checks as fast
from toolpair.formats import get_codec
from toolpair.providers import Context


def call(i: Any, name: str = "f") -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": name, "input": {}}


def result(i: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok", **extra}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


Q = user(text("go"))

CASES: dict[str, tuple[list[Any], bool]] = {
    "in call order": ([Q, assistant(call("a"), call("b")), user(result("a"), result("b"))], True),
    "out of call order": (
        [
            Q,
            assistant(call("a"), call("b"), call("c")),
            user(result("c"), result("a"), result("b")),
        ],
        True,
    ),
    "results over two user messages": (
        [Q, assistant(call("a"), call("b")), user(result("b")), user(result("a"), text("more"))],
        True,
    ),
    "text then the last result": (
        [Q, assistant(call("a"), call("b")), user(result("a"), text("x"), result("b"))],
        False,
    ),
    "a string between results": (
        [
            Q,
            assistant(call("a"), call("b")),
            user(result("a")),
            {"role": "user", "content": "x"},
            user(result("b")),
        ],
        False,
    ),
    "a result answered twice": (
        [Q, assistant(call("a")), user(result("a"), result("a"))],
        False,
    ),
    "a result after text, for the call answered first": (
        [Q, assistant(call("a")), user(result("a"), text("x"), result("a"))],
        False,
    ),
    "a result with no call": ([Q, assistant(text("hi")), user(result("a"))], False),
    "a result for an earlier turn's call": (
        [Q, assistant(call("a")), user(result("a")), assistant(text("so")), user(result("a"))],
        False,
    ),
    "a call left open": ([Q, assistant(call("a")), user(text("and?"))], False),
    "a dangling last call": ([Q, assistant(call("a"))], False),
    # A4 is about one turn: a later turn may reuse an id (a recorded 200).
    "a call id used again by a later turn": (
        [Q, assistant(call("a")), user(result("a")), assistant(call("a")), user(result("a"))],
        True,
    ),
    "two calls with one id": ([Q, assistant(call("a"), call("a")), user(result("a"))], False),
    "a newline in an id": ([Q, assistant(call("a\nb")), user(result("a\nb"))], False),
    "a space in an id": ([Q, assistant(call("a b")), user(result("a b"))], False),
    "an empty id": ([Q, assistant(call("")), user(result(""))], False),
    "a number for an id": ([Q, assistant(call(7)), user(result(7))], False),
    "an empty error result": (
        [Q, assistant(call("a")), user(result("a", is_error=True, content=""))],
        False,
    ),
    "a blank text": ([Q, assistant(text("  ")), user(text("x"))], False),
    "text after a call": ([Q, assistant(call("a"), text("x")), user(result("a"))], False),
    "a blank user string": ([Q, assistant(text("hi")), {"role": "user", "content": " "}], False),
    "a blank assistant string": (
        [Q, {"role": "assistant", "content": "\n"}, user(text("x"))],
        False,
    ),
}


def loop(ids: list[str]) -> list[Any]:
    """A tool loop with one call per turn, long enough that its ids are checked in
    several batches."""
    out: list[Any] = [Q]
    for i in ids:
        out += [assistant(call(i)), user(result(i))]
    return out


_IDS = [f"toolu_{n:04d}" for n in range(600)]
assert len(_IDS) > 2 * fast._BATCH
CASES.update(
    {
        "many batches": (loop(_IDS), True),
        "an id reused by a turn of a later batch": (
            loop([*_IDS[:500], _IDS[3], *_IDS[501:]]),
            True,
        ),
        "an id repeated inside a turn of a later batch": (
            [*loop(_IDS[:500]), assistant(call("a"), call("a")), user(result("a"))],
            False,
        ),
        "an id repeated in the last batch": (loop([*_IDS[:-1], _IDS[-2]]), True),
        "a bad id in a later batch": (loop([*_IDS[:400], "bad id", *_IDS[401:]]), False),
        "a result for a call of an earlier batch": (
            [*loop(_IDS), assistant(text("so")), user(result(_IDS[5]))],
            False,
        ),
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_anthropic_checker_agrees_with_the_rules(name: str) -> None:
    history, valid = CASES[name]
    p = parse(history, "anthropic", "anthropic", {})
    try:
        full = p.profile.rules(p.messages, p.ctx)
    except toolpair.InvalidHistory:
        full = None  # malformed: the full path raises, the checker must not say valid
    assert (full == []) is valid
    assert p.certainly_valid() is valid
    if valid:
        out = toolpair.repair(history, "anthropic", format="anthropic")
        assert out.fixes == []
        assert all(a is b for a, b in zip(out.messages, history, strict=True))


def test_ids_outside_the_pattern_are_never_certainly_valid() -> None:
    # Ids are checked in bulk by deleting the allowed bytes: a non-ASCII letter is left
    # over (refused, as Anthropic refuses it); ids of nothing but "_" and "-" are fine.
    odd = [Q, assistant(call("é1")), user(result("é1"))]
    assert toolpair.validate(odd, "anthropic") != []
    assert not parse(odd, "anthropic", "anthropic", {}).certainly_valid()
    dashes = [Q, assistant(call("_-_")), user(result("_-_"))]
    assert toolpair.validate(dashes, "anthropic") == []
    assert parse(dashes, "anthropic", "anthropic", {}).certainly_valid()


def test_an_empty_message_between_a_call_and_its_result_is_the_full_paths() -> None:
    # OpenAI Chat's rules read no empty message, but one between a call and its result
    # parts them (a llama-index mutation found the skeleton checker saying valid).
    call = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    answer = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    empty = {"role": "user", "content": []}
    q, nxt = {"role": "user", "content": "q"}, {"role": "user", "content": "next"}
    parted = [q, call, empty, answer, nxt]
    after = [q, call, answer, empty, nxt]
    codec = get_codec("openai")
    ctx = Context(shape="chat", format="a-framework")
    found = toolpair.validate(parted, "openai")
    assert [(v.code, v.index, v.ids) for v in found] == [
        ("openai.missing_result", 1, ("c1",)),
        ("openai.unexpected_tool_message", 3, ("c1",)),
    ]
    assert skeleton.check(skeleton.from_view(codec.decode(parted)), "openai", ctx) is None
    assert toolpair.validate(after, "openai") == []
    assert skeleton.check(skeleton.from_view(codec.decode(after)), "openai", ctx) is True
