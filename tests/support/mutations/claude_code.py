"""Real Claude Code session files (tests/core/data/claude_code, see its README) and the
breaks that stop a session from resuming, made by editing them the way the bad writers
did: a result line lost, a run cut after its calls, an interrupt or a rejection, a call
line lost with its result kept, a compaction between a call and its result, results
behind text, a result written twice, and the 2.1 layout in which each parallel result
hangs from its own call line.

Each mutation returns the file's new bytes; lines it does not touch keep their bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import aged

DATA = Path(__file__).resolve().parents[2] / "core" / "data" / "claude_code"
LINEAR = DATA / "linear-1.0.98.jsonl"
SIDECHAINS = DATA / "sidechains-1.0.108.jsonl"
REWIND = DATA / "rewind-compact-2.1.0.jsonl"
SUBAGENT = DATA / "agent-test-hash-123.jsonl"
TOOL_HEAVY = DATA / "tool-heavy-2.1.38.jsonl"
FAN_OUT_AGENT = DATA / "agent-aac57f5-2.1.39.jsonl"
TASK = DATA / "task-subagent-2.1.38.jsonl"
REAL_FILES = (LINEAR, SIDECHAINS, REWIND, SUBAGENT, TOOL_HEAVY, FAN_OUT_AGENT, TASK)

INTERRUPT = "[Request interrupted by user for tool use]"
REJECT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
    "you are doing and wait for the user to tell you how to proceed."
)


def settle(p: Path, data: bytes) -> Path:
    """Write a session file as Claude Code leaves one: private, and an hour old, so not
    taken for a session still open."""
    aged(p, data)
    os.chmod(p, 0o600)
    return p


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def obj(raw: bytes) -> dict[str, Any]:
    value = json.loads(raw)
    assert isinstance(value, dict)
    return value


def dump(o: dict[str, Any]) -> bytes:
    # The files are JSON.stringify output: compact separators, non-ASCII kept.
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def find(ls: list[bytes], pred: Callable[[dict[str, Any]], bool]) -> int:
    for i, raw in enumerate(ls):
        if raw.strip() and pred(obj(raw)):
            return i
    raise LookupError("no such line")


def holds_call(o: dict[str, Any], cid: str) -> bool:
    c = (o.get("message") or {}).get("content")
    return isinstance(c, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") == cid for b in c
    )


def holds_result(o: dict[str, Any], cid: str) -> bool:
    c = (o.get("message") or {}).get("content")
    return isinstance(c, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == cid
        for b in c
    )


def reparent(ls: list[bytes], i: int, parent: str | None) -> None:
    o = obj(ls[i])
    o["parentUuid"] = parent
    ls[i] = dump(o)


def child_index(ls: list[bytes], uuid: str) -> int | None:
    for i, raw in enumerate(ls):
        if raw.strip() and obj(raw).get("parentUuid") == uuid:
            return i
    return None


def drop_and_reparent(ls: list[bytes], i: int) -> None:
    """Delete line i and hang its child from its parent, as a lost write looks."""
    o = obj(ls[i])
    c = child_index(ls, o["uuid"])
    if c is not None:
        reparent(ls, c, o.get("parentUuid"))
    del ls[i]


def insert_after(ls: list[bytes], i: int, line: dict[str, Any]) -> None:
    """Write ``line`` right after line i as its child; i's old child hangs from it."""
    parent = obj(ls[i])["uuid"]
    line["parentUuid"] = parent
    c = child_index(ls, parent)
    if c is not None:
        reparent(ls, c, line["uuid"])
    ls.insert(i + 1, dump(line))


# The ids of the real runs these mutations cut into (linear-1.0.98.jsonl).
BATCH = [  # one assistant message, five streamed tool_use lines, five result lines
    "toolu_01UwiR8tuGvGJN2J7BW4KbPx",
    "toolu_01MEJ7TRMeoTyDi6EZLHM2zY",
    "toolu_0164LbCjQenEQzr3pHHs81PK",
    "toolu_01KhSQFosXU4bYDwP6Md9hRW",
    "toolu_01QhjL1byZZsWexdkc7SBXUi",
]


def single_call(ls: list[bytes]) -> str:
    for raw in ls:
        o = obj(raw)
        c = (o.get("message") or {}).get("content")
        if isinstance(c, list):
            for b in c:
                if (
                    isinstance(b, dict)
                    and b.get("type") == "tool_use"
                    and str(b.get("id", "")).endswith("hm6PSH")
                ):
                    return str(b["id"])
    raise LookupError("hm6PSH")


