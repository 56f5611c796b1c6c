"""Throughput of a session scan, per agent format, on a generated tree of sessions.

    python bench/scan_sessions.py --agent gemini-cli              # 10,000 sessions
    python bench/scan_sessions.py --agent gemini-cli --sessions 2000
    python bench/scan_sessions.py --agent codex                   # 10,000 rollouts

Gemini CLI: the tree is ``<root>/<project>/chats/session-*.jsonl`` made from the real
session in tests/core/data/gemini_cli/parallel (written by the CLI), each session that
conversation's records with fresh ids, grown to 2-30 turns, with the CLI's own
``$set`` lines and in-place record updates; one in twenty is broken (its last batch left
without results); every tenth project also holds a ``checkpoint-<tag>.json``, a
backup and a temporary file the scan must not list. Figures: files/s and MB/s of

- the format alone, in this process (``session_files``, ``load_path`` and the rules
  on every file: the work scan does per file), and
- ``toolpair scan --agent <name> <root> --json`` as a command, where it exists.

Codex CLI: the tree is ``<root>/sessions/2026/01/DD/rollout-*.jsonl`` made from the
real rollout in tests/core/data/codex/exec (written by codex-cli 0.171.0), each rollout
its first turn and 1-9 more turns like its second (a parallel batch of two shell calls),
every item and call id made unique, ordinals renumbered; one in twenty is broken as
Codex sends it (an output written twice), one in twenty holds a call cut off at the end
(healed by Codex on resume: not broken), and every hundredth folder holds a ``.bak``.
For Codex the command is also timed without ``--agent`` (every file's format detected).

Timings are wall clock (a measurement to report, not a test).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import toolpair
from toolpair.sessions import get_format

DATA = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "gemini_cli"
CODEX = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "codex" / "exec"


def _js(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _gemini_session(rng: random.Random, turns: int, broken: bool) -> tuple[str, list[str]]:
    src = next((DATA / "parallel").rglob("session-*.jsonl"))
    objs = [json.loads(x) for x in src.read_bytes().splitlines() if x.strip()]
    meta = dict(objs[0])
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    meta["sessionId"] = sid
    user = next(o for o in objs if o.get("type") == "user")
    call = next(o for o in objs if o.get("type") == "gemini" and o.get("toolCalls"))
    text = next(o for o in objs if o.get("type") == "gemini" and o.get("content"))
    lines = [_js(meta)]
    for t in range(turns):
        u = {**user, "id": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
        c = json.loads(_js(call))
        c["id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        for k, tc in enumerate(c["toolCalls"]):
            tid = f"{tc['name']}__{tc['name']}_{rng.getrandbits(40)}_{k}"
            tc["id"] = tid
            for part in tc.get("result") or []:
                part["functionResponse"]["id"] = tid
        bare = {k: v for k, v in c.items() if k != "toolCalls"}
        lines += [_js(u), _js({"$set": {"lastUpdated": u["timestamp"]}}), _js(bare)]
        last = broken and t == turns - 1
        if last:
            for tc in c["toolCalls"]:
                tc.pop("result", None)
                tc["status"] = "executing"
        lines.append(_js(c))
        if not last:
            x = {**text, "id": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
            lines += [_js(x), _js({"$set": {"lastUpdated": x["timestamp"]}})]
    return sid, lines


def make_gemini_tree(root: Path, sessions: int) -> tuple[int, int, int]:
    """Bytes, broken sessions and files written that are not sessions."""
    rng = random.Random(27)
    size = broken = decoys = 0
    per_project = 100
    for i in range(sessions):
        project = root / f"project-{i // per_project:03d}"
        chats = project / "chats"
        chats.mkdir(parents=True, exist_ok=True)
        bad = i % 20 == 19
        sid, lines = _gemini_session(rng, rng.randint(2, 30), bad)
        data = ("\n".join(lines) + "\n").encode()
        path = chats / f"session-2026-01-{1 + i % 28:02d}T10-{i % 60:02d}-{sid[:8]}.jsonl"
        path.write_bytes(data)
        size += len(data)
        broken += bad
        if i % per_project == 0 and i // per_project % 10 == 0:
            (project / "checkpoint-saved.json").write_text(
                json.dumps({"history": [{"role": "user", "parts": [{"text": "hi"}]}]}, indent=2)
            )
            (chats / (path.name + ".bak")).write_bytes(data)
            (chats / f".{path.name}.x1.tmp").write_bytes(data)
            (project / "logs.json").write_text("[]")
            decoys += 3
    return size, broken, decoys


def _codex_lines(i: int, turns: int, broken: bool, cut: bool) -> list[str]:
    src = next(CODEX.rglob("rollout-*.jsonl"))
    objs = [json.loads(x) for x in src.read_bytes().splitlines() if x.strip()]
    second = next(
        k
        for k, o in enumerate(objs)
        if k and o["type"] == "event_msg" and o["payload"].get("type") == "task_started"
    )
    out = [json.loads(json.dumps(o)) for o in objs[:second]]
    sid = f"0000{i:04x}-0000-7000-8000-{i:012x}"
    out[0]["payload"]["id"] = out[0]["payload"]["session_id"] = sid
    for t in range(1, turns):
        for o in objs[second:]:
            o = json.loads(json.dumps(o))
            p = o["payload"]
            if o["type"] == "response_item":
                for key in ("id", "call_id"):
                    if isinstance(p.get(key), str):
                        p[key] = f"{p[key]}_{t}"
            out.append(o)
    if broken:
        dup = next(
            o
            for o in reversed(out)
            if o["type"] == "response_item" and o["payload"]["type"] == "function_call_output"
        )
        out.append(json.loads(json.dumps(dup)))
    if cut:
        last = max(
            k
            for k, o in enumerate(out)
            if o["type"] == "response_item" and o["payload"]["type"] == "function_call"
        )
        out = out[: last + 1]
    for n, o in enumerate(out):
        o["ordinal"] = n
    return [_js(o) for o in out]


def make_codex_tree(root: Path, sessions: int) -> tuple[int, int, int]:
    """Bytes, broken rollouts (as Codex sends them) and files written that are not
    rollouts."""
    rng = random.Random(38)
    size = broken = decoys = 0
    for i in range(sessions):
        day = root / "sessions" / "2026" / "01" / f"{1 + i % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        bad, cut = i % 20 == 19, i % 20 == 9
        data = ("\n".join(_codex_lines(i, rng.randint(2, 10), bad, cut)) + "\n").encode()
        path = day / f"rollout-2026-01-{1 + i % 28:02d}T10-00-00-{i:08d}.jsonl"
        path.write_bytes(data)
        size += len(data)
        broken += bad
        if i % 100 == 0:
            (day / (path.name + ".bak")).write_bytes(data)
            decoys += 1
    return size, broken, decoys


def _in_process(agent: str, root: Path) -> tuple[float, int, int]:
    fmt = get_format(agent)
    t0 = time.perf_counter()
    files = broken = 0
    load_path = getattr(fmt, "load_path", None)
    for path in fmt.session_files(root):
        if load_path is not None:
            loaded = load_path(str(path))
        else:
            loaded = fmt.load(path.read_bytes(), str(path))
        files += 1
        if toolpair.validate(
            loaded.messages, loaded.provider, model=loaded.model, format=loaded.wire
        ):
            broken += 1
    return time.perf_counter() - t0, files, broken


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", default="gemini-cli", choices=["gemini-cli", "codex"])
    ap.add_argument("--sessions", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tmp"
        t0 = time.perf_counter()
        make = make_codex_tree if args.agent == "codex" else make_gemini_tree
        size, broken, decoys = make(root, args.sessions)
        print(
            f"tree: {args.sessions} {args.agent} sessions, {size / 1e6:.1f} MB, {broken} broken, "
            f"{decoys} backups/temporaries/logs (made in {time.perf_counter() - t0:.1f}s)"
        )
        wall, files, found = _in_process(args.agent, root)
        # The gemini-cli tree's checkpoints are listed too.
        sessions_seen = files - (args.sessions // 1000 if args.agent == "gemini-cli" else 0)
        extra = " (the checkpoints included)" if args.agent == "gemini-cli" else ""
        assert sessions_seen == args.sessions and found == broken, (files, found, broken)
        print(
            f"format in process: {files / wall:.0f} files/s, {size / 1e6 / wall:.1f} MB/s, "
            f"{wall:.2f}s for {files} files{extra}, {found} broken"
        )
        _command(["--agent", args.agent], root, files, broken, size)
        if args.agent == "codex":
            _command([], root, files, broken, size)


def _command(agent: list[str], root: Path, files: int, broken: int, size: int) -> None:
    """``toolpair scan [--agent NAME] ROOT --json`` as a command: its wall time."""
    shown = " ".join(["toolpair scan", *agent]) if agent else "toolpair scan (no --agent)"
    cmd = [sys.executable, "-m", "toolpair", "scan", *agent, str(root)]
    t0 = time.perf_counter()
    proc = subprocess.run([*cmd, "--json", "--no-progress"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode in (0, 1) and proc.stdout.strip().startswith("{"):
        report = json.loads(proc.stdout)
        assert report["scanned"] == files and len(report["broken"]) == broken, report
        print(
            f"{shown}: {files / wall:.0f} files/s, {size / 1e6 / wall:.1f} MB/s, "
            f"{wall:.2f}s wall (its own worker processes)"
        )
    else:
        print(f"{shown}: not available here ({proc.stderr[-200:]!r})")


if __name__ == "__main__":
    main()
