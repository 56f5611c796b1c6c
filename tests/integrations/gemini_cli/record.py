"""Records the Gemini CLI fixtures in tests/core/data/gemini_cli/ with the real CLI.

    GEMINI_CLI_JS=.../node_modules/@google/gemini-cli/bundle/gemini.js \
        python -m tests.integrations.gemini_cli.record [--doubling]

Each scenario runs in a fresh home under /tmp/toolpair-gemini/<scenario>/ against the
scripted mock (mock_gemini.py) and copies every file the CLI wrote under
``~/.gemini/tmp`` into tests/core/data/gemini_cli/<scenario>/. ``--doubling`` records
the one scenario kept from a CLI of 0.44 or later (pass that CLI's GEMINI_CLI_JS).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from tests.integrations.gemini_cli import driver
from tests.integrations.gemini_cli.mock_gemini import MockGemini, serve

OUT = Path(__file__).resolve().parents[2] / "core" / "data" / "gemini_cli"
BASE = Path("/tmp/toolpair-gemini")


def calls(*pairs: tuple[str, dict[str, object]]) -> str:
    return "CALL:" + json.dumps([{"name": n, "args": a} for n, a in pairs])


def _keep(name: str, home: Path) -> None:
    dest = OUT / name
    shutil.rmtree(dest, ignore_errors=True)
    root = home / ".gemini" / "tmp"
    for f in sorted(root.rglob("*")):
        if f.is_file() and (f.suffix in (".jsonl", ".json")) and f.name != "logs.json":
            target = dest / f.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            print("kept", target.relative_to(OUT))


def _after(seen: int) -> Callable[[MockGemini], bool]:
    """True once the mock has answered a request past the first ``seen``."""
    return lambda m: len(m.requests) > seen


def scenario(name: str, js: str, steps: list[dict[str, object]]) -> None:
    base = BASE / name
    shutil.rmtree(base, ignore_errors=True)
    home, project = base / "home", base / "project"
    driver.prepare(home, project)
    (project / "notes.txt").write_text("alpha beta\n")
    with serve() as mock:
        for step in steps:
            args = list(step["args"])  # type: ignore[call-overload]
            kill = step.get("kill")
            seen = len(mock.requests)
            p = driver.run(
                js,
                home,
                project,
                mock,
                *args,
                model=str(step.get("model", "gemini-2.5-flash")),
                kill_when=_after(seen) if kill else None,
            )
            print(name, args[-1][:60], "->", p.returncode)
    _keep(name, home)


def main() -> None:
    js = driver.cli_js()
    if js is None:
        sys.exit("set GEMINI_CLI_JS to the CLI's bundle/gemini.js")
    parallel = calls(
        ("read_file", {"file_path": "notes.txt"}), ("list_directory", {"dir_path": "."})
    )
    shell = calls(("run_shell_command", {"command": "echo hi", "description": "say hi"}))
    look: dict[str, object] = {"args": ["-p", f"Look. {parallel}"]}

    def resume(prompt: str, **step: object) -> dict[str, object]:
        return {"args": ["--resume", "latest", "-p", prompt], **step}

    if "--checkpoint" in sys.argv:
        # 0.61: `/chat save` after a resume (the CLI exits 42 after saving: the command's
        # result is not shown in non-interactive mode; the checkpoint is written).
        scenario("checkpoint", js, [look, resume("Next."), resume("/chat save after-resume")])
        return
    if "--doubling" in sys.argv:
        scenario("doubling", js, [look, resume("Next.")])
        return
    scenario("parallel", js, [look, resume(f"Now this. {shell}")])
    scenario("gemini3", js, [look | {"model": "gemini-3-flash-preview"}])
    inner = "Do it. " + calls(("list_directory", {"dir_path": "."}))
    scenario(
        "subagent",
        js,
        [
            {
                "args": [
                    "-p",
                    "Delegate. "
                    + calls(("invoke_agent", {"agent_name": "generalist", "prompt": inner})),
                ]
            }
        ],
    )
    sleep = calls(
        ("read_file", {"file_path": "notes.txt"}),
        ("run_shell_command", {"command": "sleep 30", "description": "wait"}),
    )
    scenario("killed", js, [look, resume(f"Wait. {sleep}", kill=True)])


if __name__ == "__main__":
    main()