def single_result(path: Path) -> tuple[list[bytes], str, int, dict[str, Any]]:
    """The file's lines, the id of its single call, and the index and object of the line
    that holds that call's result."""
    ls = lines(path)
    cid = single_call(ls)
    i = find(ls, lambda o: holds_result(o, cid))
    return ls, cid, i, obj(ls[i])


def m_delete_result(path: Path = LINEAR) -> bytes:
    ls = lines(path)
    drop_and_reparent(ls, find(ls, lambda o: holds_result(o, BATCH[2])))
    return b"".join(ls)


def m_truncate_after_call(path: Path = LINEAR) -> bytes:
    ls = lines(path)
    return b"".join(ls[: find(ls, lambda o: holds_call(o, BATCH[-1])) + 1])


def m_interrupt(path: Path = LINEAR) -> bytes:
    """Esc during a tool: the result never written, the interrupt text in its place."""
    ls, _, i, o = single_result(path)
    o["message"] = {"role": "user", "content": [{"type": "text", "text": INTERRUPT}]}
    o.pop("toolUseResult", None)
    ls[i] = dump(o)
    return b"".join(ls)


def m_reject_run(path: Path = LINEAR) -> bytes:
    """A rejected permission as Claude Code writes it: an error result, then the
    interrupt text. Valid: the API accepts it."""
    ls, cid, i, o = single_result(path)
    o["message"] = {
        "role": "user",
        "content": [
            {"type": "tool_result", "content": REJECT, "is_error": True, "tool_use_id": cid}
        ],
    }
    o["toolUseResult"] = "Error: The user doesn't want to proceed with this tool use."
    ls[i] = dump(o)
    text = dict(o)
    text["uuid"] = "7e57a11d-0000-4000-8000-00000000001a"
    text["message"] = {"role": "user", "content": [{"type": "text", "text": INTERRUPT}]}
    text.pop("toolUseResult")
    insert_after(ls, i, text)
    return b"".join(ls)


def m_drop_call_keep_result(path: Path = LINEAR) -> bytes:
    """The assistant line of a call lost, its result kept (#31328)."""
    ls = lines(path)
    cid = single_call(ls)
    drop_and_reparent(ls, find(ls, lambda o: holds_call(o, cid)))
    return b"".join(ls)


def m_boundary_between(path: Path = LINEAR) -> bytes:
    """A compaction written between a call and its result."""
    ls = lines(path)
    cid = single_call(ls)
    i = find(ls, lambda o: holds_call(o, cid))
    call = obj(ls[i])
    # What every line of the session carries, as the call line has it.
    envelope = {
        "isSidechain": False,
        "userType": "external",
        **{k: call.get(k) for k in ("cwd", "sessionId", "version", "gitBranch")},
    }
    boundary = {
        "parentUuid": None,
        "logicalParentUuid": call["uuid"],
        **envelope,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": call.get("timestamp"),
        "uuid": "7e57a11d-0000-4000-8000-00000000000b",
        "level": "info",
        "compactMetadata": {"trigger": "auto", "preTokens": 160000},
    }
    summary = {
        "parentUuid": boundary["uuid"],
        **envelope,
        "type": "user",
        "message": {
            "role": "user",
            "content": "This session is being continued from a previous conversation.",
        },
        "isCompactSummary": True,
        "uuid": "7e57a11d-0000-4000-8000-00000000000c",
        "timestamp": call.get("timestamp"),
    }
    r = find(ls, lambda o: holds_result(o, cid))
    reparent(ls, r, summary["uuid"])
    ls[i + 1 : i + 1] = [dump(boundary), dump(summary)]
    return b"".join(ls)


def m_text_before_result(path: Path = LINEAR) -> bytes:
    """A result line whose text came first (an interrupt merged into it)."""
    ls, _, i, o = single_result(path)
    o["message"]["content"].insert(0, {"type": "text", "text": INTERRUPT})
    ls[i] = dump(o)
    return b"".join(ls)


def m_duplicate_result(path: Path = LINEAR) -> bytes:
    ls, _, i, o = single_result(path)
    dup = dict(o)
    dup["uuid"] = "7e57a11d-0000-4000-8000-00000000000d"
    insert_after(ls, i, dup)
    return b"".join(ls)


def m_fan_out(path: Path = LINEAR) -> bytes:
    """The 2.1 layout of the five-call batch: every result hangs from the line of its
    own call (``sourceToolAssistantUUID``), the next turn from the last result. Valid
    once the siblings are re-attached, as Claude Code does."""
    ls = lines(path)
    owner: dict[str, str] = {}
    for raw in ls:
        o = obj(raw)
        for cid in BATCH:
            if holds_call(o, cid):
                owner[cid] = o["uuid"]
    for cid in BATCH:
        i = find(ls, lambda o, cid=cid: holds_result(o, cid))
        o = obj(ls[i])
        o["parentUuid"] = owner[cid]
        o["sourceToolAssistantUUID"] = owner[cid]
        ls[i] = dump(o)
    return b"".join(ls)


