"""The pytest plugin (`toolpair.testing`), exercised through pytester."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import pytest

import toolpair
from toolpair.demo import DEMOS
from toolpair.testing import assert_valid, poisoned


def test_the_plugin_is_registered_through_pytest11() -> None:
    eps = metadata.entry_points(group="pytest11")
    assert any(ep.name == "toolpair" and ep.value == "toolpair.testing" for ep in eps)


#: One pytester run covers the fixtures, a failing assert_valid and the framework
#: fixture (a fake LangChain integration exposing the hook; the other frameworks are
#: not installed in the core env, so they skip), to keep the suite fast.
CONFTEST = """
import sys, types
from toolpair.formats import CODECS
from toolpair.testing import poisoned

mod = types.ModuleType("toolpair.integrations.langchain")
mod.poisoned_history = lambda: (poisoned("openai").messages, CODECS["openai"])
sys.modules["toolpair.integrations.langchain"] = mod
"""

TESTS = """
import pytest
import toolpair
from toolpair.testing import assert_valid

def test_poisoned(poisoned_history):
    p = poisoned_history
    assert toolpair.validate(p.history, p.provider, format=p.format)
    with pytest.raises(AssertionError):
        assert_valid(p.history, p.provider, format=p.format)

def test_a_serialiser_round_trip(poisoned_history):
    p = poisoned_history
    repaired = toolpair.repair(p.history, p.provider, format=p.format)
    assert_valid(repaired.messages, p.provider, format=p.format)

def test_copies_are_fresh(poisoned_openai, poisoned_history):
    poisoned_openai.messages.clear()
    assert poisoned_history.messages

def test_one_per_format(poisoned_anthropic, poisoned_bedrock, poisoned_openai,
                        poisoned_openai_responses, poisoned_gemini, poisoned_mistral):
    got = [poisoned_anthropic, poisoned_bedrock, poisoned_openai,
           poisoned_openai_responses, poisoned_gemini, poisoned_mistral]
    assert [p.format for p in got] == [
        "anthropic", "bedrock", "openai", "openai-responses", "gemini", "mistral"]

def test_framework(poisoned_framework_history):
    p = poisoned_framework_history
    assert p.provider == "portable"
    assert toolpair.validate(p.messages, "openai", format=p.format)
    repaired = toolpair.repair(p.messages, "openai", format=p.format)
    assert_valid(repaired.messages, "openai", format=p.format)

def test_bad(poisoned_openai):
    assert_valid(poisoned_openai.history, "openai")
"""


def test_the_plugin_in_a_pytest_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(TESTS)
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    # 6 + 6 + 6 + 1 wire tests, the LangChain stand-in, the Agents SDK history (plain
    # Responses items: its integration needs no framework to give them), 3 missing
    # frameworks skipped
    assert outcomes.get("passed") == 3 * len(DEMOS) + 1 + 1 + 1, result.stdout.str()
    assert outcomes.get("skipped") == 3
    assert outcomes.get("failed") == 1
    result.stdout.fnmatch_lines(
        [
            "*2 violations of the openai rules:*",
            "*[[]openai.missing_result[]] An assistant message with 'tool_calls' must be*",
            "*[[]openai.unexpected_tool_message[]] Invalid parameter*",
            "*offending turns:*",
            "*> [[]2[]] assistant: *call get_weather(call_WeatherParis)*",
            "*> [[]4[]] tool: result(call_WeatherParis)*",
        ]
    )
    result.stdout.fnmatch_lines(["SKIPPED*agno is not installed*"])
    # the plugin's own frames are hidden from the traceback
    assert "violations = _api.validate" not in result.stdout.str()


def test_assert_valid_in_process() -> None:
    assert_valid([{"role": "user", "content": "hi"}], "anthropic")
    p = poisoned("gemini")
    with pytest.raises(AssertionError, match=r"gemini\.response_count") as info:
        assert_valid(p.history, "gemini")
    assert "> [2] user:" in str(info.value)
    fixed = toolpair.repair(p.history, "gemini")
    assert_valid(fixed.messages, "gemini")


def test_importing_the_plugin_imports_no_framework_and_the_core_no_pytest() -> None:
    code = (
        "import sys, toolpair, toolpair.cli;"
        "assert 'pytest' not in sys.modules, 'core imported pytest';"
        "import toolpair.testing;"
        "bad = {'pydantic_ai', 'pydantic', 'langchain_core', 'langchain', 'agno',"
        " 'llama_index'} & {m.split('.')[0] for m in sys.modules};"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
