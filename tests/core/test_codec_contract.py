"""A codec written before the contract was a class (any object with the six core methods,
a name and a shape) is still taken by ``format=``: its own hooks where it has them, the
contract's defaults elsewhere."""

from __future__ import annotations

from typing import Any

import pytest

import toolpair
from toolpair.demo import load_demo
from toolpair.formats import get_codec


class Delegating:
    """A plain object that forwards every attribute to the Anthropic codec: what a
    third-party codec looked like when the engine probed hooks by name."""

    def __init__(self) -> None:
        self._inner = get_codec("anthropic")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CoreOnly:
    """Only the six core methods, a name and a shape, borrowed from the Anthropic codec."""

    name = "anthropic"
    shape = "blocks"

    def __init__(self) -> None:
        inner = get_codec("anthropic")
        for n in ("decode", "build", "make_result", "make_text", "with_id", "result_as_text"):
            setattr(self, n, getattr(inner, n))


@pytest.mark.parametrize("codec", [Delegating, CoreOnly])
def test_a_duck_typed_codec_is_adopted(codec: type) -> None:
    history = load_demo("anthropic")["messages"]
    expected = toolpair.validate(history, "anthropic", format="anthropic")
    got = toolpair.validate(history, "anthropic", format=codec())
    assert [(v.code, v.index, v.ids) for v in got] == [(v.code, v.index, v.ids) for v in expected]
    fixed = toolpair.repair(history, "anthropic", format=codec())
    assert fixed.changed and toolpair.validate(fixed.messages, "anthropic") == []


def test_an_object_that_is_no_codec_is_named() -> None:
    with pytest.raises(TypeError, match=r"it has no decode.*a codec subclasses toolpair\.Codec"):
        toolpair.validate([], "anthropic", format=object())
