"""Records the Codex rollout fixtures of tests/core/data/codex/ with the real CLI.

    CODEX_CLI=/path/to/node_modules/@openai/codex/bin/codex.js \
        python -m tests.integrations.codex_cli.record

Each scenario runs in a throwaway CODEX_HOME against the scripted mock; the rollout is
copied unchanged, under its own sessions/YYYY/MM/DD/ path.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from tests.integrations.codex_cli import driver
from tests.integrations.codex_cli.mock_responses import serving

HERE = Path(__file__).parent

OUT = HERE.parents[1] / "core" / "data" / "codex"


def _call(name: str, **args: object) -> str:
    return "CALL:" + json.dumps([{"name": name, "args": args}])


def _calls(*calls: tuple[str, dict[str, object]]) -> str:
    return "CALL:" + json.dumps([{"name": n, "args": a} for n, a in calls])


PATCH = """PATCH:*** Begin Patch
*** Add File: hello.txt
+hello from the mock
*** End Patch"""


def scenario(name: str, runs: list[tuple[list[str], object]]) -> None:
    with tempfile.TemporaryDirectory(prefix="toolpair-codex-") as tmp:
        home = Path(tmp) / "codex-home"
        with serving() as mock:
            work = driver.prepare(home, mock)
            codex = driver.cli()
            assert codex is not None, "set CODEX_CLI"
            for args, kill in runs:
                if args and args[0] == "resume":
                    (rollout,) = driver.rollouts(home)
                    sid = rollout.stem.split("-", 6)[-1]
                    args = ["resume", sid, *args[1:]]
                p = driver.run(codex, home, work, mock, *args, kill_when=kill)  # type: ignore[arg-type]
                print(name, args[:2], "rc", p.returncode, file=sys.stderr)
        dest = OUT / name
        shutil.rmtree(dest, ignore_errors=True)
        for r in driver.rollouts(home):
            target = dest / r.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(r, target)


def _sleeping(mock: object) -> bool:
    reqs = getattr(mock, "requests", [])
    return len(reqs) >= 1


def main() -> None:
    scenario(
        "exec",
        [
            ([_call("exec_command", cmd="echo one")], None),
            (
                [
                    "resume",
                    _calls(
                        ("exec_command", {"cmd": "echo two"}),
                        ("exec_command", {"cmd": "echo three"}),
                    ),
                ],
                None,
            ),
        ],
    )
    scenario("patch", [([PATCH], None)])
    scenario("killed", [([_call("exec_command", cmd="sleep 30")], _sleeping)])


if __name__ == "__main__":
    main()
