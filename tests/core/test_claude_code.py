"""Claude Code session files: read as Claude Code reads them on --resume, checked with the
anthropic rules, repaired in place with the smallest edit; scan and map over them.

The files are real sessions from transcript viewers' test data (data/claude_code/README.md),
broken by the mutations in tests/support/mutations/claude_code.py.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

import pytest

import toolpair
from tests.support.mutations import claude_code as M
from toolpair.cli import main
from toolpair.engine.coverage import NothingJudged
from toolpair.sessions import claude_code

from .clirun import Capsys, repaired_while_open, run, stdout_of


def write(tmp_path: Path, data: bytes, name: str = "3f0c2d4e-1111-4222-8333-444455556666") -> Path:
    return M.settle(tmp_path / f"{name}.jsonl", data)


# -- reading ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", M.REAL_FILES, ids=lambda p: p.name)
def test_real_sessions_of_every_era_are_valid(path: Path, capsys: Capsys) -> None:
    """Unbroken sessions of 1.0, 2.0 and 2.1 are read, judged and found valid."""
    code, out, _ = run(capsys, "check", path)
    assert code == 0, out
    assert "valid (claude-code format, anthropic rules, model claude-" in out


def test_linear_runs_merge_streamed_lines_into_api_messages() -> None:
    """Five streamed tool_use lines are one assistant message, five result lines one user
    message: messages.N counts merged messages, as the API error does."""
    s = claude_code.read_session(str(M.LINEAR))
    assert len(s.sent) == 29
    assert len(s.messages) == 14
    batch = next(m for m in s.messages if any(M.BATCH[0] in e.call_ids() for e in m.entries))
    assert len(batch.entries) == 5
    i = s.messages.index(batch)
    assert sorted(r for e in s.messages[i + 1].entries for r in e.result_ids()) == sorted(M.BATCH)
    assert s.model == "claude-sonnet-4-20250514"


def test_inline_sidechains_are_their_own_chains() -> None:
    s = claude_code.read_session(str(M.SIDECHAINS))
    assert s.sidechain and all(e.sidechain for e in s.sidechain)
    assert not any(e.sidechain for e in s.sent)
    assert s.skipped() == {"sidechain lines (their own chains)": len(s.sidechain)}


def test_rewind_and_compaction_send_only_the_leaf_path_after_the_boundary() -> None:
    s = claude_code.read_session(str(M.REWIND))
    assert s.boundary is not None and s.boundary.uuid == "cb"
    assert [e.uuid for e in s.sent] == ["cs", "p1u", "p1a"]
    assert s.leaf is not None and s.leaf.uuid == "p1a"
    # Both rewound branches and the pre-compaction path are listed, never judged.
    assert {e.uuid for e in s.before_boundary} >= {"b1u", "b1a", "b2u", "b2a"}


def test_subagent_file_leaf_is_its_last_message_line() -> None:
    s = claude_code.read_session(str(M.SUBAGENT))
    assert all(e.sidechain for e in s.transcript.entries)
    assert len(s.messages) == 2
    assert s.leaf is not None and s.leaf is s.transcript.entries[-1]
    assert s.sidechain == []


def test_parallel_siblings_of_2_1_are_reattached() -> None:
    """Each result hanging from its own call line (2.1) is put back: no false unpaired
    calls, as Claude Code's own recovery avoids them."""
    s = claude_code.read_session(M.m_fan_out().splitlines(keepends=True))
    assert len(s.recovered) == 4
    assert s.validate() == []


def test_torn_last_line_is_skipped_and_listed(capsys: Capsys, tmp_path: Path) -> None:
    data = M.LINEAR.read_bytes() + b'{"parentUuid":"x","type":"user","mess'
    p = write(tmp_path, data)
    out = stdout_of(capsys, 0, "check", p)
    assert "1 unreadable lines" in out


# -- check -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", M.CASES, ids=lambda c: c.name)
def test_check_finds_each_break_with_index_line_and_strip(
    case: M.Case, tmp_path: Path, capsys: Capsys
) -> None:
    p = write(tmp_path, case.make())
    code, out, _ = run(capsys, "check", p)
    if not case.broken:
        assert code == 0, out
        return
    assert code == 1, out
    first = out.splitlines()[0]
    # file:line: messages.N: [code] the API's wording
    assert first.startswith(f"{p}:")
    loc, rest = first.split(": messages.", 1)
    line = int(loc.rsplit(":", 1)[1])
    assert 1 <= line <= len(p.read_bytes().splitlines())
    assert rest.split(":", 1)[0].isdigit()
    assert "tool_use" in rest
    assert any(row.lstrip().startswith(">") for row in out.splitlines()[1:])


