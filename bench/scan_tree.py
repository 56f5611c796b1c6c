"""Throughput of ``toolpair scan`` on a generated Claude projects tree, and the memory of
``toolpair check`` on one very large session.

    python bench/scan_tree.py                       # 10,000 sessions, one 200 MB session
    python bench/scan_tree.py --sessions 2000 --big-mb 50 --jobs 2

The tree is made from the real session files in tests/core/data/claude_code: each
session is one of them with fresh uuids, tool ids and session id, some grown by
repeating their turns, one in twenty broken (its last result line cut). Figures:
files/s, MB/s and the peak resident memory of the scan (the largest of its processes,
workers included), and of check on the big session, compacted or not. Timings are wall
clock of a whole command (a measurement to report, not a test).
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

DATA = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "claude_code"
SOURCES = [
    "linear-1.0.98.jsonl",
    "sidechains-1.0.108.jsonl",
    "rewind-compact-2.1.0.jsonl",
    "tool-heavy-2.1.38.jsonl",
]


def _objs(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (DATA / name).read_bytes().splitlines() if x.strip()]


def _renamed(objs: list[dict[str, Any]], sid: str, rng: random.Random) -> list[dict[str, Any]]:
    """The same conversation with fresh uuids (parents follow), under session ``sid``."""
    table: dict[str, str] = {}
    out = []
    for o in objs:
        o = dict(o)
        for key in ("uuid", "parentUuid", "logicalParentUuid", "leafUuid"):
            v = o.get(key)
            if isinstance(v, str):
                if v not in table:
                    table[v] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                o[key] = table[v]
        if "sessionId" in o:
            o["sessionId"] = sid
        m = o.get("message")
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            # Tool ids are unique per session: a copy's calls get ids of their own.
            m = dict(m)
            if isinstance(m.get("id"), str):
                table.setdefault(m["id"], f"msg_{rng.getrandbits(96):024x}")
                m["id"] = table[m["id"]]
            blocks = []
            for b in m["content"]:
                if isinstance(b, dict):
                    b = dict(b)
                    for key in ("id", "tool_use_id"):
                        if isinstance(b.get(key), str):
                            v = b[key]
                            table.setdefault(v, f"toolu_{rng.getrandbits(96):024x}")
                            b[key] = table[v]
                blocks.append(b)
            m["content"] = blocks
            o["message"] = m
        out.append(o)
    return out


def _grown(
    objs: list[dict[str, Any]],
    times: int,
    sid: str,
    rng: random.Random,
    compact_every: int = 0,
) -> list[dict[str, Any]]:
    """``times`` copies of a conversation, each hanging from the previous one's leaf."""
    out: list[dict[str, Any]] = []
    last: str | None = None
    for n in range(times):
        if compact_every and n and n % compact_every == 0 and last is not None:
            # Auto-compaction: a boundary (a new root) and the summary that follows it.
            b = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            out.append(
                {
                    "parentUuid": None,
                    "logicalParentUuid": last,
                    "isSidechain": False,
                    "type": "system",
                    "subtype": "compact_boundary",
                    "sessionId": sid,
                    "uuid": b,
                    "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": 160000},
                }
            )
            out.append(
                {
                    "parentUuid": b,
                    "isSidechain": False,
                    "type": "user",
                    "sessionId": sid,
                    "uuid": u,
                    "isCompactSummary": True,
                    "message": {"role": "user", "content": "Summary of the conversation so far."},
                }
            )
            last = u
        part = _renamed(objs, sid, rng)
        for o in part:
            if (
                o.get("parentUuid") is None
                and o.get("type") == "user"
                and not o.get("isSidechain")
                and last is not None
            ):
                o["parentUuid"] = last
        graph = [o for o in part if isinstance(o.get("uuid"), str) and not o.get("isSidechain")]
        last = graph[-1]["uuid"]
        out.extend(part)
    return out


