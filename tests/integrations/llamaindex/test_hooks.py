"""`poisoned_history`: the LlamaIndex history behind the pytest plugin's
``poisoned_framework_history`` fixture."""

from __future__ import annotations

import pytest

import toolpair
from toolpair.integrations.llamaindex import LlamaIndexCodec, poisoned_history

pytest_plugins = ["pytester"]


def test_poisoned_history_is_fresh_and_rejected() -> None:
    history, codec = poisoned_history()
    assert isinstance(codec, LlamaIndexCodec)
    assert [m.role.value for m in history] == ["user", "assistant", "user", "tool"]
    assert not any(a is b for a, b in zip(history, poisoned_history()[0], strict=True))
    assert [v.code for v in toolpair.validate(history, "anthropic", format=codec)] == [
        "anthropic.missing_result"
    ]
    repaired = toolpair.repair(history, "portable", format=codec)
    assert toolpair.validate(repaired.messages, "portable", format=codec) == []


PLUGIN_TEST = """
import toolpair
from toolpair.integrations.llamaindex import LlamaIndexCodec
from toolpair.testing import assert_valid

def test_framework(poisoned_framework_history):
    p = poisoned_framework_history
    assert p.provider == "portable"
    assert isinstance(p.format, LlamaIndexCodec)
    assert toolpair.validate(p.history, "anthropic", format=p.format)
    repaired = toolpair.repair(p.history, "anthropic", format=p.format)
    assert_valid(repaired.messages, "anthropic", format=p.format)
"""


def test_the_plugin_fixture_yields_the_llamaindex_history(pytester: pytest.Pytester) -> None:
    path = pytester.makepyfile(PLUGIN_TEST)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"{path.name}::test_framework[llamaindex]"
    )
    result.assert_outcomes(passed=1)