def m_fan_out_lost_result(path: Path = LINEAR) -> bytes:
    """The 2.1 layout with one sibling result never written."""
    ls = m_fan_out(path).splitlines(keepends=True)
    del ls[find(ls, lambda o: holds_result(o, BATCH[1]))]
    return b"".join(ls)


def m_sidechain_broken(path: Path = SIDECHAINS) -> bytes:
    """A result lost inside an inline sidechain: its own chain, never the main one."""
    ls = lines(path)
    i = find(ls, lambda o: bool(o.get("isSidechain")) and holds_result(o, _first_side_call(ls)))
    drop_and_reparent(ls, i)
    return b"".join(ls)


def _first_side_call(ls: list[bytes]) -> str:
    for raw in ls:
        o = obj(raw)
        if o.get("isSidechain") and o.get("type") == "assistant":
            for b in o["message"]["content"]:
                if b.get("type") == "tool_use":
                    return str(b["id"])
    raise LookupError("no sidechain call")


def m_dead_branch_call(path: Path = REWIND) -> bytes:
    """A rewound branch, before the compaction, that ends in an unanswered call: never
    sent, never judged."""
    ls = lines(path)
    i = find(ls, lambda o: o.get("uuid") == "b1a")
    o = obj(ls[i])
    o["message"]["content"].append(
        {"type": "tool_use", "id": "toolu_dead", "name": "Bash", "input": {}}
    )
    ls[i] = dump(o)
    return b"".join(ls)


def _result_suffix(ls: list[bytes], suffix: str) -> int:
    def pred(o: dict[str, Any]) -> bool:
        c = (o.get("message") or {}).get("content")
        return isinstance(c, list) and any(
            isinstance(b, dict)
            and b.get("type") == "tool_result"
            and str(b.get("tool_use_id", "")).endswith(suffix)
            for b in c
        )

    return find(ls, pred)


def m_real_fan_out_lost_result() -> bytes:
    """A real 2.1 subagent batch of six parallel calls, each result under its own call
    line, with one result line never written."""
    ls = lines(FAN_OUT_AGENT)
    drop_and_reparent(ls, _result_suffix(ls, "2cFFzU"))
    return b"".join(ls)


def m_real_interleaved_lost_result() -> bytes:
    """A real 2.1 response whose calls stream on after the first results were written
    (one message id around two result lines); a result of the later calls lost."""
    ls = lines(FAN_OUT_AGENT)
    drop_and_reparent(ls, _result_suffix(ls, "6HjqGY"))
    return b"".join(ls)


def m_real_cut_after_parallel_calls() -> bytes:
    """A real 2.1 session cut right after a two-call parallel batch (a crash)."""
    ls = lines(TOOL_HEAVY)
    i = find(ls, lambda o: str(o.get("uuid", "")).startswith("50199023"))
    return b"".join(ls[: i + 1])


#: The last call of linear-1.0.98.jsonl; the next response is a text-only answer.
LAST_CALL = "toolu_01WG87BhAT5yVaRwP1gU9Uxz"


def m_merged_turn(path: Path = LINEAR) -> bytes:
    """The result line between two API responses lost: the text-only answer that came
    next hangs from the call line, so the turn Claude Code sends is [tool_use, text]."""
    ls = lines(path)
    drop_and_reparent(ls, find(ls, lambda o: holds_result(o, LAST_CALL)))
    return b"".join(ls)


def m_merged_turn_streamed() -> bytes:
    """The same in a real 2.1 session: two responses of thinking, text and tool_use lines
    each (one line per block, sharing message.id), the result between them lost."""
    ls = lines(TASK)
    drop_and_reparent(ls, _result_suffix(ls, "kEv32"))
    return b"".join(ls)


def m_merged_turn_fan_out() -> bytes:
    """A real 2.1 batch of four parallel calls with every result line lost: the next
    response hangs from the call whose result was written last, a middle line of the
    batch, and the other call lines are siblings."""
    ls = lines(TASK)
    for suffix in ("e2AiH", "c1giM", "G4n59", "mgc6r"):
        drop_and_reparent(ls, _result_suffix(ls, suffix))
    return b"".join(ls)


def m_merged_turn_batch(path: Path = LINEAR) -> bytes:
    """The five results of the 1.0 parallel batch lost: two responses of parallel calls
    merged into one turn."""
    ls = lines(path)
    for cid in BATCH:
        drop_and_reparent(ls, find(ls, lambda o, cid=cid: holds_result(o, cid)))
    return b"".join(ls)


