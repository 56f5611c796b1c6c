"""Gemini CLI sessions: read as the CLI rebuilds them on resume, judged with the Gemini
rules, repaired by appending (JSONL) or rewriting in the CLI's layout (legacy documents,
checkpoints). The files are real sessions the real CLI wrote (data/gemini_cli/README.md),
broken by tests/support/mutations/gemini_cli.py."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.support.mutations import aged
from tests.support.mutations import gemini_cli as M
from toolpair.sessions import Loaded, SessionError, detect, get_format, names
from toolpair.sessions.gemini_cli import CANCELLED, CONTEXT_TURN, NEXT_PROMPT

from .clirun import Capsys, repaired_while_open, run, scanned, stdout_of

F = get_format("gemini-cli")
NL = b"\n"


def _has_claude_code_format() -> bool:
    try:
        get_format("claude-code")
    except ImportError:
        return False
    return True


def load(data: bytes, name: str = "session-2026-01-01T00-00-abcdef12.jsonl") -> Loaded:
    return F.load(data, name)


def judged(loaded: Loaded) -> list[toolpair.Violation]:
    return toolpair.validate(loaded.messages, loaded.provider, model=loaded.model, format="gemini")


def responses(loaded: Loaded) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for m in loaded.messages
        if m["role"] == "user"
        for p in m["parts"]
        if "functionResponse" in p
    ]


def repaired(
    data: bytes, name: str = "session-2026-01-01T00-00-abcdef12.jsonl"
) -> tuple[Loaded, bytes, list[str]]:
    """Repair ``data`` and check what every repair must hold: the result is valid,
    reads back as planned, keeps every real response, and a second repair finds nothing."""
    before = F.load(data, name)
    assert judged(before), "the broken fixture must be judged broken"
    kept = json.dumps([before.messages, before.where], sort_keys=True)
    plan = F.plan(before, data, None)
    assert json.dumps([before.messages, before.where], sort_keys=True) == kept, "input mutated"
    assert plan is not None and plan.fixes >= 1, plan
    after = F.load(plan.data, name)
    assert judged(after) == []
    assert F.verify(before, after) is None
    real = [r for r in responses(before)]
    got = responses(after)
    for r in real:
        assert r in got, f"a real response was lost: {r}"
    assert F.plan(after, plan.data, None) is None, "repair is idempotent"
    assert not any(c.startswith("unrepaired") for c in plan.changes), plan.changes
    return after, plan.data, plan.changes


# -- the real files as the CLI left them --------------------------------------------


@pytest.mark.parametrize(
    "path", [M.PARALLEL, M.SUBAGENT, M.GEMINI3, M.KILLED], ids=lambda p: p.parent.parent.parent.name
)
def test_real_sessions_are_read_whole_and_valid(path: Path) -> None:
    data = path.read_bytes()
    assert F.sniff(str(path))
    if "claude-code" not in names() or _has_claude_code_format():
        assert detect(str(path)) is F
    loaded = F.load(data, str(path))
    assert judged(loaded) == []
    assert F.plan(loaded, data, None) is None
    assert loaded.messages[0]["parts"] == [{"text": CONTEXT_TURN}]
    assert loaded.messages[-1]["parts"] == [{"text": NEXT_PROMPT}]
    assert loaded.where[0] == "the session context" and loaded.where[-1] == "the next prompt"
    assert loaded.lines[0] is None and loaded.lines[-1] is None
    # Every other message names the file line it was read from.
    n_lines = data.count(b"\n")
    for w, line in zip(loaded.where[1:-1], loaded.lines[1:-1], strict=True):
        assert line is not None and 1 <= line <= n_lines and w.startswith(f"line {line}")
    assert loaded.model is not None and loaded.model.startswith("gemini-")
    assert loaded.format == "gemini-cli" and loaded.wire == "gemini" and loaded.provider == "gemini"


def test_parallel_session_rebuilds_as_the_cli_sends_it() -> None:
    loaded = F.load(M.PARALLEL.read_bytes(), str(M.PARALLEL))
    roles = [m["role"] for m in loaded.messages]
    assert roles == [
        "user",
        "user",
        "model",
        "user",
        "model",
        "user",
        "model",
        "user",
        "model",
        "user",
    ]
    calls = [p["functionCall"] for p in loaded.messages[2]["parts"]]
    assert [c["name"] for c in calls] == ["read_file", "list_directory"]
    # The responses answer the calls by id, in one turn (the batch was parallel).
    assert [r["id"] for r in loaded.messages[3]["parts"][0:2] for r in [r["functionResponse"]]] == [
        c["id"] for c in calls
    ]
    assert loaded.where[2] == loaded.where[3].removesuffix(" toolCalls results")
    assert "2 record updates applied in place" in loaded.described


def test_killed_session_loses_the_call_without_breaking() -> None:
    """Killed while a tool ran, the CLI had not yet written the calls: the model record
    is empty and the resumed history simply lacks the call (nothing to repair)."""
    loaded = F.load(M.KILLED.read_bytes(), str(M.KILLED))
    assert "1 record(s) the CLI does not send" in loaded.skipped
    assert [m["role"] for m in loaded.messages][-3:] == ["model", "user", "user"]
    assert judged(loaded) == []


@pytest.mark.parametrize("resumed", [False, True], ids=["first-run", "resumed"])
def test_cli_0_44_doubled_responses_are_left_out_in_a_checkpoint(resumed: bool) -> None:
    """From 0.44 the CLI records each batch's responses twice (the call record's results
    and a user record of the same parts) and sends both on resume; the resume also
    persists the turn it rebuilt (google-gemini/gemini-cli#29365). Repair appends one
    ``$set.messages`` checkpoint listing every record once."""
    data = M.DOUBLING.read_bytes() if resumed else M.first_run(M.DOUBLING.read_bytes())
    loaded = F.load(data, str(M.DOUBLING))
    v = judged(loaded)
    assert [(x.code, x.index) for x in v] == [("gemini.unexpected_response", 4)]
    assert v[0].message == (
        "Please ensure that function response turn comes immediately after a function call turn."
    )
    assert loaded.where[4] == ("line 15 $set.messages[4]" if resumed else "line 8")
    after, new, changes = repaired(data)
    added = json.loads(new[len(data) :])
    assert list(added) == ["$set"] and list(added["$set"]) == ["messages"]
    assert len(added["$set"]["messages"]) == len(loaded.state.records) - 1
    assert changes[-1].startswith("in a $set.messages checkpoint appended: left out 1 record(s)")
    # The one response turn that is left holds each response once, as it was.
    assert after.messages[3] == loaded.messages[3]
    assert [m["role"] for m in after.messages].count("user") == [
        m["role"] for m in loaded.messages
    ].count("user") - 1


# -- each break, repaired -----------------------------------------------------------


def test_dangling_call_at_the_end() -> None:
    data = M.dangling_end()
    before = load(data)
    v = judged(before)
    assert [x.code for x in v] == ["gemini.response_count"] or [x.code for x in v] == [
        "gemini.missing_response"
    ]
    _after, new, changes = repaired(data)
    assert new.startswith(data) and new.count(b"\n") == data.count(b"\n") + 1
    added = json.loads(new[len(data) :])
    old = json.loads(M.lines(data)[-1])
    assert added["id"] == old["id"] and added["content"] == old["content"]
    tc = added["toolCalls"][0]
    assert tc["status"] == "cancelled"
    assert tc["result"] == [
        {"functionResponse": {"id": tc["id"], "name": tc["name"], "response": {"error": CANCELLED}}}
    ]
    assert len(changes) == 1 and changes[0].startswith("appended a copy of line ")


def test_call_without_result_mid_history() -> None:
    data = M.mid_history()
    before = load(data)
    assert [(x.code, x.index) for x in judged(before)] == [("gemini.missing_response", 3)]
    after, new, _ = repaired(data)
    assert new.startswith(data)
    # The copy keeps its place: the record is still the third message, the rest as it was.
    assert after.where[2] == f"line {new.count(NL)}"
    assert after.messages[4:] == before.messages[3:]


def test_interrupted_parallel_batch() -> None:
    data = M.mid_history(which=[1])  # read_file answered, list_directory not
    before = load(data)
    assert [x.code for x in judged(before)] == ["gemini.response_count"]
    after, _new, changes = repaired(data)
    names_ = [r["name"] for r in after.messages[3]["parts"] for r in [r["functionResponse"]]]
    assert names_ == ["read_file", "list_directory"]
    assert after.messages[3]["parts"][0] == before.messages[3]["parts"][0]  # the real one
    assert "list_directory" in changes[0] and "read_file" not in changes[0]


def test_rewind_keeps_the_break_before_it_and_the_copy_lands_after() -> None:
    data = M.mid_history()
    recs = M.objs(data)
    later_user = [o for o in recs if o.get("type") == "user"][-1]["id"]
    data = M.rewind_after(data, later_user)
    before = load(data)
    assert "1 $rewindTo" in before.described
    assert judged(before)
    _after, new, _ = repaired(data)
    assert new.startswith(data)


def test_rewind_past_the_break_leaves_nothing_to_repair() -> None:
    data = M.mid_history()
    first_gemini = next(o for o in M.objs(data) if o.get("type") == "gemini")["id"]
    data = M.rewind_after(data, first_gemini)
    loaded = load(data)
    assert judged(loaded) == []
    assert F.plan(loaded, data, None) is None


def test_rewind_to_an_unknown_id_clears_everything() -> None:
    data = M.rewind_after(M.mid_history(), "no-such-id")
    loaded = load(data)
    assert [m["parts"][0]["text"] for m in loaded.messages] == [CONTEXT_TURN, NEXT_PROMPT]


def test_set_messages_checkpoint_with_calls_in_content() -> None:
    data = M.set_messages(M.PARALLEL.read_bytes())
    before = load(data)
    assert "1 $set.messages checkpoint(s)" in before.described
    assert before.where[-2].endswith("$set.messages[1]")
    assert [x.code for x in judged(before)] == ["gemini.ends_with_call"] or judged(before)
    _after, new, changes = repaired(data)
    assert new.startswith(data)
    assert "no tool-call record" in changes[0]


def test_subagent_file() -> None:
    data = M.dangling_end(M.SUBAGENT.read_bytes())
    before = load(data, M.SUBAGENT.name)
    assert "subagent" in before.described
    _after, new, _ = repaired(data, M.SUBAGENT.name)
    assert new.startswith(data)


def test_torn_last_line_is_skipped_and_the_copy_starts_on_its_own_line() -> None:
    whole = M.dangling_end()
    data = whole + b'{"id":"torn","type":"gem'
    before = load(data)
    assert "1 unreadable line(s) skipped" in before.described
    _after, new, _ = repaired(data)
    assert new.startswith(data + b"\n")


def test_legacy_json_document_is_rewritten_in_its_layout() -> None:
    data = M.legacy_document(M.mid_history())
    name = "session-2025-06-01T10-00-abcdef12.json"
    before = load(data, name)
    assert before.described.startswith("gemini-cli format (legacy session)")
    assert before.where[1].startswith("messages[") and before.lines[1] is None
    _after, new, _ = repaired(data, name)
    old_doc, new_doc = json.loads(data), json.loads(new)
    assert json.dumps(new_doc, indent=2, ensure_ascii=False).encode() == new
    assert [k for k in new_doc] == [k for k in old_doc]
    changed = [
        i
        for i, (a, b) in enumerate(zip(old_doc["messages"], new_doc["messages"], strict=True))
        if a != b
    ]
    assert len(changed) == 1 and len(new_doc["messages"]) == len(old_doc["messages"])
    # Every message but the repaired one keeps its exact text.
    for i, m in enumerate(old_doc["messages"]):
        if i not in changed:
            text = json.dumps(m, indent=2, ensure_ascii=False)
            assert text.replace("\n", "\n    ") in new.decode()


def _checkpoint_history() -> list[Any]:
    hist = F.history(M.objs(M.PARALLEL.read_bytes()))[:-1]  # without the next prompt
    hist[0] = {
        "role": "user",
        "parts": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}],
    }
    return hist


def test_checkpoint_dangling_call_is_answered_in_place() -> None:
    hist = _checkpoint_history()
    cut = hist[
        : hist.index(next(m for m in hist[3:] if any("functionCall" in p for p in m["parts"]))) + 1
    ]
    data = M.checkpoint(cut)
    name = "checkpoint-my%20tag.json"
    before = load(data, name)
    assert before.described.startswith("gemini-cli format (checkpoint)")
    assert before.where[-2] == f"history[{len(cut) - 1}]"
    _after, new, _changes = repaired(data, name)
    doc = json.loads(new)
    assert json.dumps(doc, indent=2, ensure_ascii=False).encode() == new
    assert doc["authType"] == "gemini-api-key" and doc["history"][: len(cut)] == cut
    assert len(doc["history"]) == len(cut) + 1


def test_bare_list_checkpoint_and_vertex_auth() -> None:
    hist = _checkpoint_history()
    hist[3] = {"role": "user", "parts": [hist[3]["parts"][0]]}  # one of two responses
    data = M.checkpoint(hist, auth="vertex-ai")
    loaded = load(data, "checkpoint-v.json")
    assert loaded.provider == "vertex" and "saved with vertex-ai" in loaded.described
    # Vertex's v1 API also refuses the ids the CLI writes (docs/rules.md, Vertex).
    assert "gemini.response_count" in [x.code for x in judged(loaded)]
    bare = json.dumps(hist, indent=2).encode()
    loaded = load(bare, "checkpoint-b.json")
    assert loaded.provider == "gemini" and F.sniff.__self__ is F


# -- the library, detection and the file walk ---------------------------------------


def test_registered_and_history_of_parsed_objects() -> None:
    assert "gemini-cli" in names() and names().index("gemini-cli") == 1
    data = M.dangling_end()
    msgs = F.history(M.objs(data))
    assert msgs == load(data).messages
    legacy = json.loads(M.legacy_document(data))
    assert F.history(legacy)[1:-1] == msgs[1:-1]
    with pytest.raises(toolpair.InvalidHistory, match="no sessionId"):
        F.history([{"type": "user", "uuid": "x"}])
    with pytest.raises(toolpair.InvalidHistory):
        F.history("not a session")


def test_not_a_session() -> None:
    with pytest.raises(SessionError, match="not a Gemini CLI session"):
        F.load(b'{"type":"user","uuid":"a","sessionId":"s"}\n', "x.jsonl")
    claude = next((Path(__file__).parent / "data" / "claude_code").glob("*.jsonl"))
    assert not F.sniff(str(claude))


def test_session_files_skip_backups_and_temporaries(tmp_path: Path) -> None:
    chats = tmp_path / "proj" / "chats"
    (chats / "parent-id").mkdir(parents=True)
    real = M.PARALLEL.read_bytes()
    keep = [
        chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl",
        chats / "session-2025-01-01T00-00-bbbbbbbb.json",
        chats / "parent-id" / "sub123.jsonl",
        tmp_path / "proj" / "checkpoint-tag.json",
    ]
    skip = [
        chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl.bak",
        chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl.bak.1",
        chats / ".session-2026-01-01T00-00-aaaaaaaa.jsonl.x1y2.tmp",
        chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl.unreadable-1700000000000",
        chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl.tmp-4242",
        tmp_path / "proj" / "logs.json",
        tmp_path / "proj" / "checkpoint-tag.json.bak",
    ]
    for p in keep + skip:
        p.write_bytes(real)
    assert sorted(F.session_files(tmp_path)) == sorted(keep)


def test_default_roots_follow_gemini_cli_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    # Named even before it exists: scan says where it looked.
    assert F.default_roots() == [tmp_path / ".gemini" / "tmp"]
    (tmp_path / ".gemini" / "tmp").mkdir(parents=True)
    assert F.default_roots() == [tmp_path / ".gemini" / "tmp"]
    monkeypatch.delenv("GEMINI_CLI_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert F.default_roots() == [tmp_path / ".gemini" / "tmp"]


def test_user_commands_and_context_records_are_not_sent() -> None:
    base = M.lines(M.PARALLEL.read_bytes())[:1]
    extra = [
        M.js({"id": "u1", "type": "user", "content": [{"text": "/chat save x"}]}),
        M.js({"id": "u2", "type": "user", "content": [{"text": "<session_context>ctx"}]}),
        M.js({"id": "i1", "type": "info", "content": "note"}),
        M.js({"id": "u3", "type": "user", "content": "hello"}),
        M.js({"id": "g1", "type": "gemini", "content": ""}),
    ]
    loaded = load(b"\n".join(base + extra) + b"\n")
    assert [m["parts"] for m in loaded.messages] == [
        [{"text": CONTEXT_TURN}],
        [{"text": "hello"}],
        [{"text": NEXT_PROMPT}],
    ]
    assert "4 record(s) the CLI does not send" in loaded.skipped


# -- the commands ---------------------------------------------------------------------


def put(tmp_path: Path, data: bytes, name: str = "session-2026-01-01T00-00-abcdef12.jsonl") -> Path:
    """``data`` as a session file in a project's chats folder, written an hour ago (not
    open)."""
    chats = tmp_path / "project" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    return aged(chats / name, data)


def partly_repairable() -> bytes:
    """A second response to a call of an earlier turn (unrepairable: repair never drops
    a result whose call is in the history) and, after it, a batch left unanswered
    (repairable)."""
    first = next(o for o in M.objs(M.PARALLEL.read_bytes()) if o.get("toolCalls"))
    earlier = first["toolCalls"][0]["id"]
    tail = [
        M.js(
            {
                "id": "u-orphan",
                "timestamp": "t",
                "type": "user",
                "content": [
                    {"functionResponse": {"id": earlier, "name": "x", "response": {"o": 1}}}
                ],
            }
        ),
        M.js({"id": "u-more", "timestamp": "t", "type": "user", "content": [{"text": "More."}]}),
        M.js(
            {
                "id": "g-more",
                "timestamp": "t",
                "type": "gemini",
                "content": "",
                "model": "gemini-2.5-flash",
                "toolCalls": [
                    {"id": "c-more", "name": "list_directory", "args": {}, "status": "executing"}
                ],
            }
        ),
    ]
    return M.PARALLEL.read_bytes() + b"\n".join(tail) + b"\n"


def test_check_exit_codes_and_json(tmp_path: Path, capsys: Capsys) -> None:
    good = put(tmp_path, M.PARALLEL.read_bytes(), "session-2026-01-02T00-00-aaaaaaaa.jsonl")
    out = stdout_of(capsys, 0, "check", good)
    assert out.startswith(f"{good}: valid (gemini-cli format (session), gemini rules")
    bad = put(tmp_path, M.mid_history())
    out = stdout_of(capsys, 1, "check", "--json", bad)
    (v,) = json.loads(out)
    assert (v["code"], v["index"], v["line"], v["format"], v["provider"]) == (
        "gemini.missing_response",
        3,
        7,
        "gemini-cli",
        "gemini",
    )
    assert v["model"] == "gemini-2.5-flash"
    torn = put(tmp_path, b'{"sessionId":', "session-2026-01-03T00-00-bbbbbbbb.jsonl")
    code, _, err = run(capsys, "check", "--format", "gemini-cli", torn)
    assert code == 2 and "not a Gemini CLI session" in err


def test_repair_in_place_keeps_a_backup_and_is_idempotent(tmp_path: Path, capsys: Capsys) -> None:
    data = M.dangling_end()
    p = put(tmp_path, data)
    code, out, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and out == ""
    assert "appended a copy of line" in err and "1 fix; written in place" in err
    assert p.with_name(p.name + ".bak").read_bytes() == data
    assert p.read_bytes().startswith(data)
    assert run(capsys, "check", p)[0] == 0
    written = p.read_bytes()
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "nothing to repair; not written" in err
    assert p.read_bytes() == written
    # The backup is never a second session.
    out = stdout_of(capsys, 0, "scan", "--agent", "gemini-cli", "--json", tmp_path)
    assert json.loads(out)["scanned"] == 1


def test_repair_to_another_file_leaves_the_session(tmp_path: Path, capsys: Capsys) -> None:
    data = M.mid_history()
    p = put(tmp_path, data)
    out_path = tmp_path / "repaired.jsonl"
    code, _, err = run(capsys, "repair", p, "-o", out_path)
    assert code == 0 and f"written to {out_path}" in err
    assert p.read_bytes() == data
    assert out_path.read_bytes().startswith(data)


def test_a_partial_repair_is_not_written_in_place_unless_allowed(
    tmp_path: Path, capsys: Capsys
) -> None:
    data = partly_repairable()
    p = put(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 1
    assert p.read_bytes() == data and not p.with_name(p.name + ".bak").exists()
    assert "1 fix, 1 violation left; not written" in err
    assert "left: messages.9: [gemini.unexpected_response]" in err
    code, _, err = run(capsys, "repair", p, "--in-place", "--allow-partial")
    assert code == 1 and "1 fix, 1 violation left; written in place" in err
    assert p.read_bytes().startswith(data)
    out = stdout_of(capsys, 1, "check", "--json", p)
    assert [(v["code"], v["index"]) for v in json.loads(out)] == [("gemini.unexpected_response", 9)]
    code, _, err = run(capsys, "repair", p, "--in-place", "--allow-partial")
    assert code == 1 and "nothing toolpair can repair; not written" in err


def test_warns_when_the_session_looks_open(tmp_path: Path, capsys: Capsys) -> None:
    assert "may still be open; if it is, quit Gemini CLI (/quit)" in repaired_while_open(
        capsys, put(tmp_path, M.dangling_end())
    )


def test_refuses_a_file_that_changed_while_it_was_read(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI still running appends while toolpair reads: nothing is written."""
    data = M.dangling_end()
    p = put(tmp_path, data)
    real = Path.read_bytes

    def read_then_append(self: Path) -> bytes:
        out = real(self)
        if self == p:
            with open(p, "ab") as f:
                f.write(b'{"$set":{"lastUpdated":"now"}}\n')
        return out

    monkeypatch.setattr(Path, "read_bytes", read_then_append)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 2 and "changed while it was read" in err
    assert not p.with_name(p.name + ".bak").exists()


