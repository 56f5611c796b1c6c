"""Running a real coding agent's CLI (installed from npm by its tox env) against a
scripted local API, and killing it mid-run the way a crash or a closed terminal does."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

M = TypeVar("M")


def run_killable(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    mock: M,
    kill_when: Callable[[M], bool] | None = None,
    timeout: float = 90,
    stdin: Any = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in a session of its own (the CLIs relaunch themselves in a child, so
    the whole group is killed). ``kill_when(mock)`` true kills it with SIGKILL a second
    later, to leave a session the way an interrupted one is left."""
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    if kill_when is not None:
        end = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < end:
            if kill_when(mock):
                time.sleep(1.0)
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.1)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