def m_text_between_call_and_result(path: Path = LINEAR) -> bytes:
    """A text-only response written between a call and its result: [tool_use, text] then
    [tool_result]. No line can be added or dropped to fix it without moving a real text
    or result, so repair leaves it."""
    ls = lines(path)
    i = find(ls, lambda o: holds_call(o, LAST_CALL))
    r = find(ls, lambda o: holds_result(o, LAST_CALL))
    text = find(ls, lambda o: o.get("parentUuid") == obj(ls[r])["uuid"])
    call_uuid, text_uuid = obj(ls[i])["uuid"], obj(ls[text])["uuid"]
    reparent(ls, text, call_uuid)
    reparent(ls, r, text_uuid)
    ls[r], ls[text] = ls[text], ls[r]
    return b"".join(ls)


def m_partly_repairable(path: Path = LINEAR) -> bytes:
    """One break repair fixes (a lost result) and one it cannot (a text response between
    a call and its result): repair leaves the session still refused."""
    ls = m_text_between_call_and_result(path).splitlines(keepends=True)
    drop_and_reparent(ls, find(ls, lambda o: holds_result(o, BATCH[2])))
    return b"".join(ls)


def result_lines(ls: list[bytes]) -> list[int]:
    """The indexes of the main-chain and sidechain lines that hold a tool_result."""
    out = []
    for i, raw in enumerate(ls):
        o = obj(raw)
        c = (o.get("message") or {}).get("content")
        if (
            o.get("type") == "user"
            and isinstance(c, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c)
        ):
            out.append(i)
    return out


def m_drop_lines(path: Path, indexes: tuple[int, ...]) -> bytes:
    """Lose the result lines at these indexes (of the unmutated file), each child
    re-parented to the lost line's parent."""
    ls = lines(path)
    for i in sorted(indexes, reverse=True):
        drop_and_reparent(ls, i)
    return b"".join(ls)


def m_drop_response_results(ls: list[bytes], message_id: str) -> bytes | None:
    """Lose every result line answering a call of one API response; None when the
    response made no call."""
    calls: set[str] = set()
    for raw in ls:
        o = obj(raw)
        if o.get("type") == "assistant" and o["message"].get("id") == message_id:
            calls.update(b["id"] for b in o["message"]["content"] if b.get("type") == "tool_use")
    if not calls:
        return None
    out = list(ls)
    while True:
        try:
            i = find(out, lambda o: any(holds_result(o, c) for c in calls))
        except LookupError:
            return b"".join(out)
        drop_and_reparent(out, i)


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], bytes]
    #: Whether check must find a break in the rebuilt chain.
    broken: bool
    #: A subagent file's agent id (the SDK reads it with get_subagent_messages).
    agent: str | None = None


CASES = [
    Case("delete a result line and re-parent", m_delete_result, True),
    Case("truncate after a tool_use", m_truncate_after_call, True),
    Case("interrupt during a tool", m_interrupt, True),
    Case("drop a tool_use, keep its result", m_drop_call_keep_result, True),
    Case("compaction between call and result", m_boundary_between, True),
    Case("text before the result in one line", m_text_before_result, True),
    Case("a result written twice", m_duplicate_result, True),
    Case("2.1 fan-out with a sibling result lost", m_fan_out_lost_result, True),
    Case(
        "real 2.1 subagent fan-out, a result lost",
        m_real_fan_out_lost_result,
        True,
        "aac57f5",
    ),
    Case(
        "real 2.1 interleaved stream, a result lost",
        m_real_interleaved_lost_result,
        True,
        "aac57f5",
    ),
    Case("real 2.1 session cut after parallel calls", m_real_cut_after_parallel_calls, True),
    Case("result lost between two responses (merged turn)", m_merged_turn, True),
    Case("real 2.1 streamed responses merged", m_merged_turn_streamed, True),
    Case("real 2.1 parallel batch merged, every result lost", m_merged_turn_fan_out, True),
    Case("parallel batch merged with the next", m_merged_turn_batch, True),
    Case("reject run", m_reject_run, False),
    Case("2.1 fan-out", m_fan_out, False),
    Case("broken sidechain", m_sidechain_broken, False),
    Case("dead rewound branch before compaction", m_dead_branch_call, False),
    Case("real 2.1 subagent fan-out", lambda: FAN_OUT_AGENT.read_bytes(), False, "aac57f5"),
    Case("real 2.1 session with parallel calls", lambda: TOOL_HEAVY.read_bytes(), False),
]
BROKEN = [c for c in CASES if c.broken]
