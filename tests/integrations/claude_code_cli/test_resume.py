"""`claude -p --resume` (the real Claude Code CLI from npm) against a local Messages API
that checks every request with toolpair's anthropic rules.

Recent Claude Code heals a broken history in memory before sending it: it drops the
assistant turn whose calls were never answered, so the request passes but the turn is
lost. After `toolpair repair --in-place` the same resume sends a request that keeps
every call of the session, each answered.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.support.mutations import claude_code as M
from tests.support.replies import anthropic_events, sse
from toolpair.cli import main
from toolpair.sessions import claude_code

CLI = os.environ.get("CLAUDE_CODE_CLI", "")
SESSION = "3f0c2d4e-1111-4222-8333-444455556666"


def _sse(text: str) -> bytes:
    return sse(anthropic_events(text, id="msg_local")).encode()


class Api:
    """A local Messages API: 400 with the API's wording when toolpair finds a violation."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[str] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._send(200, "application/json", b'{"input_tokens": 1}')
                    return
                api.bodies.append(body)
                # Newer clients put the environment in a system-role message, which the
                # anthropic codec does not read; pairing is about the others.
                msgs = [m for m in body["messages"] if m.get("role") != "system"]
                vs = toolpair.validate({**body, "messages": msgs}, "anthropic")
                if vs:
                    api.refused.append(vs[0].message)
                    err = {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": vs[0].message},
                    }
                    self._send(400, "application/json", json.dumps(err).encode())
                    return
                self._send(200, "text/event-stream", _sse("Resumed."))

            def _send(self, code: int, ctype: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def api() -> Iterator[Api]:
    a = Api()
    yield a
    a.server.shutdown()


def _lines(data: bytes, work: Path) -> str:
    """The session as if it had been written in ``work`` under ``SESSION``."""
    out = []
    for raw in data.splitlines():
        o = json.loads(raw)
        if "cwd" in o:
            o["cwd"] = str(work)
        if "sessionId" in o:
            o["sessionId"] = SESSION
        out.append(json.dumps(o, separators=(",", ":"), ensure_ascii=False) + "\n")
    return "".join(out)


def _install(path: Path, data: bytes, work: Path) -> None:
    path.write_text(_lines(data, work), "utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))


def _resume(api: Api, work: Path, cfg: Path) -> subprocess.CompletedProcess[str]:
    if not CLI or not Path(CLI).exists():
        pytest.fail("CLAUDE_CODE_CLI must name Claude Code's cli-wrapper.cjs (tox installs it)")
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(cfg),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-local",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
    }
    return subprocess.run(
        ["node", CLI, "-p", "--resume", SESSION, "continue"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _results(body: dict[str, Any]) -> list[str]:
    """Every tool_result id of a request, repeats included."""
    out = []
    for m in body["messages"]:
        c = m.get("content")
        out += [
            b["tool_use_id"]
            for b in (c if isinstance(c, list) else [])
            if b.get("type") == "tool_result"
        ]
    return sorted(out)


def _sent_calls(body: dict[str, Any]) -> tuple[set[str], set[str]]:
    calls: set[str] = set()
    results: set[str] = set()
    for m in body["messages"]:
        c = m.get("content")
        for b in c if isinstance(c, list) else []:
            if b.get("type") == "tool_use":
                calls.add(b["id"])
            elif b.get("type") == "tool_result":
                results.add(b["tool_use_id"])
    return calls, results


CASES = [c for c in M.BROKEN if c.agent is None]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_resume_after_repair_keeps_every_call_answered(
    case: M.Case, api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cfg = tmp_path / "cfg"
    project = cfg / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    project.mkdir(parents=True)
    path = project / f"{SESSION}.jsonl"
    _install(path, case.make(), work)
    broken = claude_code.read_session(str(path))
    file_calls = {c for m in broken.messages for e in m.entries for c in e.call_ids()}
    file_results = sorted(r for m in broken.messages for e in m.entries for r in e.result_ids())

    before = _resume(api, work, cfg)
    assert api.bodies, before.stderr
    sent_calls, _ = _sent_calls(api.bodies[-1])
    # Unrepaired, the request is refused, or Claude Code changed the history on the way:
    # a call turn dropped, results made up, or results of the file left out.
    assert api.refused or sent_calls != file_calls or _results(api.bodies[-1]) != file_results

    # Resume appended to the file: start again from the broken session, and repair it.
    _install(path, case.make(), work)
    api.bodies.clear()
    api.refused.clear()
    assert main(["repair", str(path), "--in-place"]) == 0, capsys.readouterr().err
    repaired = claude_code.read_session(str(path))
    kept = {c for m in repaired.messages for e in m.entries for c in e.call_ids()}
    answered = {r for m in repaired.messages for e in m.entries for r in e.result_ids()}
    after = _resume(api, work, cfg)
    assert after.returncode == 0, after.stderr
    assert "Resumed." in after.stdout
    assert api.bodies and not api.refused
    calls, results = _sent_calls(api.bodies[-1])
    assert kept <= calls, "every call of the repaired session reaches the model"
    assert calls <= results, "each one answered"
    assert results <= answered, "by the results the file holds, none made up on the way"
