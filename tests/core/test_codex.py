"""Codex CLI rollouts (toolpair.sessions.codex): read as Codex rebuilds them on resume,
judged as Codex sends them (default) and as the file holds them (``--raw``), repaired by
appending lines only. The rollouts are the real ones in tests/core/data/codex/ (written
by the Codex CLI from npm against a local Responses mock), broken by
tests/support/mutations/codex.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.support.mutations import aged
from tests.support.mutations import codex as M
from toolpair.sessions import Loaded, detect, get_format, names
from toolpair.sessions.codex import ABORTED, CODEX_ABORTED, zstd_available

from .clirun import Capsys, at_home, run, scanned, stdout_of

F = get_format("codex")
RAW = F.raw_view()  # type: ignore[attr-defined]


def put(home: Path, data: bytes, name: str = "rollout-2026-01-01T00-00-00-0000-aaaa.jsonl") -> Path:
    """``data`` as a rollout under ``home/sessions/2026/01/01``, written an hour ago."""
    d = home / "sessions" / "2026" / "01" / "01"
    d.mkdir(parents=True, exist_ok=True)
    return aged(d / name, data)


def judged(loaded: Loaded) -> list[toolpair.Violation]:
    return toolpair.validate(
        loaded.messages, loaded.provider, model=loaded.model, format=loaded.wire
    )


def ordinals(data: bytes) -> list[int]:
    return [json.loads(raw)["ordinal"] for raw in data.splitlines() if raw.strip()]


def chat_config(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model_provider = "mock"\n[model_providers.mock]\nname = "kimi via a chat proxy"\n'
        'base_url = "http://127.0.0.1:9/v1"\nwire_api = "chat"\n'
    )


# -- reading ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["exec", "patch"])
def test_real_rollouts_are_valid_in_both_views(name: str) -> None:
    path = M.real(name)
    assert detect(str(path)) is F
    for fmt in (F, RAW):
        loaded = fmt.load(path.read_bytes(), str(path))
        assert loaded.provider == "openai-responses" and loaded.model == "gpt-5.5"
        assert "Codex 0.171.0" in loaded.described
        assert judged(loaded) == []
        assert loaded.messages[-1]["content"][0]["text"] == "(the next prompt)"


def test_the_exec_rollout_rebuilds_as_codex_sends_it() -> None:
    loaded = F.load(M.real("exec").read_bytes(), str(M.real("exec")))
    kinds = [(m.get("type"), m.get("role"), m.get("call_id")) for m in loaded.messages]
    assert kinds[3:] == [
        ("function_call", None, "call_mock0002"),
        ("function_call_output", None, "call_mock0002"),
        ("message", "assistant", None),
        ("message", "user", None),
        ("function_call", None, "call_mock0006"),
        ("function_call", None, "call_mock0007"),
        ("function_call_output", None, "call_mock0006"),
        ("function_call_output", None, "call_mock0007"),
        ("message", "assistant", None),
        ("message", "user", None),  # the next prompt
    ]
    assert loaded.lines[3:5] == [10, 13]


def test_killed_rollout_is_healed_by_codex_and_broken_as_the_file_holds_it() -> None:
    """The real rollout of a run killed mid-call (#29773): Codex answers the call with
    'aborted' on resume; the file itself holds a call without output."""
    data = M.interrupted_shell()
    healed = F.load(data, "k.jsonl")
    assert judged(healed) == []
    assert {
        "type": "function_call_output",
        "call_id": "call_mock0002",
        "output": CODEX_ABORTED,
    } in (healed.messages)
    assert "1 call(s) without output answered 'aborted' by Codex" in healed.described
    (v,) = judged(RAW.load(data, "k.jsonl"))
    assert (v.code, v.index, v.ids) == ("openai-responses.missing_output", 3, ("call_mock0002",))
    assert v.message == "No tool output found for function call call_mock0002."


#: break -> (default view broken, raw view broken, how a repair fixes it)
EXPECTED = {
    "interrupted_shell": (False, True, "output"),
    "interrupted_patch": (False, True, "output"),
    "missing_output_mid": (False, True, "output"),
    "rejected_turn": (False, True, "compacted"),
    "empty_call_ids": (True, True, "compacted"),
    "output_without_call_id_key": (True, True, "compacted"),
    "duplicate_output": (True, True, "compacted"),
    "compaction_split": (False, True, "output"),
}


@pytest.mark.parametrize("name", sorted(M.BREAKS))
def test_each_break_is_detected_and_repaired_append_only(
    name: str, tmp_path: Path, capsys: Capsys
) -> None:
    default_broken, raw_broken, how = EXPECTED[name]
    data = M.BREAKS[name]()
    assert bool(judged(F.load(data, "x.jsonl"))) is default_broken
    assert bool(judged(RAW.load(data, "x.jsonl"))) is raw_broken
    p = put(tmp_path, data)
    code, _, _ = run(capsys, "check", p)
    assert code == (1 if default_broken else 0)
    code, _, _ = run(capsys, "check", "--raw", p)
    assert code == 1
    code, _, err = run(capsys, "repair", "--raw", p, "--in-place")
    assert code == 0, err
    new = p.read_bytes()
    assert new.startswith(data)  # every earlier byte kept
    added = [json.loads(raw) for raw in new[len(data) :].splitlines()]
    assert added and all(o["timestamp"].endswith("Z") for o in added)
    if how == "output":
        assert {o["type"] for o in added} == {"response_item"}
        assert all(o["payload"]["output"] == ABORTED for o in added)
    else:
        assert [o["type"] for o in added] == ["compacted"]
    assert ordinals(new) == list(range(len(ordinals(new))))  # the next ordinal each
    assert Path(f"{p}.bak").read_bytes() == data
    for fmt in (F, RAW):
        assert judged(fmt.load(new, str(p))) == []
    code, _, err = run(capsys, "repair", "--raw", p, "--in-place")
    assert code == 0 and "nothing to repair; not written" in err
    assert p.read_bytes() == new


def test_repair_without_raw_fixes_what_codex_sends(tmp_path: Path, capsys: Capsys) -> None:
    p = put(tmp_path, M.empty_call_ids())
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    assert "a call with an empty call_id given call_toolpair_1" in err
    history = json.loads(p.read_bytes().splitlines()[-1])["payload"]["replacement_history"]
    pair = [i for i in history if i.get("call_id") == "call_toolpair_1"]
    assert [i["type"] for i in pair] == ["function_call", "function_call_output"]
    assert pair[1]["output"].endswith("hi\n") or "one" in pair[1]["output"]


@pytest.mark.parametrize("name", ["exec", "patch", "killed"])
def test_pristine_rollouts_are_never_written(name: str, tmp_path: Path, capsys: Capsys) -> None:
    p = put(tmp_path, M.real(name).read_bytes())
    before = p.stat()
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "nothing to repair; not written" in err
    assert p.stat().st_mtime_ns == before.st_mtime_ns
    assert not Path(f"{p}.bak").exists()


def test_a_chat_completions_upstream_refuses_a_late_output(tmp_path: Path, capsys: Capsys) -> None:
    """Bedrock or Kimi through a chat proxy: each tool message right after its call. The
    Responses API pairs by call_id and takes the same file. Codex on the chat wire API
    does not replay an appended replacement (seen with 0.80.0): repair refuses, exit 1."""
    data = M.late_output()
    home = tmp_path / "codex"
    p = put(home, data)
    assert judged(F.load(data, str(p))) == []  # no config: Responses
    chat_config(home)
    loaded = F.load(data, str(p))
    assert (loaded.provider, loaded.wire) == ("openai", "openai")
    assert "Chat Completions rules" in loaded.described
    vs = judged(loaded)
    assert [v.code for v in vs] == ["openai.missing_result", "openai.unexpected_tool_message"]
    assert loaded.line_of(vs[1]) == 23  # the late output, after the next prompt
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 1
    assert "does not replay an appended history replacement" in err and "not written" in err
    assert p.read_bytes() == data and not Path(f"{p}.bak").exists()


def test_an_append_that_cannot_make_it_valid_exits_1_and_writes_nothing(
    tmp_path: Path, capsys: Capsys
) -> None:
    data = M.long_call_id()
    p = put(tmp_path, data)
    (v,) = judged(F.load(data, str(p)))
    assert v.code == "openai-responses.call_id_too_long"
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 1
    assert "not written" in err
    assert p.read_bytes() == data and not Path(f"{p}.bak").exists()


def test_a_rolled_back_turn_is_not_sent_again() -> None:
    data = M.rolled_back_break()
    loaded = RAW.load(data, "x.jsonl")
    assert judged(loaded) == []
    assert "1 rollback(s) replayed" in loaded.described
    assert not any(m.get("call_id") == "call_mock0006" for m in loaded.messages)


def test_a_torn_last_line_is_skipped_and_the_append_starts_on_its_own_line(
    tmp_path: Path, capsys: Capsys
) -> None:
    data = M.interrupted_shell() + b'{"timestamp":"2026-12-05T23:22:47.000Z","ordinal":11,"ty'
    p = put(tmp_path, data)
    loaded = RAW.load(data, str(p))
    assert "1 line(s) that do not parse" in loaded.skipped
    code, _, err = run(capsys, "repair", "--raw", p, "--in-place")
    assert code == 0, err
    tail = p.read_bytes()[len(data) :]
    assert tail.startswith(b"\n{") and json.loads(tail)["ordinal"] == 11


def test_an_output_with_no_call_id_is_sent_and_given_its_call_back(
    tmp_path: Path, capsys: Capsys
) -> None:
    """As codex-cli 0.171.0 sends it (tests/integrations/codex_cli): the call answered
    'aborted', the output without an id; the repair gives the output its call's id."""
    data = M.output_without_call_id_key()
    loaded = F.load(data, "x.jsonl")
    sent = [(m.get("type"), m.get("call_id"), m.get("output")) for m in loaded.messages]
    assert ("function_call_output", "call_mock0002", CODEX_ABORTED) in sent
    (v,) = judged(loaded)
    assert v.code == "openai-responses.result_without_id"
    p = put(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    assert "an output with no call_id given call_mock0002" in err
    after = F.load(p.read_bytes(), str(p))
    outs = [m for m in after.messages if m.get("call_id") == "call_mock0002"]
    assert [m["type"] for m in outs] == ["function_call", "function_call_output"]
    assert "echo one" not in outs[1]["output"] and "Process exited" in outs[1]["output"]


@pytest.mark.skipif(zstd_available(), reason="Python has compression.zstd")
def test_a_compressed_rollout_needs_python_3_14(tmp_path: Path, capsys: Capsys) -> None:
    p = put(tmp_path, b"\x28\xb5\x2f\xfd" + b"\x00" * 16, "rollout-2026-01-01T00-00-00-x.jsonl.zst")
    assert detect(str(p)) is F
    code, _, err = run(capsys, "check", p)
    assert code == 2
    assert "needs Python 3.14 or later (compression.zstd)" in err and "zstd -d" in err


@pytest.mark.skipif(not zstd_available(), reason="Python 3.14's compression.zstd")
def test_a_compressed_rollout_is_read_and_its_repair_refused(
    tmp_path: Path, capsys: Capsys
) -> None:
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]

    data = zstd.compress(M.duplicate_output())
    p = put(tmp_path, data, "rollout-2026-01-01T00-00-00-x.jsonl.zst")
    code, out, _ = run(capsys, "check", p)
    assert code == 1 and "zstd-compressed" in out
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 1 and "decompress it to .jsonl first" in err
    assert p.read_bytes() == data


# -- registry, scan, map -------------------------------------------------------------


def test_registered_and_history_of_parsed_lines() -> None:
    assert "codex" in names()
    objs = [json.loads(raw) for raw in M.interrupted_shell().splitlines()]
    assert toolpair.validate(objs, "openai-responses", model="gpt-5.5", format="codex") == []
    assert F.history(objs)[-1]["output"] == CODEX_ABORTED


def test_scan_defaults_to_codex_home_with_archived_sessions(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex"
    put(home, M.real("exec").read_bytes(), "rollout-a.jsonl")
    put(home, M.interrupted_shell(), "rollout-b.jsonl")  # healed by Codex: not stuck
    bad = put(home, M.duplicate_output(), "rollout-c.jsonl")
    archived = home / "archived_sessions" / "rollout-d.jsonl"
    archived.parent.mkdir(parents=True)
    archived.write_bytes(M.empty_call_ids())
    (home / "sessions" / "2026" / "01" / "01" / "rollout-c.jsonl.bak").write_bytes(b"x")
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert scanned(capsys, "codex") == (4, sorted([str(bad), str(archived)]))


def test_map_shows_a_rollout_with_its_lines(tmp_path: Path, capsys: Capsys) -> None:
    p = put(tmp_path, M.interrupted_shell())
    out = stdout_of(capsys, 1, "map", "--raw", p)
    assert "(line 10)" in out and "exec_command(call_mock0002)" in out
    assert "break at messages.3: [openai-responses.missing_output]" in out
    code, out, _ = run(capsys, "map", p)
    assert code == 0 and "inserted by Codex" in out


def test_raw_is_for_codex_only(tmp_path: Path, capsys: Capsys) -> None:
    p = tmp_path / "m.json"
    p.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    code, _, err = run(capsys, "check", "--raw", "--format", "claude-code", p)
    assert code == 2 and "--raw is for Codex rollouts" in err


def test_verify_refuses_an_append_that_changes_the_history() -> None:
    data = M.rejected_turn()
    before = RAW.load(data, "x.jsonl")
    objs = [json.loads(raw) for raw in data.splitlines()]
    items = [o["payload"] for o in objs if o["type"] == "response_item"]
    bad: dict[str, Any] = {
        "timestamp": "t",
        "ordinal": len(objs),
        "type": "compacted",
        "payload": {"message": "", "replacement_history": items[:2]},
    }
    after = RAW.load(data + json.dumps(bad).encode() + b"\n", "x.jsonl")
    assert F.verify(before, after) is not None


# -- scan without --agent: every agent's files, each in its own format ---------------


def _mixed(root: Path) -> set[str]:
    """A folder holding sessions of every agent, pristine and broken (real files, broken
    by each format's own mutations); the broken ones' paths."""
    import shutil

    from tests.support.mutations import claude_code as CC
    from tests.support.mutations import gemini_cli as G

    bad: set[str] = set()

    def write(rel: str, data: bytes, broken: bool) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        if broken:
            bad.add(str(p))

    write(
        "claude/-home-u-p/0000aaaa-0000-4000-8000-000000000000.jsonl", CC.LINEAR.read_bytes(), False
    )
    write("claude/-home-u-p/0000bbbb-0000-4000-8000-000000000000.jsonl", CC.m_delete_result(), True)
    write("gemini/p1/chats/session-2026-01-01T00-00-aaaaaaaa.jsonl", G.PARALLEL.read_bytes(), False)
    write("gemini/p1/chats/session-2026-01-02T00-00-bbbbbbbb.jsonl", G.mid_history(), True)
    write("codex/2026/01/01/rollout-a.jsonl", M.real("exec").read_bytes(), False)
    write("codex/2026/01/01/rollout-b.jsonl", M.interrupted_shell(), False)  # healed by Codex
    write("codex/2026/01/01/rollout-c.jsonl", M.duplicate_output(), True)
    cline = Path(__file__).parent / "data" / "cline" / "saoudrizwan.claude-dev" / "tasks"
    task = next(p for p in sorted(cline.iterdir()) if p.is_dir())
    shutil.copytree(task, root / "cline" / "tasks" / "good")
    shutil.copytree(task, root / "cline" / "tasks" / "bad")
    history = json.loads((task / "api_conversation_history.json").read_bytes())
    while history[-1]["role"] != "assistant" or not any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in history[-1]["content"]
    ):
        history.pop()
    write("cline/tasks/bad/api_conversation_history.json", json.dumps(history).encode(), True)
    write("notes/todo.jsonl", b'{"todo": "not a session"}\n', False)
    return bad


def test_scan_without_agent_lists_exactly_the_broken_sessions_of_every_agent(
    tmp_path: Path, capsys: Capsys
) -> None:
    bad = _mixed(tmp_path)
    out = stdout_of(capsys, 1, "scan", tmp_path, "--json")
    report = json.loads(out)
    assert {b["file"] for b in report["broken"]} == bad
    assert {b["file"]: b["format"] for b in report["broken"]} == {
        p: (
            "claude-code"
            if "/claude/" in p
            else "gemini-cli"
            if "/gemini/" in p
            else "codex"
            if "/codex/" in p
            else "cline"
        )
        for p in bad
    }
    assert report["by_agent"] == {"claude-code": 2, "gemini-cli": 2, "codex": 3, "cline": 2}
    assert report["not_recognised"] == [str(tmp_path / "notes" / "todo.jsonl")]
    out = stdout_of(capsys, 1, "scan", tmp_path)
    assert "todo.jsonl: not judged: not a session of any agent toolpair knows" in out
    assert "9 sessions (2 Claude Code, 2 Gemini CLI, 3 Codex CLI, 2 Cline family" in out
    assert "4 broken" in out and "1 not recognised" in out


def test_scan_without_a_folder_looks_in_every_agents_place_and_says_which(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    at_home(
        monkeypatch,
        tmp_path,
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "CODEX_HOME",
        "CLINE_DIR",
        "CLINE_DATA_DIR",
        "CLINE_SESSION_DATA_DIR",
    )
    code, _, err = run(capsys, "scan")
    assert code == 2 and "no any agent's sessions here" not in err
    assert "no sessions of any agent here (looked in" in err
    assert str(tmp_path / ".claude" / "projects") in err
    home = tmp_path / ".codex"
    bad = put(home, M.duplicate_output())
    gem = tmp_path / ".gemini" / "tmp" / "p" / "chats"
    gem.mkdir(parents=True)
    from tests.support.mutations import gemini_cli as G

    (gem / "session-2026-01-01T00-00-aaaaaaaa.jsonl").write_bytes(G.PARALLEL.read_bytes())
    out = stdout_of(capsys, 1, "scan")
    assert f"looked in: {home / 'sessions'}, {tmp_path / '.gemini' / 'tmp'}" in out or (
        f"looked in: {tmp_path / '.gemini' / 'tmp'}, {home / 'sessions'}" in out
    )
    assert f"not found: {tmp_path / '.claude' / 'projects'}" in out
    assert out.splitlines()[0].startswith(f"{bad}:")


def test_scan_agent_gemini_cli_without_a_folder_says_where_it_looked(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    code, _, err = run(capsys, "scan", "--agent", "gemini-cli")
    assert code == 2
    assert f"no Gemini CLI sessions here (looked in {tmp_path / '.gemini' / 'tmp'})" in err


def test_a_rollout_rewritten_with_spaces_is_still_detected(tmp_path: Path) -> None:
    objs = [json.loads(raw) for raw in M.interrupted_shell().splitlines()]
    p = put(tmp_path, b"".join(json.dumps(o).encode() + b"\n" for o in objs))
    assert detect(str(p)) is F
