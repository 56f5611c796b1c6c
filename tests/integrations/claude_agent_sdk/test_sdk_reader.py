"""After `toolpair repair --in-place`, the Claude Agent SDK's own session reader (the one
`get_session_messages` and `list_sessions` use, reading a temporary CLAUDE_CONFIG_DIR)
rebuilds a chain in which every call is answered, the leaf is the same, and the file has
no cycles and no dangling parents. Before repair the same reader shows the break, so the
oracle is not blind to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import claude_agent_sdk as sdk
import pytest

from tests.support.mutations import claude_code as M
from toolpair.cli import main

SESSION = "3f0c2d4e-1111-4222-8333-444455556666"
PROJECT = "-work-demo"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    d = tmp_path / "projects" / PROJECT
    d.mkdir(parents=True)
    return d


def put(project: Path, data: bytes, agent: str | None = None) -> Path:
    """A main session file, or a 2.1 subagent file of that session."""
    if agent is None:
        p = project / f"{SESSION}.jsonl"
    else:
        (project / f"{SESSION}.jsonl").write_bytes(M.LINEAR.read_bytes())
        sub = project / SESSION / "subagents"
        sub.mkdir(parents=True, exist_ok=True)
        p = sub / f"agent-{agent}.jsonl"
    return M.settle(p, data)


def raw_graph(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict) and isinstance(o.get("uuid"), str):
            out.append(o)
    return out


def graph_faults(path: Path) -> list[str]:
    """Cycles and parents naming no line, found by walking the raw file."""
    objs = raw_graph(path)
    by = {o["uuid"]: o for o in objs}
    faults = [
        f"dangling {o['uuid']}" for o in objs if o.get("parentUuid") and o["parentUuid"] not in by
    ]
    for o in objs:
        seen: set[str] = set()
        cur: dict[str, Any] | None = o
        while cur is not None:
            if cur["uuid"] in seen:
                faults.append(f"cycle at {cur['uuid']}")
                break
            seen.add(cur["uuid"])
            p = cur.get("parentUuid")
            cur = by.get(p) if p else None
    return faults


def _blocks(m: Any) -> list[dict[str, Any]]:
    c = (m or {}).get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def read(agent: str | None) -> list[Any]:
    """The chain as the SDK's own reader rebuilds it."""
    if agent is None:
        return list(sdk.get_session_messages(SESSION))
    return list(sdk.get_subagent_messages(SESSION, agent))