def _cut_last_result(objs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The session cut just before its last main-chain result line (None: it has none)."""
    for i in range(len(objs) - 1, -1, -1):
        c = (objs[i].get("message") or {}).get("content")
        if (
            not objs[i].get("isSidechain")
            and isinstance(c, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c)
        ):
            return objs[:i]
    return None


def _write(path: Path, objs: list[dict[str, Any]]) -> int:
    data = "".join(json.dumps(o, separators=(",", ":"), ensure_ascii=False) + "\n" for o in objs)
    raw = data.encode("utf-8")
    path.write_bytes(raw)
    return len(raw)


def make_tree(root: Path, n: int, seed: int = 7) -> tuple[int, int]:
    rng = random.Random(seed)
    sources = [_objs(s) for s in SOURCES]
    total = broken = 0
    for i in range(n):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        objs = sources[i % len(sources)]
        objs = _grown(objs, 1 + (i % 4 == 0) * rng.randint(1, 6), sid, rng)
        cut = _cut_last_result(objs) if i % 20 == 0 else None
        if cut is not None:
            objs = cut
            broken += 1
        d = root / f"-home-user-project-{i % 40}"
        d.mkdir(parents=True, exist_ok=True)
        total += _write(d / f"{sid}.jsonl", objs)
    return total, broken


#: Runs a command and reports the peak RSS of its largest process (workers included):
#: a fresh parent per measurement, so one measurement's peak does not carry into the next.
_WRAP = (
    "import resource, subprocess, sys;"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE);"
    "sys.stdout.buffer.write(p.stdout);"
    "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))"
)


def _run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of the command's largest process, stdout."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--big-mb", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=0, help="scan -j (default: scan's own)")
    args = ap.parse_args()
    exe = [sys.executable, "-m", "toolpair"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "projects"
        t0 = time.perf_counter()
        size, broken = make_tree(root, args.sessions)
        print(
            f"tree: {args.sessions} sessions, {size / 1e6:.1f} MB, {broken} broken "
            f"(made in {time.perf_counter() - t0:.1f}s)"
        )
        jobs = ["-j", str(args.jobs)] if args.jobs else []
        wall, peak, out = _run([*exe, "scan", str(root), "--json", "--no-progress", *jobs])
        report = json.loads(out)
        assert len(report["broken"]) == broken, (len(report["broken"]), broken)
        print(
            f"scan: {args.sessions / wall:.0f} files/s, {size / 1e6 / wall:.1f} MB/s, "
            f"{wall:.2f}s wall, peak RSS {peak:.0f} MB (largest process)"
        )
        wall1, peak1, out = _run([*exe, "scan", str(root), "--json", "--no-progress", "-j", "1"])
        print(
            f"scan -j 1: {args.sessions / wall1:.0f} files/s, {size / 1e6 / wall1:.1f} MB/s, "
            f"{wall1:.2f}s wall, peak RSS {peak1:.0f} MB"
        )
        if args.big_mb:
            rng = random.Random(11)
            base = _objs(SOURCES[0])
            one = sum(len(json.dumps(o, separators=(",", ":"))) + 1 for o in base)
            times = max(1, args.big_mb * 1_000_000 // one)
            big = Path(tmp) / "big" / f"{uuid.uuid4()}.jsonl"
            big.parent.mkdir()
            sid = big.stem
            for every, what in ((0, "never compacted"), (50, "auto-compacted every 50 turns")):
                big_size = _write(big, _grown(base, times, sid, rng, every))
                wall2, peak2, _ = _run([*exe, "check", str(big)])
                print(
                    f"check of one {big_size / 1e6:.0f} MB session ({what}, "
                    f"{times * len(base)} lines): {big_size / 1e6 / wall2:.1f} MB/s, "
                    f"{wall2:.2f}s wall, peak RSS {peak2:.0f} MB"
                )


if __name__ == "__main__":
    main()
