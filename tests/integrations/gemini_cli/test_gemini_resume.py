"""Broken sessions, repaired by toolpair, resumed by the real Gemini CLI (npm) against
the scripted mock: before repair the CLI sends what Gemini refuses; after it, every
request is valid for Gemini and the file's own results reach the model.

The sessions are the real ones in tests/core/data/gemini_cli/, broken by
tests/support/mutations/gemini_cli.py, dropped into a project the CLI knows. Needs
``GEMINI_CLI_JS`` (the tox env ``gemini-cli-real`` installs the CLI and sets it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.integrations.gemini_cli import driver
from tests.integrations.gemini_cli.mock_gemini import serve
from tests.support.mutations import gemini_cli as M
from toolpair.sessions import get_format
from toolpair.sessions.gemini_cli import CANCELLED

JS = driver.cli_js()
pytestmark = pytest.mark.skipif(JS is None, reason="GEMINI_CLI_JS: the Gemini CLI is not installed")
F = get_format("gemini-cli")
MODEL = "gemini-2.5-flash"


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home and project the CLI has seen (one text-only run registered it), its own
    session removed: ``chats`` is where a session file is dropped to be resumed."""
    home, project = tmp_path / "home", tmp_path / "project"
    driver.prepare(home, project)
    assert JS is not None
    with serve() as mock:
        p = driver.run(JS, home, project, mock, "-p", "Hi.", model=MODEL)
        assert p.returncode == 0, p.stderr[-2000:]
    (own,) = driver.sessions(home)
    own.unlink()
    return home, project, own.parent


def _resume(home: Path, project: Path) -> list[dict[str, Any]]:
    assert JS is not None
    with serve() as mock:
        p = driver.run(JS, home, project, mock, "--resume", "latest", "-p", "Go on.", model=MODEL)
        assert p.returncode in (0, 1), p.stderr[-2000:]
        return mock.chat_requests()


def _verdicts(requests: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [v.code for v in toolpair.validate(r["contents"], "gemini", model=MODEL, format="gemini")]
        for r in requests
    ]


def _parts(messages: list[Any], kind: str) -> list[str]:
    """Every ``kind`` part of ``messages`` (functionCall or functionResponse), as text
    without its id (the CLI rewrites the ids it sends), sorted."""
    out = []
    for m in messages:
        for p in m.get("parts") or []:
            if kind in p:
                body = {k: v for k, v in p[kind].items() if k != "id"}
                out.append(json.dumps(body, sort_keys=True))
    return sorted(out)


