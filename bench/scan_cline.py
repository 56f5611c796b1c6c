"""Throughput of scanning Cline-family task folders on a generated tree.

    python bench/scan_cline.py                  # 10,000 task folders
    python bench/scan_cline.py --tasks 2000 --jobs 2

The tree is made from the task folders in tests/core/data/cline (a Cline task, a Roo
task, a condensed Roo task, each with its companions), spread over the globalStorage
folders of the four family members: each task is one of them with fresh tool ids and
``ts`` values, one in twenty broken (the last result cut). Figures: folders/s of the
format's own walk, read and judge in one process (what ``scan`` does per file), and the
wall clock of the whole ``toolpair scan --agent cline`` command when it is available.
Timings are a measurement to report, not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import toolpair
from toolpair.sessions import get_format

DATA = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "cline"
SOURCES = [
    DATA / "saoudrizwan.claude-dev" / "tasks" / "1783376868634",
    DATA / "rooveterinaryinc.roo-cline" / "tasks" / "0198a3c4-5b6e-7f80-9a1b-2c3d4e5f6071",
    DATA / "rooveterinaryinc.roo-cline" / "tasks" / "0198a3c4-5b6e-7f80-9a1b-2c3d4e5f6072",
]
STORAGES = {
    "saoudrizwan.claude-dev": 0,
    "rooveterinaryinc.roo-cline": 1,
    "zoocodeorganization.zoo-code": 2,
    "kilocode.kilo-code": 1,
}
TASK = "api_conversation_history.json"


def _renamed(history: list[Any], n: int, rng: random.Random) -> list[Any]:
    table: dict[str, str] = {}
    shift = rng.randrange(1, 10**9)
    out = []
    for m in history:
        m = dict(m)
        if isinstance(m.get("ts"), int):
            m["ts"] += shift
        content = []
        for b in m["content"]:
            b = dict(b)
            for key in ("id", "tool_use_id"):
                v = b.get(key)
                if isinstance(v, str) and v.startswith("toolu_"):
                    b[key] = table.setdefault(v, f"toolu_{n:06d}_{len(table):04d}")
            content.append(b)
        m["content"] = content
        out.append(m)
    return out


def make_tree(root: Path, tasks: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    histories = [json.loads((s / TASK).read_bytes()) for s in SOURCES]
    storages = list(STORAGES.items())
    broken = 0
    for n in range(tasks):
        storage, kind = storages[n % len(storages)]
        src = SOURCES[kind if n % 3 else (2 if kind else 0)]
        history = _renamed(histories[SOURCES.index(src)], n, rng)
        if n % 20 == 0:
            while history[-1]["role"] != "assistant" or not any(
                b.get("type") == "tool_use" for b in history[-1]["content"]
            ):
                history.pop()
            history[-1]["content"] = history[-1]["content"] + [
                {"type": "tool_use", "id": f"toolu_{n:06d}_cut", "name": "editor", "input": {}}
            ]
            if history[-2]["role"] == "user":
                history.append({"role": "user", "content": [{"type": "text", "text": "go on"}]})
            broken += 1
        task = root / storage / "tasks" / f"{1783376868634 + n}"
        task.mkdir(parents=True)
        (task / TASK).write_bytes(
            json.dumps(history, ensure_ascii=False, separators=(",", ":")).encode()
        )
        for companion in ("ui_messages.json", "history_item.json", "context_history.json"):
            if (src / companion).exists():
                shutil.copyfile(src / companion, task / companion)
    return broken


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    fmt = get_format("cline")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        broken = make_tree(root, args.tasks)
        size = sum(p.stat().st_size for p in root.rglob(TASK))
        print(
            f"tree: {args.tasks} task folders ({broken} broken), {size / 1e6:.0f} MB of "
            f"histories, made in {time.perf_counter() - t0:.1f}s"
        )
        t0 = time.perf_counter()
        files = list(fmt.session_files(root))
        walk = time.perf_counter() - t0
        bad = 0
        t1 = time.perf_counter()
        for p in files:
            loaded = fmt.load(p.read_bytes(), str(p))
            if toolpair.validate(loaded.messages, "anthropic", model=loaded.model):
                bad += 1
        judged = time.perf_counter() - t1
        total = walk + judged
        print(
            f"format, one process: {len(files)} folders found in {walk:.2f}s, read and judged "
            f"in {judged:.2f}s: {len(files) / total:.0f} folders/s, {size / 1e6 / total:.0f} "
            f"MB/s; {bad} with violations"
        )
        cmd = [sys.executable, "-m", "toolpair", "scan", "--agent", "cline", str(root)]
        cmd += ["--jobs", str(args.jobs), "--json"]
        t0 = time.perf_counter()
        run = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if run.returncode in (0, 1):
            report = json.loads(run.stdout)
            print(
                f"toolpair scan --agent cline --jobs {args.jobs}: {wall:.2f}s wall, "
                f"{args.tasks / wall:.0f} folders/s; {report['scanned']} scanned, "
                f"{len(report['broken'])} broken, {len(report['unreadable'])} unreadable "
                f"(exit {run.returncode})"
            )
        else:
            print(f"toolpair scan --agent cline: not available here (exit {run.returncode})")


if __name__ == "__main__":
    main()
