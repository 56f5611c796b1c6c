"""Runs the real Gemini CLI (``node <bundle>/gemini.js``) headless against `MockGemini`,
in a throwaway home so that nothing of the user's ``~/.gemini`` is read or written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.integrations.gemini_cli.mock_gemini import MockGemini
from tests.support.cli import run_killable

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def cli_js() -> str | None:
    """The CLI's entry point: ``$GEMINI_CLI_JS``, or None when it is not installed."""
    js = os.environ.get("GEMINI_CLI_JS")
    return js if js and Path(js).is_file() else None


def version(js: str) -> tuple[int, ...]:
    """The CLI's version, from the package.json beside its bundle."""
    meta = json.loads((Path(js).parents[1] / "package.json").read_text())
    return tuple(int(x) for x in meta["version"].split("-")[0].split("."))


def prepare(home: Path, project: Path) -> None:
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
    project.mkdir(parents=True, exist_ok=True)


def run(
    js: str,
    home: Path,
    project: Path,
    mock: MockGemini,
    *args: str,
    model: str = "gemini-2.5-flash",
    kill_when: Any = None,
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    """One headless run. ``kill_when(mock)`` true kills the CLI (SIGKILL, as a crash or a
    closed terminal does), to leave a session the way an interrupted one is left."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": mock.url,
        "NO_COLOR": "1",
        "CI": "1",
    }
    cmd = ["node", js, *args, "-m", model, "--approval-mode", "yolo"]
    return run_killable(cmd, cwd=project, env=env, mock=mock, kill_when=kill_when, timeout=timeout)


def sessions(home: Path) -> list[Path]:
    return sorted((home / ".gemini" / "tmp").glob("*/chats/**/*.jsonl"))