BREAKS: dict[str, Callable[[], bytes]] = {
    "dangling-end": M.dangling_end,
    "mid-history": M.mid_history,
    "parallel-batch": lambda: M.mid_history(which=[1]),
    "set-messages": lambda: M.set_messages(M.PARALLEL.read_bytes()),
    "rewind": lambda: M.rewind_after(
        M.mid_history(), [o for o in M.objs(M.mid_history()) if o.get("type") == "user"][-1]["id"]
    ),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_repaired_session_resumes_clean(name: str, place: tuple[Path, Path, Path]) -> None:
    assert JS is not None
    if name == "set-messages" and driver.version(JS) < (0, 44):
        # Before 0.44 the CLI wrote no $set.messages, and read the last one whole,
        # ignoring records after it: its files never hold this case.
        pytest.skip("$set.messages checkpoints come from Gemini CLI 0.44 and later")
    home, project, chats = place
    broken = BREAKS[name]()
    session = chats / M.PARALLEL.name
    # As broken, the CLI sends the history Gemini refuses.
    session.write_bytes(broken)
    before = _resume(home, project)
    assert before and _verdicts(before)[0], "the break reaches the wire"

    session.write_bytes(broken)
    loaded = F.load(broken, str(session))
    plan = F.plan(loaded, broken, None)
    assert plan is not None and plan.fixes >= 1
    assert plan.data.startswith(broken)
    session.write_bytes(plan.data)
    after = _resume(home, project)
    assert after, "the CLI sent the resumed history"
    assert _verdicts(after) == [[] for _ in after]
    _same_calls_and_results(broken, plan.data, after[0]["contents"])


def _refused_then_clean(
    home: Path, project: Path, session: Path, data: bytes, why: str
) -> tuple[Any, list[Any]]:
    """Resume ``data`` as written (the API refuses what the CLI sends: ``why``), then
    repaired by an append (every request then valid): the plan and what was sent."""
    session.write_bytes(data)
    before = _resume(home, project)
    assert before and _verdicts(before)[0], why
    session.write_bytes(data)
    plan = F.plan(F.load(data, str(session)), data, None)
    assert plan is not None and plan.data.startswith(data)
    session.write_bytes(plan.data)
    after = _resume(home, project)
    assert after and _verdicts(after) == [[] for _ in after]
    return plan, after


def _same_calls_and_results(
    broken: bytes, fixed: bytes, sent: list[Any], cancelled: bool = True
) -> None:
    """The file's own results reach the model, the repaired calls answer as cancelled,
    and the calls and responses sent are exactly those toolpair read from the file."""
    real = _parts(F.load(broken, "x.jsonl").messages, "functionResponse")
    got = _parts(sent, "functionResponse")
    assert all(r in got for r in real)
    assert any(CANCELLED in r for r in got) == cancelled
    judged = F.load(fixed, "x.jsonl").messages
    assert got == _parts(judged, "functionResponse")
    assert _parts(sent, "functionCall") == _parts(judged, "functionCall")


@pytest.mark.parametrize("resumed", [False, True], ids=["first-run", "resumed"])
def test_doubled_responses_resume_clean(resumed: bool, place: tuple[Path, Path, Path]) -> None:
    """A session 0.61 wrote: each tool response recorded twice, sent twice on resume
    (google-gemini/gemini-cli#29365); after repair every response goes once."""
    assert JS is not None
    if driver.version(JS) < (0, 44):
        pytest.skip("a file of Gemini CLI 0.61, resumed by a CLI before 0.44")
    home, project, chats = place
    real = M.DOUBLING.read_bytes()
    data = real if resumed else M.first_run(real)
    plan, after = _refused_then_clean(
        home, project, chats / M.DOUBLING.name, data, "the doubled turn reaches the wire"
    )
    _same_calls_and_results(data, plan.data, after[0]["contents"], cancelled=False)


def test_legacy_json_session_resumes_clean(place: tuple[Path, Path, Path]) -> None:
    home, project, chats = place
    doc = M.legacy_document(M.mid_history())
    legacy = chats / M.PARALLEL.with_suffix(".json").name
    loaded = F.load(doc, str(legacy))
    plan = F.plan(loaded, doc, None)
    assert plan is not None and plan.fixes == 1
    legacy.write_bytes(plan.data)
    after = _resume(home, project)
    assert after and _verdicts(after) == [[] for _ in after]
    _same_calls_and_results(doc, plan.data, after[0]["contents"])


@pytest.mark.parametrize(
    "make", [M.stray_response, M.compression_split], ids=["stray-response", "compression-split"]
)
def test_a_response_whose_call_is_gone_resumes_clean(
    make: Callable[[], bytes], place: tuple[Path, Path, Path]
) -> None:
    """A record copy cannot take a response out; the appended $set.messages (read from
    0.44 on) does, and the CLI sends every other response."""
    assert JS is not None
    if driver.version(JS) < (0, 44):
        pytest.skip("$set.messages is read by Gemini CLI 0.44 and later")
    home, project, chats = place
    data = make()
    plan, after = _refused_then_clean(
        home, project, chats / M.PARALLEL.name, data, "the stray response reaches the wire"
    )
    judged = F.load(plan.data, "x.jsonl").messages
    assert _parts(after[0]["contents"], "functionResponse") == _parts(judged, "functionResponse")
    assert _parts(after[0]["contents"], "functionCall") == _parts(judged, "functionCall")
