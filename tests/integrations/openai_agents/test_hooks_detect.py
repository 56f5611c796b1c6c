"""The hooks the core tools call (the ``toolpair`` command reading session items as a
JSON list or a real SQLiteSession database file), and provider detection from real SDK
model objects. (``poisoned_history``, the plugin's ``poisoned_framework_history`` and
the dump round trip are the conformance suite's, run by `adapter`.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agents import SQLiteSession

import toolpair
from toolpair.integrations.openai_agents import (
    detect_provider,
    load_session_file,
    poisoned_history,
)

from .harness import Server

pytestmark = pytest.mark.anyio


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolpair", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def _session_file(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    items, _ = poisoned_history()
    s = SQLiteSession("conv-1", str(path))
    await s.add_items(items)
    other = SQLiteSession("conv-2", str(path))
    await other.add_items([{"role": "user", "content": "hello"}])
    assert await s.get_items() == items
    s.close()
    other.close()
    return path


async def test_load_session_file_reads_what_sqlite_session_returns(tmp_path: Path) -> None:
    path = await _session_file(tmp_path)
    assert load_session_file(str(path), "conv-1") == poisoned_history()[0]
    with pytest.raises(ValueError, match="holds 2 sessions"):
        load_session_file(str(path))
    with pytest.raises(ValueError, match="no session 'nope'"):
        load_session_file(str(path), "nope")


async def test_cli_checks_and_repairs_a_session_database(tmp_path: Path) -> None:
    path = await _session_file(tmp_path)
    before = path.read_bytes()
    r = run_cli("check", path, "--session-id", "conv-1")
    assert r.returncode == 1, r.stderr
    assert "No tool output found for function call wthrParis" in r.stdout
    r = run_cli("check", path, "--session-id", "conv-2")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("check", path)
    assert r.returncode == 2 and "--session-id" in r.stderr
    out = tmp_path / "fixed.json"
    r = run_cli("repair", path, "--session-id", "conv-1", "-o", out)
    assert r.returncode == 0, r.stderr
    assert toolpair.validate(json.loads(out.read_text()), "openai-responses") == []
    assert run_cli("repair", path, "--session-id", "conv-1", "-i").returncode == 2
    assert path.read_bytes() == before


def test_cli_reads_session_items_as_a_json_list(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps(poisoned_history()[0], indent=2))
    r = run_cli("check", path, "--format", "openai-agents")
    assert r.returncode == 1
    assert "openai-responses" in r.stdout
    r = run_cli("check", path, "--format", "openai-agents", "--provider", "anthropic")
    assert "tool_use" in r.stdout


def _litellm_model(name: str):
    try:
        from agents.extensions.models.litellm_model import LitellmModel
    except ImportError as e:  # the SDK raises ImportError when litellm is missing
        pytest.skip(str(e))
    return LitellmModel(name, api_key="x")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-5", ("openai-responses", "gpt-5")),
        ("openai/gpt-4.1", ("openai-responses", "gpt-4.1")),
        ("litellm/anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("litellm/gemini/gemini-2.5-pro", ("gemini", "gemini-2.5-pro")),
        ("litellm/vertex_ai/gemini-2.5-pro", ("vertex", "gemini-2.5-pro")),
        ("litellm/mistral/mistral-large-latest", ("mistral", "mistral-large-latest")),
        (
            "litellm/bedrock/anthropic.claude-3-5-sonnet",
            ("bedrock", "anthropic.claude-3-5-sonnet"),
        ),
        ("any-llm/anthropic/claude-opus-4", ("anthropic", "claude-opus-4")),
        ("litellm/someone/else", ("portable", "else")),
    ],
)
def test_detection_from_model_strings(model, expected):
    assert detect_provider(model) == expected


def test_detection_from_real_model_objects():
    srv = Server([])
    assert detect_provider(srv.responses_model("gpt-5")) == ("openai-responses", "gpt-5")
    assert detect_provider(srv.chat_model("gpt-4o")) == ("openai", "gpt-4o")
    deepseek = "https://api.deepseek.com/v1"
    assert detect_provider(srv.chat_model("deepseek-chat", deepseek)) == (
        "deepseek",
        "deepseek-chat",
    )
    assert detect_provider(srv.responses_model("deepseek-chat", deepseek))[0] == (
        "deepseek-responses"
    )
    gemini = "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert detect_provider(srv.chat_model("gemini-2.5-flash", gemini))[0] == "gemini"


def test_detection_from_a_litellm_model_object():
    assert detect_provider(_litellm_model("anthropic/claude-sonnet-4-5")) == (
        "anthropic",
        "claude-sonnet-4-5",
    )


def test_detection_of_the_default_model_follows_the_default_api(monkeypatch):
    from agents import set_default_openai_api

    monkeypatch.setenv("OPENAI_DEFAULT_MODEL", "gpt-4.1")
    assert detect_provider(None) == ("openai-responses", "gpt-4.1")
    set_default_openai_api("chat_completions")
    try:
        assert detect_provider(None) == ("openai", "gpt-4.1")
        assert detect_provider("gpt-4.1") == ("openai", "gpt-4.1")
    finally:
        set_default_openai_api("responses")


def test_unknown_model_classes_are_portable():
    from agents.models.interface import Model

    class Mine(Model):
        async def get_response(self, *a, **k):  # pragma: no cover - never called
            raise NotImplementedError

        def stream_response(self, *a, **k):  # pragma: no cover - never called
            raise NotImplementedError

    assert detect_provider(Mine())[0] == "portable"


def test_cli_names_what_another_sqlite_file_is_not(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE checkpoints (thread_id TEXT)")
    r = run_cli("check", path)
    assert r.returncode == 2
    assert "not an Agents SDK session database" in r.stderr
    assert "--thread" in r.stderr