def test_scan_lists_the_broken_and_defaults_to_gemini_cli_home(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / ".gemini" / "tmp"
    put(root, M.PARALLEL.read_bytes(), "session-2026-01-02T00-00-aaaaaaaa.jsonl")
    bad = put(root, M.mid_history())
    legacy = put(root, M.legacy_document(M.mid_history()), "session-2025-01-01T00-00-cccccccc.json")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert scanned(capsys, "gemini-cli") == (3, sorted([str(bad), str(legacy)]))


def test_map_names_each_turn_with_its_line(tmp_path: Path, capsys: Capsys) -> None:
    p = put(tmp_path, M.mid_history())
    out = stdout_of(capsys, 1, "map", p)
    assert "(line 6)" in out and "(line 2)" in out
    assert "->?" in out.splitlines()[3]  # the unanswered calls of line 6
    assert "break at messages.3: [gemini.missing_response]" in out
    assert "repair would: appended a copy of line 6: cancelled read_file" in out
    assert "(the next prompt)" not in out  # the stand-in is judged, not drawn


def test_load_path_streams_to_the_same_result(tmp_path: Path) -> None:
    for data, name in [
        (M.mid_history(), "session-2026-01-01T00-00-abcdef12.jsonl"),
        (M.legacy_document(M.mid_history()), "session-2025-01-01T00-00-abcdef12.json"),
        (M.checkpoint(_checkpoint_history()), "checkpoint-t.json"),
    ]:
        p = tmp_path / name
        p.write_bytes(data)
        a, b = F.load(data, str(p)), F.load_path(str(p))
        assert (a.messages, a.where, a.lines, a.described) == (
            b.messages,
            b.where,
            b.lines,
            b.described,
        )


def test_a_line_holding_u2028_stays_one_line() -> None:
    """JSON.stringify keeps U+2028 raw; the CLI splits lines at newlines only."""
    base = M.lines(M.PARALLEL.read_bytes())[:1]
    rec = {"id": "u1", "type": "user", "content": [{"text": "a\u2028b\u0085c"}]}
    loaded = load(b"\n".join([*base, M.js(rec)]) + b"\n")
    assert loaded.messages[1]["parts"] == [{"text": "a\u2028b\u0085c"}]
    assert loaded.lines[1] == 2


def test_the_library_judges_parsed_lines_with_format_gemini_cli() -> None:
    data = M.mid_history()
    got = toolpair.validate(M.objs(data), "gemini", format="gemini-cli")
    assert [(v.code, v.index) for v in got] == [(v.code, v.index) for v in judged(load(data))]
    fixed = toolpair.repair(M.objs(data), "gemini", format="gemini-cli")
    assert toolpair.validate(fixed.messages, "gemini", format="gemini") == []


def test_verify_refuses_a_file_that_would_read_otherwise() -> None:
    data = M.mid_history()
    before = load(data)
    plan = F.plan(before, data, None)
    assert plan is not None
    objs = M.objs(plan.data)
    # A real result edited, a record dropped, the order changed: each is refused.
    edited = [dict(o) for o in objs]
    last = max(i for i, o in enumerate(edited) if o.get("type") == "gemini" and o.get("content"))
    edited[last] = {**edited[last], "content": "something else"}
    text = b"".join(M.js(o) + b"\n" for o in edited)
    assert (
        F.verify(before, load(text)) == f"line {last + 1} would change beyond its unanswered calls"
    )
    dropped = data + M.js({"$rewindTo": objs[-1]["id"]}) + b"\n"
    assert (
        F.verify(before, load(dropped)) == "the records would come back in another order or number"
    )
    assert F.verify(before, load(M.legacy_document(data), "s.json")) == (
        "the file would read as a json, not a jsonl"
    )


def test_a_lone_surrogate_is_written_as_json_stringify_writes_it() -> None:
    """A record holding a lone surrogate (valid JSON, not UTF-8) is copied with it
    escaped, as JSON.stringify escapes it, so the appended line is UTF-8."""
    data = M.dangling_end()
    last = M.objs(data)[-1]
    last["toolCalls"][0]["args"] = {"command": "echo \ud800"}
    ls = M.lines(data)
    ls[-1] = json.dumps(last, separators=(",", ":")).encode()  # ASCII: the escape kept
    data = b"\n".join(ls) + b"\n"
    assert b"echo \\ud800" in data
    _after, new, _ = repaired(data)
    added = new[len(data) :]
    added.decode("utf-8")
    assert b'"echo \\ud800"' in added
    assert json.loads(added)["toolCalls"][0]["args"] == {"command": "echo \ud800"}


def test_a_repeated_response_after_another_model_turn_is_never_dropped() -> None:
    """Only a repeat inside the response turn of its call is the CLI's doubling; a copy
    further on is an orphan response, reported and kept."""
    data = M.PARALLEL.read_bytes()
    first = M.objs(data)[M.tool_lines(data)[0]]
    parts = [p for tc in first["toolCalls"] for p in tc["result"]]
    rec = {"id": "late", "timestamp": "t", "type": "user", "content": parts}
    data += M.js(rec) + b"\n"
    loaded = load(data)
    assert [v.code for v in judged(loaded)] == ["gemini.unexpected_response"]
    assert F.plan(loaded, data, None) is None


# -- responses an append of a record copy cannot take out ----------------------------


@pytest.mark.parametrize("make", [M.stray_response, M.compression_split])
def test_a_response_whose_call_is_gone_is_left_out_by_set_messages(
    make: Any, tmp_path: Path, capsys: Capsys
) -> None:
    data = make()
    loaded = load(data)
    codes = [v.code for v in judged(loaded)]
    assert codes and set(codes) <= {"gemini.unexpected_response", "gemini.response_count"}
    p = put(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    new = p.read_bytes()
    assert new.startswith(data)
    added = json.loads(new[len(data) :])
    assert list(added) == ["$set"] and list(added["$set"]) == ["messages"]
    assert "left out the response(s) whose call is gone" in err
    after = load(new)
    assert judged(after) == []
    # Every record that held more than the stray responses is still there.
    kept = {r["id"] for r in added["$set"]["messages"]}
    assert "summary-1" in kept or make is M.stray_response
    assert not {"stray-1", "split-1"} & kept
    # The file had no $set.messages of the CLI's before: say what an older CLI does.
    older = "an older CLI ignores it" in err
    assert older is (make is M.stray_response)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "nothing to repair; not written" in err


def test_cli_0_61_checkpoint_saved_after_a_resume_is_repaired(
    tmp_path: Path, capsys: Capsys
) -> None:
    """The real ``/chat save`` of CLI 0.61 after a resume: each response twice in the
    turn (gemini-cli#29365); the repair leaves the repeats out, in the Logger's layout."""
    data = M.CHECKPOINT.read_bytes()
    loaded = load(data, M.CHECKPOINT.name)
    (v,) = judged(loaded)
    assert (v.code, v.index) == ("gemini.response_count", 2)
    assert loaded.where[2] == "history[2]"
    p = tmp_path / M.CHECKPOINT.name
    p.write_bytes(data)
    old = time.time() - 3600
    os.utime(p, (old, old))
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    assert "history[2]: left out 2 response(s) repeating ones the turn already holds" in err
    doc = json.loads(p.read_bytes())
    assert p.read_bytes() == (json.dumps(doc, indent=2, ensure_ascii=False)).encode() + (
        b"\n" if data.endswith(b"\n") else b""
    )
    turn = doc["history"][2]["parts"]
    assert [x["functionResponse"]["name"] for x in turn] == ["read_file", "list_directory"]
    assert judged(load(p.read_bytes(), p.name)) == []
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "nothing to repair; not written" in err
