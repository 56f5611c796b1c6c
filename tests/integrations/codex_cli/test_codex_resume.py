"""Broken rollouts, repaired by toolpair, resumed by the real Codex CLI (npm) against the
scripted Responses mock: the history Codex sends after the repair is valid for the
Responses API, holds every output the file held, and is what toolpair read from the
file; before the repair, the breaks Codex does not heal are sent as they are.

The rollouts are the real ones of tests/core/data/codex/, broken by codex_mutations,
dropped into a fresh CODEX_HOME under their own sessions/YYYY/MM/DD/ path. Needs
``CODEX_CLI`` (the tox env ``codex-cli-real`` installs the CLI and sets it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import codex_mutations as M
import driver
import pytest
from mock_responses import serving

import toolpair
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
