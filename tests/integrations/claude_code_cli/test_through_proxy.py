"""The real Claude Code CLI pointed at `toolpair proxy` (``ANTHROPIC_BASE_URL``), in front
of the local Messages API of test_resume that refuses what the API refuses: every
request arrives valid, its event stream comes back through the proxy, and the session
file itself is left alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolpair
from tests.support.mutations import claude_code as M

from .test_resume import CASES, Api, _install, _resume, _sent_calls


class _At:
    def __init__(self, url: str) -> None:
        self.url = url


@pytest.fixture
def api() -> Api:
    return Api()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_resume_through_the_proxy(case: M.Case, api: Api, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cfg = tmp_path / "cfg"
    project = cfg / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    project.mkdir(parents=True)
    path = project / "3f0c2d4e-1111-4222-8333-444455556666.jsonl"
    _install(path, case.make(), work)
    proxy = subprocess.Popen(
        [sys.executable, "-m", "toolpair", "proxy", "--upstream", api.url, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None
        port = re.search(r"127\.0\.0\.1:(\d+)", proxy.stdout.readline())
        assert port
        done = _resume(_At(f"http://127.0.0.1:{port.group(1)}"), work, cfg)  # type: ignore[arg-type]
    finally:
        proxy.terminate()
        proxy.wait(10)
        api.server.shutdown()
    assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    assert api.bodies and not api.refused
    for body in api.bodies:
        msgs = [m for m in body["messages"] if m.get("role") != "system"]
        assert toolpair.validate({**body, "messages": msgs}, "anthropic") == []
        calls, results = _sent_calls(body)
        assert calls <= results