def unanswered(path: Path, agent: str | None = None) -> list[str]:
    """What the API would refuse in the chain the SDK rebuilds: calls with no result in
    the next merged user message, results with no call right before, results behind
    text. Every response is put back together first, as Claude Code does on resume:
    all the lines of one message id (2.1 leaves sibling calls off the walked branch) and
    every result line hanging from one of them."""
    chain = read(agent)
    raw = raw_graph(path)
    by_msg: dict[str, list[dict[str, Any]]] = {}
    for o in raw:
        mid = (o.get("message") or {}).get("id")
        if o.get("type") == "assistant" and isinstance(mid, str):
            by_msg.setdefault(mid, []).append(o)
    hanging: dict[str, list[dict[str, Any]]] = {}
    for o in raw:
        if o.get("type") == "user" and any(
            b.get("type") == "tool_result" for b in _blocks(o.get("message"))
        ):
            for key in {o.get("parentUuid"), o.get("sourceToolAssistantUUID")}:
                if isinstance(key, str):
                    hanging.setdefault(key, []).append(o)
    done: set[str] = set()
    entries: list[tuple[str, list[dict[str, Any]]]] = []
    for m in chain:
        if m.uuid in done:
            continue
        mid = (m.message or {}).get("id") if m.type == "assistant" else None
        group = by_msg.get(mid, []) if isinstance(mid, str) else []
        if not group:
            done.add(m.uuid)
            entries.append((m.type, _blocks(m.message)))
            continue
        results = {r["uuid"]: r for a in group for r in hanging.get(a["uuid"], [])}
        order = {o["uuid"]: i for i, o in enumerate(raw)}
        for o in [*group, *sorted(results.values(), key=lambda r: order[r["uuid"]])]:
            if o["uuid"] not in done:
                done.add(o["uuid"])
                entries.append((o["type"], _blocks(o.get("message"))))
    flat: list[tuple[str, list[dict[str, Any]]]] = []
    for role, blocks in entries:
        if role == "assistant":
            # Whitespace-only text is not sent (the API refuses it).
            blocks = [
                b
                for b in blocks
                if not (b.get("type") == "text" and not b.get("text", "x").strip())
            ]
        if flat and flat[-1][0] == role:
            flat[-1][1].extend(blocks)
        else:
            flat.append((role, list(blocks)))
    problems = []
    for i, (role, blocks) in enumerate(flat):
        if role == "assistant":
            calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            nxt = flat[i + 1][1] if i + 1 < len(flat) else []
            got = [b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"]
            problems += [f"messages.{i}: {c} unanswered" for c in calls if c not in got]
        else:
            prev = flat[i - 1][1] if i else []
            calls = {b.get("id") for b in prev if b.get("type") == "tool_use"}
            ids = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            problems += [f"messages.{i}: orphan {r}" for r in ids if r not in calls]
            problems += [f"messages.{i}: duplicate {r}" for r in set(ids) if ids.count(r) > 1]
            kinds = [b.get("type") == "tool_result" for b in blocks]
            if kinds != sorted(kinds, reverse=True):
                problems.append(f"messages.{i}: text before tool_result")
    return problems


@pytest.mark.parametrize("case", M.BROKEN, ids=lambda c: c.name)
def test_repaired_session_reads_whole_in_the_sdk(
    case: M.Case, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = put(config, case.make(), case.agent)
    assert unanswered(p, case.agent), "the SDK reader must see the break before repair"
    before = read(case.agent)
    assert before
    leaf_before = before[-1]
    leaf_had_calls = leaf_before.type == "assistant" and any(
        b.get("type") == "tool_use" for b in _blocks(leaf_before.message)
    )
    assert main(["repair", str(p), "--in-place"]) == 0, capsys.readouterr().err
    after = read(case.agent)
    assert unanswered(p, case.agent) == []
    assert not graph_faults(p)
    if leaf_had_calls:
        # The unanswered call was the leaf: its answers follow it, the last is the leaf.
        uuids = [m.uuid for m in after]
        tail = after[uuids.index(leaf_before.uuid) + 1 :]
        assert tail and all(
            m.type == "user" and all(b["type"] == "tool_result" for b in _blocks(m.message))
            for m in tail
        )
    else:
        assert after[-1].uuid == leaf_before.uuid
    # Nothing the SDK showed is lost but the dropped orphan or duplicate result.
    lost = {m.uuid for m in before} - {m.uuid for m in after}
    assert len(lost) <= 1
    # The backup is not listed as a second session, nor as a second subagent.
    sessions = sdk.list_sessions()
    assert [s.session_id for s in sessions] == [SESSION]
    if case.agent is not None:
        assert sdk.list_subagents(SESSION) == [case.agent]
    # Idempotent, and the repaired file passes check.
    data = p.read_bytes()
    assert main(["repair", str(p), "--in-place"]) == 0
    assert p.read_bytes() == data
    assert main(["check", str(p)]) == 0


@pytest.mark.parametrize("case", [c for c in M.CASES if not c.broken], ids=lambda c: c.name)
def test_valid_sessions_stay_as_the_sdk_reads_them(
    case: M.Case, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = put(config, case.make(), case.agent)
    before = [m.uuid for m in read(case.agent)]
    mtime = p.stat().st_mtime_ns
    assert main(["repair", str(p), "--in-place"]) == 0
    assert p.stat().st_mtime_ns == mtime
    assert [m.uuid for m in read(case.agent)] == before
    assert unanswered(p, case.agent) == []
