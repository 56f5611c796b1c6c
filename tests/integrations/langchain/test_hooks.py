"""The hooks the core tools call: `load_dump` / `dump_messages` (the ``toolpair`` command
reading and writing ``messages_to_dict`` dumps) and `poisoned_history` (the pytest
plugin's ``poisoned_framework_history`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage, messages_from_dict, messages_to_dict

import toolpair
from toolpair.integrations.langchain import (
    LangChainCodec,
    dump_messages,
    load_dump,
    poisoned_history,
)

pytest_plugins = ["pytester"]


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolpair", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def dump_file(tmp_path: Path) -> Path:
    """The poisoned history as ``messages_to_dict`` writes it."""
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages_to_dict(poisoned_history()[0]), indent=2))
    return path


def test_poisoned_history_is_fresh_and_rejected() -> None:
    history, codec = poisoned_history()
    assert isinstance(codec, LangChainCodec)
    assert [m.type for m in history] == ["human", "ai", "human", "tool"]
    assert not any(a is b for a, b in zip(history, poisoned_history()[0], strict=True))
    assert [v.code for v in toolpair.validate(history, "anthropic", format=codec)] == [
        "anthropic.missing_result"
    ]


def test_load_dump_round_trips() -> None:
    history, _ = poisoned_history()
    obj = json.loads(json.dumps(messages_to_dict(history)))
    loaded = load_dump(obj)
    assert loaded is not None
    messages, codec = loaded
    assert isinstance(codec, LangChainCodec)
    assert messages == history
    assert dump_messages(messages) == obj
    assert load_dump([]) is not None


@pytest.mark.parametrize(
    "obj",
    [
        None,
        "text",
        {"messages": []},
        [{"role": "user", "content": "hi"}],
        [{"kind": "request", "parts": []}],
        [{"type": "human", "data": {"content": "hi"}, "extra": 1}],
    ],
)
def test_load_dump_declines_other_json(obj: Any) -> None:
    assert load_dump(obj) is None


def test_a_broken_dump_raises() -> None:
    with pytest.raises(ValueError):
        load_dump([{"type": "no-such-type", "data": {"content": "hi"}}])


def test_cli_check_uses_the_portable_rules(dump_file: Path) -> None:
    r = run_cli("check", dump_file)
    assert r.returncode == 1, r.stderr
    assert f"{dump_file}: [anthropic.missing_result]" in r.stdout
    assert "[openai.missing_result]" in r.stdout
    assert "(langchain format, portable rules, implied by the format)" in r.stdout
    r = run_cli("check", "--json", dump_file)
    assert r.returncode == 1, r.stderr
    found = json.loads(r.stdout)
    assert found and {(v["provider"], v["format"]) for v in found} == {("portable", "langchain")}


def test_cli_check_with_a_provider(dump_file: Path) -> None:
    r = run_cli("check", dump_file, "--provider", "anthropic")
    assert r.returncode == 1, r.stderr
    assert r.stdout.count("[anthropic.missing_result]") == 1
    assert "openai." not in r.stdout
    assert "1 violation (langchain format, anthropic rules)" in r.stdout


def test_cli_repair_writes_a_langchain_dump(dump_file: Path, tmp_path: Path) -> None:
    before = dump_file.read_bytes()
    out = tmp_path / "out.json"
    r = run_cli("repair", dump_file, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"written to {out}" in r.stderr
    assert dump_file.read_bytes() == before
    repaired = messages_from_dict(json.loads(out.read_text()))
    codec = LangChainCodec()
    assert toolpair.validate(repaired, "portable", format=codec) == []
    assert toolpair.validate(repaired, "anthropic", format=codec) == []
    results = [m for m in repaired if isinstance(m, ToolMessage)]
    assert {m.tool_call_id for m in results} == {"wthrParis", "timeTokyo"}


PLUGIN_TEST = """
import toolpair
from toolpair.integrations.langchain import LangChainCodec
from toolpair.testing import assert_valid

def test_framework(poisoned_framework_history):
    p = poisoned_framework_history
    assert p.provider == "portable"
    assert isinstance(p.format, LangChainCodec)
    assert toolpair.validate(p.history, "anthropic", format=p.format)
    repaired = toolpair.repair(p.history, "anthropic", format=p.format)
    assert_valid(repaired.messages, "anthropic", format=p.format)
"""


def test_the_plugin_fixture_yields_the_langchain_history(pytester: pytest.Pytester) -> None:
    path = pytester.makepyfile(PLUGIN_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", f"{path.name}::test_framework[langchain]")
    result.assert_outcomes(passed=1)
