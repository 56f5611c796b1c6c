"""Broken rollouts, repaired by toolpair, resumed by the real Codex CLI (npm) against the
scripted Responses mock: the history Codex sends after the repair is valid for the
Responses API, holds every output the file held, and is what toolpair read from the
file; before the repair, the breaks Codex does not heal are sent as they are.

The rollouts are the real ones of tests/core/data/codex/, broken by
tests/support/mutations/codex.py, dropped into a fresh CODEX_HOME under their own
sessions/YYYY/MM/DD/ path. Needs ``CODEX_CLI`` (the tox env ``codex-cli-real`` installs the
CLI and sets it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.integrations.codex_cli import driver
from tests.integrations.codex_cli.mock_responses import serving
from tests.support.mutations import codex as M
from toolpair.cli import main
from toolpair.sessions import get_format

CODEX = driver.cli()
pytestmark = pytest.mark.skipif(CODEX is None, reason="CODEX_CLI: the Codex CLI is not installed")
F = get_format("codex")
RAW = F.raw_view()  # type: ignore[attr-defined]
BASE = M.real("exec")


def place(tmp_path: Path, src: Path, data: bytes, mock: Any) -> tuple[Path, Path, Path]:
    home = tmp_path / "codex-home"
    work = driver.prepare(home, mock)
    rel = src.relative_to(src.parents[4])
    dest = home / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return home, work, dest


def resume(tmp_path: Path, src: Path, data: bytes) -> tuple[list[dict[str, Any]], Path]:
    """Resume ``data`` as the rollout ``src`` (its path names the session)."""
    assert CODEX is not None
    with serving() as mock:
        home, work, dest = place(tmp_path, src, data, mock)
        sid = dest.name.removesuffix(".jsonl").split("-", 6)[-1]
        p = driver.run(CODEX, home, work, mock, "resume", sid, "Go on.")
        assert p.returncode == 0, p.stderr[-3000:]
        return mock.requests, dest


def verdicts(requests: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            v.code
            for v in toolpair.validate(
                r["input"], "openai-responses", model=driver.MODEL, format="openai-responses"
            )
        ]
        for r in requests
    ]


def sent_pairs(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (i["type"], i.get("call_id", ""))
        for i in body["input"]
        if i.get("type") in ("function_call", "function_call_output", "custom_tool_call")
        or i.get("type") == "custom_tool_call_output"
    ]


@pytest.mark.parametrize("name", sorted(M.BREAKS))
def test_a_repaired_rollout_resumes_valid(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = M.BREAKS[name]()
    before, _ = resume(tmp_path / "before", M.source(name), data)
    default_broken = bool(
        toolpair.validate(
            *(lambda ld: (ld.messages, ld.provider))(F.load(data, "x.jsonl")),
            model=driver.MODEL,
            format="openai-responses",
        )
    )
    # What toolpair calls stuck is what Codex sends: refused before repair exactly when
    # the default view says so.
    assert any(verdicts(before)) is default_broken, verdicts(before)
    repaired = tmp_path / "repaired.jsonl"
    repaired.write_bytes(data)
    assert main(["repair", "--raw", str(repaired), "-o", str(repaired)]) == 0
    new = repaired.read_bytes()
    assert new.startswith(data)
    requests, dest = resume(tmp_path / "after", M.source(name), new)
    assert requests and verdicts(requests) == [[] for _ in requests]
    # The first request after the resume sends the history toolpair read, pair for pair.
    expected = RAW.load(new, str(dest)).messages[:-1]
    want = [
        (i["type"], i.get("call_id", ""))
        for i in expected
        if i.get("type") in ("function_call", "function_call_output", "custom_tool_call")
        or i.get("type") == "custom_tool_call_output"
    ]
    assert sent_pairs(requests[0]) == want
    # Codex appended to the repaired file and kept every byte of it.
    assert dest.read_bytes().startswith(new)
    capsys.readouterr()


def test_a_pristine_rollout_resumes_unchanged(tmp_path: Path) -> None:
    data = BASE.read_bytes()
    requests, dest = resume(tmp_path, BASE, data)
    assert verdicts(requests) == [[] for _ in requests]
    assert dest.read_bytes().startswith(data)


def _cmd(*args: str) -> int:
    return main(list(args))


def test_repaired_in_its_own_codex_home(tmp_path: Path) -> None:
    """The rollout repaired where Codex keeps it, beside the state and history databases
    it has already indexed it in: the appended lines reach the next resume."""
    assert CODEX is not None
    with serving() as mock:
        home = tmp_path / "codex-home"
        work = driver.prepare(home, mock)
        call = 'CALL:[{"name": "exec_command", "args": {"cmd": "sleep 30"}}]'
        driver.run(CODEX, home, work, mock, call, kill_when=lambda m: len(m.requests) >= 1)
        (rollout,) = driver.rollouts(home)
        data = rollout.read_bytes()
        dbs = {p.name: p.read_bytes() for p in home.glob("*.sqlite")}
        assert "state_5.sqlite" in dbs
        assert _cmd("repair", "--raw", str(rollout), "--in-place") == 0
        assert rollout.read_bytes().startswith(data)
        assert {p.name: p.read_bytes() for p in home.glob("*.sqlite")} == dbs
        sid = rollout.name.removesuffix(".jsonl").split("-", 6)[-1]
        seen = len(mock.requests)
        p = driver.run(CODEX, home, work, mock, "resume", sid, "Go on.")
        assert p.returncode == 0, p.stderr[-3000:]
        sent = mock.requests[seen]
        outputs = [i for i in sent["input"] if i.get("type") == "function_call_output"]
        assert len(outputs) == 1 and "added by toolpair repair" in outputs[0]["output"]
        assert verdicts(mock.requests[seen:]) == [[] for _ in mock.requests[seen:]]


def test_a_history_replacement_reaches_the_resume_in_its_own_codex_home(tmp_path: Path) -> None:
    """An output written twice in the rollout Codex has indexed: Codex sends both; the
    appended compacted line (Codex's own replacement) makes the next resume send one."""
    assert CODEX is not None
    with serving() as mock:
        home = tmp_path / "codex-home"
        work = driver.prepare(home, mock)
        call = 'CALL:[{"name": "exec_command", "args": {"cmd": "echo one"}}]'
        assert driver.run(CODEX, home, work, mock, call).returncode == 0
        (rollout,) = driver.rollouts(home)
        lines = [json.loads(x) for x in rollout.read_bytes().splitlines()]
        out = next(o for o in lines if o["payload"].get("type") == "function_call_output")
        again = {**out, "ordinal": lines[-1]["ordinal"] + 1}
        rollout.write_bytes(rollout.read_bytes() + json.dumps(again).encode() + b"\n")
        sid = rollout.name.removesuffix(".jsonl").split("-", 6)[-1]
        seen = len(mock.requests)
        assert driver.run(CODEX, home, work, mock, "resume", sid, "Go on.").returncode == 0
        assert verdicts(mock.requests[seen : seen + 1]) != [[]], "the repeat reaches the wire"
        data = rollout.read_bytes()
        assert _cmd("repair", str(rollout), "--in-place") == 0
        assert rollout.read_bytes().startswith(data)
        seen = len(mock.requests)
        p = driver.run(CODEX, home, work, mock, "resume", sid, "And now.")
        assert p.returncode == 0, p.stderr[-3000:]
        assert verdicts(mock.requests[seen:]) == [[] for _ in mock.requests[seen:]]
        outs = [i for i in mock.requests[seen]["input"] if i.get("type") == "function_call_output"]
        assert len(outs) == 1 and "Process exited" in outs[0]["output"]


CHAT_CLI = driver.chat_cli()


@pytest.mark.skipif(CHAT_CLI is None, reason="CODEX_CLI_CHAT: no Codex CLI that speaks chat")
def test_a_chat_completions_upstream_is_judged_by_its_own_rules(tmp_path: Path) -> None:
    """A provider on ``wire_api = "chat"`` (Bedrock, Kimi through a chat proxy), with the
    last CLI that speaks it: an output written after the next prompt is sent where the
    chat rules refuse it; toolpair, reading the provider's wire API from config.toml,
    says so, and refuses to write a repair that CLI would not replay (exit 1)."""
    assert CHAT_CLI is not None
    with serving() as mock:
        home = tmp_path / "codex-home"
        work = driver.prepare(home, mock, wire_api="chat", model="kimi-k2")
        assert driver.run(CHAT_CLI, home, work, mock, "SHELL:echo one").returncode == 0
        (rollout,) = driver.rollouts(home)
        sid = rollout.name.removesuffix(".jsonl").split("-", 6)[-1]
        assert driver.run(CHAT_CLI, home, work, mock, "resume", sid, "Next.").returncode == 0
        assert _cmd("check", str(rollout)) == 0
        objs = [json.loads(x) for x in rollout.read_bytes().splitlines()]
        out = objs.pop(
            next(
                k for k, o in enumerate(objs) if o["payload"].get("type") == "function_call_output"
            )
        )
        last_user = max(
            k
            for k, o in enumerate(objs)
            if o["type"] == "response_item" and o["payload"].get("role") == "user"
        )
        objs.insert(last_user + 1, out)
        data = b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objs)
        rollout.write_bytes(data)
        seen = len(mock.requests)
        assert driver.run(CHAT_CLI, home, work, mock, "resume", sid, "Again.").returncode == 0
        sent = mock.requests[seen]["messages"]
        codes = [
            v.code for v in toolpair.validate(sent, "openai", model="kimi-k2", format="openai")
        ]
        assert "openai.unexpected_tool_message" in codes
        assert _cmd("check", str(rollout)) == 1
        now = rollout.read_bytes()
        assert _cmd("repair", str(rollout), "--in-place") == 1
        assert rollout.read_bytes() == now