def test_check_json_names_merged_index_and_file_line(tmp_path: Path, capsys: Capsys) -> None:
    p = write(tmp_path, M.m_delete_result())
    out = stdout_of(capsys, 1, "check", "--json", p)
    (item,) = json.loads(out)
    assert item["index"] == 3 and item["format"] == "claude-code"
    assert item["provider"] == "anthropic" and item["model"] == "claude-sonnet-4-20250514"
    assert item["ids"] == [M.BATCH[2]]
    raw = p.read_bytes().splitlines()[item["line"] - 1]
    assert json.loads(raw)["type"] == "assistant"


def test_library_reads_the_claude_code_format() -> None:
    objs = [json.loads(x) for x in M.m_truncate_after_call().splitlines()]
    vs = toolpair.validate(objs, "anthropic", format="claude-code", model="claude-sonnet-4-5")
    assert [v.index for v in vs] == [3]


# -- never "valid" about what was not read --------------------------------------------


def test_library_refuses_to_call_unread_lines_valid() -> None:
    """Session lines detected as Responses items of unknown kinds are not valid: the
    error says what was skipped and points at the claude-code format."""
    objs = [json.loads(x) for x in M.LINEAR.read_bytes().splitlines()]
    with pytest.raises(NothingJudged) as e:
        toolpair.validate(objs, "openai-responses")
    assert "judged 0 items" in str(e.value)
    assert "type 'assistant'" in str(e.value)
    assert "claude-code" in str(e.value)


def test_cli_exits_2_when_nothing_was_judged(tmp_path: Path, capsys: Capsys) -> None:
    p = tmp_path / "events.jsonl"
    p.write_text("".join(json.dumps({"type": "tick", "n": i}) + "\n" for i in range(5)))
    code, out, err = run(capsys, "check", p)
    assert code == 2
    assert "valid" not in out
    assert "nothing judged" in err and "type 'tick' (5)" in err


def test_cli_exits_2_when_almost_nothing_was_judged(tmp_path: Path, capsys: Capsys) -> None:
    items = [{"type": "function_call_output", "call_id": "c", "output": "x"}]
    items += [{"type": "event", "n": i} for i in range(20)]
    p = tmp_path / "items.json"
    p.write_text(json.dumps(items))
    code, _, err = run(capsys, "check", p)
    assert code == 2
    assert "judged 1 item; skipped 20" in err


def test_known_responses_items_still_judged() -> None:
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]
    assert toolpair.validate(items, "openai-responses") == []


# -- repair ----------------------------------------------------------------------------


