"""Runs the real Codex CLI (``codex exec``, the native binary of the npm package)
against `MockResponses`, in a throwaway ``CODEX_HOME`` so that nothing of the user's
``~/.codex`` is read or written."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.integrations.codex_cli.mock_responses import MockResponses
from tests.support.cli import run_killable

MODEL = "gpt-5.5"


def cli() -> str | None:
    """The CLI: ``$CODEX_CLI`` (the npm package's ``bin/codex.js``), or None."""
    path = os.environ.get("CODEX_CLI")
    return path if path and Path(path).is_file() else None


def chat_cli() -> str | None:
    """A Codex CLI that still speaks Chat Completions (``wire_api = "chat"``, refused from
    0.171): ``$CODEX_CLI_CHAT``, or None."""
    path = os.environ.get("CODEX_CLI_CHAT")
    return path if path and Path(path).is_file() else None


def prepare(
    home: Path, mock: MockResponses, *, wire_api: str = "responses", model: str = MODEL
) -> Path:
    """A CODEX_HOME whose config sends every request to the mock; the work folder."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "mock"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "[model_providers.mock]\n"
        'name = "mock"\n'
        f'base_url = "{mock.base_url}"\n'
        f'wire_api = "{wire_api}"\n'
        'env_key = "MOCK_API_KEY"\n'
    )
    work = home.parent / "work"
    work.mkdir(exist_ok=True)
    return work


def run(
    codex: str,
    home: Path,
    work: Path,
    mock: MockResponses,
    *args: str,
    kill_when: Callable[[MockResponses], bool] | None = None,
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    """``codex exec --skip-git-repo-check ARGS``. ``kill_when(mock)`` true kills the CLI
    (SIGKILL of its process group, as a crash or a closed terminal does)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.parent),
        "CODEX_HOME": str(home),
        "MOCK_API_KEY": "test-key",
        "NO_COLOR": "1",
        "RUST_LOG": "warn",
    }
    cmd = [codex, "exec", "--skip-git-repo-check", *args]
    if codex.endswith(".js"):
        cmd.insert(0, "node")
    return run_killable(
        cmd,
        cwd=work,
        env=env,
        mock=mock,
        kill_when=kill_when,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def rollouts(home: Path) -> list[Path]:
    return sorted((home / "sessions").rglob("rollout-*.jsonl"))