def _subsequence(small: list[bytes], big: list[bytes]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


@pytest.mark.parametrize("case", M.BROKEN, ids=lambda c: c.name)
def test_repair_in_place_is_minimal_safe_and_idempotent(
    case: M.Case, tmp_path: Path, capsys: Capsys
) -> None:
    data = case.make()
    p = write(tmp_path, data)
    before = claude_code.read_session(data.splitlines(keepends=True))
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    backup = p.with_name(p.name + ".bak")
    assert backup.read_bytes() == data
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    new = p.read_bytes()
    old_lines = data.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    # Untouched lines are byte-identical and in order; at most a handful changed.
    kept = [x for x in old_lines if x in new_lines]
    assert _subsequence(kept, new_lines)
    assert len(old_lines) - len(kept) <= 3
    after = claude_code.read_session(new_lines)
    # uuids never change: every surviving line keeps its uuid.
    old_ids = {e.uuid for e in before.transcript.entries}
    new_ids = {e.uuid for e in after.transcript.entries}
    assert len(old_ids - new_ids) <= 1
    assert not claude_code.graph_problems(after.transcript)
    assert after.validate() == []
    # The leaf stays, unless the unanswered call was the leaf itself.
    assert before.leaf is not None and after.leaf is not None
    if before.leaf.call_ids():
        assert after.leaf.parent is not None
    else:
        assert after.leaf.uuid == before.leaf.uuid
    code, out, _ = run(capsys, "check", p)
    assert code == 0, out
    # Idempotent: a second repair writes nothing.
    mtime = p.stat().st_mtime_ns
    backup.unlink()
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "nothing to repair" in err
    assert p.read_bytes() == new and p.stat().st_mtime_ns == mtime
    assert not backup.exists()


@pytest.mark.parametrize("case", [c for c in M.CASES if not c.broken], ids=lambda c: c.name)
def test_untouched_file_is_never_written(case: M.Case, tmp_path: Path, capsys: Capsys) -> None:
    p = write(tmp_path, case.make())
    mtime = p.stat().st_mtime_ns
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0 and "not written" in err
    assert p.stat().st_mtime_ns == mtime
    assert not p.with_name(p.name + ".bak").exists()


def test_spliced_line_copies_the_session_fields_and_sits_after_its_parent(
    tmp_path: Path, capsys: Capsys
) -> None:
    p = write(tmp_path, M.m_interrupt())
    code, _, _ = run(capsys, "repair", p, "--in-place")
    assert code == 0
    ls = p.read_bytes().splitlines()
    objs = [json.loads(x) for x in ls]
    k = next(
        i
        for i, o in enumerate(objs)
        if o.get("toolUseResult", "") == f"Error: {toolpair.Policy().placeholder}"
    )
    new, parent, nxt = objs[k], objs[k - 1], objs[k + 1]
    assert new["parentUuid"] == parent["uuid"] == new["sourceToolAssistantUUID"]
    assert nxt["parentUuid"] == new["uuid"]
    for key in ("sessionId", "cwd", "version", "gitBranch", "userType", "isSidechain"):
        assert new[key] == parent[key]
    block = new["message"]["content"][0]
    assert block["type"] == "tool_result" and block["is_error"] is True
    # The interrupt text now follows the result in the merged user message.
    assert nxt["message"]["content"][0]["text"] == M.INTERRUPT
    assert next(iter(new)) == "parentUuid"


def test_refuses_when_the_file_changes_while_read(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session Claude Code appends to while repair reads it is not overwritten."""
    p = write(tmp_path, M.m_truncate_after_call())
    real = Path.read_bytes
    calls = {"n": 0}

    def read_then_append(self: Path) -> bytes:
        data = real(self)
        calls["n"] += 1
        if calls["n"] == 1 and self == p:
            with open(p, "ab") as f:
                f.write(b'{"type":"last-prompt","lastPrompt":"x","sessionId":"s"}\n')
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_append)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 2
    assert "changed while it was read" in err
    assert not p.with_name(p.name + ".bak").exists()


def test_warns_when_the_session_looks_open(tmp_path: Path, capsys: Capsys) -> None:
    assert "may still be open" in repaired_while_open(capsys, write(tmp_path, M.m_delete_result()))


def test_backup_name_is_not_a_second_session(tmp_path: Path, capsys: Capsys) -> None:
    p = write(tmp_path, M.m_delete_result())
    run(capsys, "repair", p, "--in-place")
    assert sorted(x.name for x in tmp_path.iterdir()) == [p.name, p.name + ".bak"]
    assert not any(x.name.endswith(".bak.jsonl") for x in tmp_path.iterdir())


def test_repair_to_stdout_leaves_the_file(tmp_path: Path, capsys: Capsys) -> None:
    data = M.m_delete_result()
    p = write(tmp_path, data)
    code = main(["repair", str(p)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert p.read_bytes() == data
    assert len(out.splitlines()) == len(data.splitlines()) + 1


# -- scan ------------------------------------------------------------------------------


def _tree(root: Path, n_good: int, broken: list[bytes]) -> list[Path]:
    made = []
    for i in range(n_good):
        d = root / f"-home-u-p{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        made.append(write(d, M.LINEAR.read_bytes(), f"0000{i:04d}-0000-4000-8000-000000000000"))
    for j, data in enumerate(broken):
        d = root / "-home-u-broken"
        d.mkdir(parents=True, exist_ok=True)
        p = write(d, data, f"bbbb{j:04d}-0000-4000-8000-000000000000")
        t = time.time() - 100 * (j + 1)
        os.utime(p, (t, t))
        made.append(p)
    return made


def test_scan_lists_broken_sessions_newest_first(tmp_path: Path, capsys: Capsys) -> None:
    _tree(tmp_path, 5, [M.m_delete_result(), M.m_interrupt()])
    out = stdout_of(capsys, 1, "scan", tmp_path, "--json")
    report = json.loads(out)
    assert report["scanned"] == 7
    names = [Path(b["file"]).name for b in report["broken"]]
    assert names == [
        "bbbb0000-0000-4000-8000-000000000000.jsonl",
        "bbbb0001-0000-4000-8000-000000000000.jsonl",
    ]
    assert report["broken"][0]["index"] == 3 and report["broken"][0]["line"] == 8


def test_scan_uses_processes_and_draws_progress(tmp_path: Path, capsys: Capsys) -> None:
    from toolpair.cli import sessions

    _tree(tmp_path, sessions.PARALLEL_FROM, [M.m_truncate_after_call()])
    code, out, err = run(capsys, "scan", tmp_path, "-j", "2", "--progress")
    assert code == 1
    assert f"{sessions.PARALLEL_FROM + 1} sessions" in out and "1 broken" in out
    assert "\r[" in err and f"{sessions.PARALLEL_FROM + 1}/{sessions.PARALLEL_FROM + 1}" in err


def test_scan_of_a_clean_tree_exits_0_and_default_dir_follows_config(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path / "projects", 2, [])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    code, out, err = run(capsys, "scan")
    assert code == 0, err
    assert "2 sessions" in out and "0 broken" in out


# -- map -------------------------------------------------------------------------------


def test_map_of_a_session_links_every_pair_and_marks_the_break(
    tmp_path: Path, capsys: Capsys
) -> None:
    p = write(tmp_path, M.m_delete_result())
    out = stdout_of(capsys, 1, "map", p)
    rows = [r for r in out.splitlines() if re.match(r"^[> ] \[\d+\] ", r)]
    assert len(rows) == 14
    marked = [r for r in rows if r.startswith(">")]
    assert len(marked) == 1 and "[3] assistant" in marked[0] and "->?" in marked[0]
    assert "->[4]" in marked[0]
    assert "repair would: spliced result at messages.3" in out


def test_map_reads_every_format_check_reads(tmp_path: Path, capsys: Capsys) -> None:
    from toolpair.demo import DEMOS, load_demo

    for name in DEMOS:
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(load_demo(name)))
        code, out, _ = run(capsys, "map", p)
        assert code == 1, name
        assert "break at messages." in out and "repair would:" in out


def test_map_html_is_one_self_contained_page(tmp_path: Path, capsys: Capsys) -> None:
    p = write(tmp_path, M.m_interrupt())
    out = tmp_path / "map.html"
    code, _, _ = run(capsys, "map", p, "--html", out)
    assert code == 1
    page = out.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    for external in ("http://", "https://", "<script", "<link", "src=", "@import", "url("):
        assert external not in page
    assert 'href="#m-7"' in page and 'id="m-7"' in page


@pytest.mark.parametrize("case", M.CASES, ids=lambda c: c.name)
def test_two_pass_reading_of_large_files_sees_the_same_session(
    case: M.Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large files are read graph first, then only the sent lines' content: the session
    and its verdict are the same as from one pass, and lines never sent keep no content."""
    data = case.make()
    p = write(tmp_path, data)
    one = claude_code.read_session(data.splitlines(keepends=True))
    monkeypatch.setattr(claude_code, "TWO_PASS_FROM", 0)
    two = claude_code.read_session(str(p))
    assert two.api_messages() == one.api_messages()
    assert [str(v) for v in two.validate()] == [str(v) for v in one.validate()]
    sent = {e.pos for e in two.sent}
    assert all(e.content is None for e in two.transcript.entries if e.pos not in sent)


def test_a_session_is_judged_with_the_anthropic_rules_only(tmp_path: Path, capsys: Capsys) -> None:
    p = write(tmp_path, M.m_delete_result())
    code, _, err = run(capsys, "check", "--provider", "openai", p)
    assert code == 2 and "Anthropic Messages API" in err
    code, out, _ = run(capsys, "check", "--provider", "anthropic", "--model", "claude-opus-4-1", p)
    assert code == 1 and "model claude-opus-4-1" in out


def test_map_draws_nothing_it_did_not_judge(tmp_path: Path, capsys: Capsys) -> None:
    p = tmp_path / "events.jsonl"
    p.write_text("".join(json.dumps({"type": "tick", "n": i}) + "\n" for i in range(3)))
    code, out, err = run(capsys, "map", p)
    assert code == 2 and out == ""
    assert "nothing judged" in err


def test_check_lists_what_it_never_judged(capsys: Capsys) -> None:
    """Rewound branches before the compaction and inline sidechains are named by line,
    never judged as sent."""
    out = stdout_of(capsys, 0, "check", M.REWIND, M.SIDECHAINS)
    assert "8 lines before the last compaction (lines 1-8)" in out
    assert "22 sidechain lines (their own chains) (lines 16-22, 26-40)" in out


@pytest.mark.parametrize("case", M.BROKEN, ids=lambda c: c.name)
def test_edited_lines_change_only_what_the_fix_needs(
    case: M.Case, tmp_path: Path, capsys: Capsys
) -> None:
    """A re-parented line differs from the original by its parentUuid value alone, byte
    for byte (key order, separators, non-ASCII text kept); a reordered line only by the
    order of its content blocks."""
    data = case.make()
    p = write(tmp_path, data)
    assert main(["repair", str(p), "--in-place"]) == 0
    capsys.readouterr()
    old = {json.loads(x)["uuid"]: x for x in data.splitlines() if b'"uuid"' in x}
    edited = 0
    for raw in p.read_bytes().splitlines():
        o = json.loads(raw)
        before = old.get(o.get("uuid"))
        if before is None or before == raw:
            continue
        edited += 1
        b = json.loads(before)
        if b.get("parentUuid") != o.get("parentUuid"):
            was = json.dumps(b.get("parentUuid")).encode()
            now = json.dumps(o.get("parentUuid")).encode()
            assert before.replace(b'"parentUuid":' + was, b'"parentUuid":' + now, 1) == raw
        else:
            assert sorted(map(json.dumps, b["message"]["content"])) == sorted(
                map(json.dumps, o["message"]["content"])
            )
            assert list(b) == list(o)
    assert edited <= 2


def test_map_html_of_many_histories_keeps_each_ones_links_apart(
    tmp_path: Path, capsys: Capsys
) -> None:
    from toolpair.demo import load_demo

    body = load_demo("anthropic")
    p = tmp_path / "requests.jsonl"
    p.write_text(json.dumps(body) + "\n" + json.dumps(body) + "\n")
    out = tmp_path / "map.html"
    assert main(["map", str(p), "--html", str(out)]) == 1
    page = out.read_text("utf-8")
    for h in ("h0-", "h1-"):
        ids = set(re.findall(rf'id="({h}m-\d+)"', page))
        links = set(re.findall(rf'href="#({h}m-\d+)"', page))
        assert ids and links and links <= ids


# -- merged turns: a result lost between two API responses -----------------------------


def _turns(s: claude_code.Session) -> list[tuple[str, list[str]]]:
    """Each merged message as its role and block kinds (ids for calls and results)."""
    out = []
    for m in s.messages:
        kinds = []
        for b in m.content():
            t = b.get("type")
            kinds.append(f"{t}:{b.get('id') or b.get('tool_use_id')}" if "tool" in t else t)
        out.append((m.role, kinds))
    return out


def test_merged_turn_is_rejected_where_the_api_rejects_it_and_its_twin_is_not(
    tmp_path: Path, capsys: Capsys
) -> None:
    """The text-only answer hangs from the call line: the turn sent is [tool_use, text],
    refused at messages.11 for the call; the file with its result line is valid."""
    p = write(tmp_path, M.m_merged_turn())
    out = stdout_of(capsys, 1, "check", "--json", p)
    items = json.loads(out)
    assert [(v["code"], v["index"], v["ids"]) for v in items] == [
        ("anthropic.missing_result", 11, [M.LAST_CALL]),
        ("anthropic.content_after_tool_use", 11, [M.LAST_CALL]),
    ]
    assert all(v["line"] == 27 for v in items)
    assert items[0]["message"].startswith(
        "messages.11: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {M.LAST_CALL}."
    )
    twin = write(tmp_path, M.LINEAR.read_bytes(), "twin")
    code, out, _ = run(capsys, "check", twin)
    assert code == 0, out


def test_merged_turn_repair_answers_the_call_between_the_two_responses(
    tmp_path: Path, capsys: Capsys
) -> None:
    data = M.m_merged_turn()
    p = write(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    assert "1 fix; written in place" in err
    objs = [json.loads(x) for x in p.read_bytes().splitlines()]
    k = next(i for i, o in enumerate(objs) if M.holds_result(o, M.LAST_CALL))
    call, new, text = objs[k - 1], objs[k], objs[k + 1]
    assert M.holds_call(call, M.LAST_CALL)
    assert new["parentUuid"] == call["uuid"] == new["sourceToolAssistantUUID"]
    assert text["parentUuid"] == new["uuid"]
    assert [b["type"] for b in text["message"]["content"]] == ["text"]
    s = claude_code.read_session(p.read_bytes().splitlines(keepends=True))
    # The two responses come apart, as Claude Code would have sent them.
    assert _turns(s)[-3:] == [
        ("assistant", [f"tool_use:{M.LAST_CALL}"]),
        ("user", [f"tool_result:{M.LAST_CALL}"]),
        ("assistant", ["text"]),
    ]
    assert s.leaf is not None and s.leaf.uuid == text["uuid"]
    code, out, _ = run(capsys, "check", p)
    assert code == 0, out


def test_merged_parallel_batch_is_answered_after_its_last_line(
    tmp_path: Path, capsys: Capsys
) -> None:
    """2.1: the four results of a parallel batch lost, the next response hangs from a
    middle call line. The error results hang from that line, sit after the batch's last
    line, and the next response hangs from them."""
    data = M.m_merged_turn_fan_out()
    before = claude_code.read_session(data.splitlines(keepends=True))
    batch = next(m for m in before.messages if len(m.entries) > 4 and m.role == "assistant")
    first = claude_code._responses(batch.entries)[0]
    calls = [c for e in first for c in e.call_ids()]
    assert len(calls) == 4
    p = write(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 0, err
    objs = [json.loads(x) for x in p.read_bytes().splitlines()]
    new = [i for i, o in enumerate(objs) if any(M.holds_result(o, c) for c in calls)]
    assert new == list(range(new[0], new[0] + 4))
    assert objs[new[0] - 1]["uuid"] == first[-1].uuid
    hung = {e.uuid for e in first}
    assert objs[new[0]]["parentUuid"] in hung
    nxt = next(o for o in objs if o.get("uuid") == batch.entries[len(first)].uuid)
    assert nxt["parentUuid"] == objs[new[-1]]["uuid"]
    after = claude_code.read_session(p.read_bytes().splitlines(keepends=True))
    assert after.validate() == []
    i = next(
        j for j, m in enumerate(after.messages) if any(calls[0] in e.call_ids() for e in m.entries)
    )
    assert [e.uuid for e in after.messages[i].entries] == [e.uuid for e in first]
    assert sorted(r for e in after.messages[i + 1].entries for r in e.result_ids()) == sorted(calls)


def _repair_bytes(data: bytes) -> tuple[claude_code.Session, bytes]:
    raw = data.splitlines(keepends=True)
    s = claude_code.build_session(claude_code.read_transcript(raw))
    return s, b"".join(claude_code.apply_plan(raw, claude_code.plan_repair(s, raw)))


def _lost_results() -> list[tuple[str, bytes]]:
    """Every real file with one result line lost, with two lost, and with every result
    of one response lost (the 2.1 fan-out layout too)."""
    out = []
    for path in M.REAL_FILES:
        ls = M.lines(path)
        idx = M.result_lines(ls)
        for k, i in enumerate(idx):
            out.append((f"{path.name}:{i + 1}", M.m_drop_lines(path, (i,))))
            out.extend(
                (f"{path.name}:{i + 1}+{j + 1}", M.m_drop_lines(path, (i, j))) for j in idx[k + 1 :]
            )
    for name, ls in [(p.name, M.lines(p)) for p in M.REAL_FILES] + [
        ("fan-out", M.m_fan_out().splitlines(keepends=True))
    ]:
        ids = dict.fromkeys(json.loads(x).get("message", {}).get("id") for x in ls)
        for mid in filter(None, ids):
            dropped = M.m_drop_response_results(ls, mid)
            if dropped is not None:
                out.append((f"{name}:{mid}", dropped))
    return out


def test_every_lost_result_in_a_chain_of_responses_repairs_to_valid() -> None:
    """However many responses a lost result line merges into one turn, repair makes the
    session valid with the smallest edit: the leaf stays unless it was the unanswered
    call, no real line or result is lost, the graph stays whole, and a second repair
    changes nothing."""
    broken = 0
    failures = []
    for name, data in _lost_results():
        before, new = _repair_bytes(data)
        if not before.validate():
            assert new == data, name
            continue
        broken += 1
        after, again = _repair_bytes(new)
        problems = [str(v) for v in after.validate()]
        if again != new:
            problems.append("a second repair changes the file")
        if claude_code.graph_problems(after.transcript):
            problems.append("graph broken")
        old_uuids = {e.uuid for e in before.transcript.entries}
        if not old_uuids <= {e.uuid for e in after.transcript.entries}:
            problems.append("a line was lost")
        assert before.leaf is not None and after.leaf is not None
        if not before.leaf.call_ids() and after.leaf.uuid != before.leaf.uuid:
            problems.append("the leaf moved")
        kept = set(data.splitlines(keepends=True)) - set(new.splitlines(keepends=True))
        if len(kept) > 2:
            problems.append(f"{len(kept)} lines edited")
        if problems:
            failures.append((name, problems))
    assert broken > 500
    assert failures == []


def test_a_repair_that_leaves_violations_is_not_written_in_place(
    tmp_path: Path, capsys: Capsys
) -> None:
    """One break fixed, one left: the session would still be refused, so the file is
    not touched, what is left is printed, exit 1."""
    data = M.m_partly_repairable()
    p = write(tmp_path, data)
    mtime = p.stat().st_mtime_ns
    code, out, err = run(capsys, "repair", p, "--in-place")
    assert code == 1
    assert out == ""
    assert p.read_bytes() == data and p.stat().st_mtime_ns == mtime
    assert not p.with_name(p.name + ".bak").exists()
    assert f"spliced result at messages.3, line 10 ({M.BATCH[2]})" in err
    assert (
        "  left: messages.11: [anthropic.content_after_tool_use] `tool_use` ids "
        f"were found without `tool_result` blocks immediately after: {M.LAST_CALL}."
    ) in err
    assert "1 fix, 1 violation left; not written: the repaired session would still fail" in err
    assert "--allow-partial" in err


def test_allow_partial_writes_the_partial_repair_in_place(tmp_path: Path, capsys: Capsys) -> None:
    data = M.m_partly_repairable()
    p = write(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place", "--allow-partial")
    assert code == 1
    assert "1 fix, 1 violation left; written in place" in err
    assert p.with_name(p.name + ".bak").read_bytes() == data
    out = stdout_of(capsys, 1, "check", "--json", p)
    assert [(v["code"], v["index"]) for v in json.loads(out)] == [
        ("anthropic.content_after_tool_use", 11)
    ]
    # Idempotent: nothing more to do, nothing written.
    written = p.read_bytes()
    code, _, err = run(capsys, "repair", p, "--in-place", "--allow-partial")
    assert code == 1 and "nothing toolpair can repair; not written" in err
    assert p.read_bytes() == written


def test_a_partial_repair_still_goes_to_another_file(tmp_path: Path, capsys: Capsys) -> None:
    """Only the session file itself is guarded: -o writes the partial repair, exit 1."""
    data = M.m_partly_repairable()
    p = write(tmp_path, data)
    out_path = tmp_path / "repaired.jsonl"
    code, _, err = run(capsys, "repair", p, "-o", out_path)
    assert code == 1
    assert f"1 fix, 1 violation left; written to {out_path}" in err
    assert p.read_bytes() == data
    written = out_path.read_bytes().splitlines(keepends=True)
    assert len(written) == len(data.splitlines()) + 1
    after = claude_code.read_session(written)
    assert [v.code for v in after.validate()] == ["anthropic.content_after_tool_use"]


def test_text_between_a_call_and_its_result_is_left_and_said(
    tmp_path: Path, capsys: Capsys
) -> None:
    """[tool_use, text] then [tool_result]: fixing it would move a real text, so repair
    leaves it, writes nothing and names it."""
    data = M.m_text_between_call_and_result()
    p = write(tmp_path, data)
    code, _, err = run(capsys, "repair", p, "--in-place")
    assert code == 1
    assert "nothing toolpair can repair; not written" in err
    assert "messages.11: [anthropic.content_after_tool_use]" in err
    assert p.read_bytes() == data
