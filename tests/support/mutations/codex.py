"""Breaks made from the real Codex rollouts of tests/core/data/codex/, each in a way
users report (sessions-more §4 and the issues cited beside each): lines removed, moved,
edited or appended as the CLI itself would have left them. Ordinals are renumbered after
an edit so that the only break is the one named."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "core" / "data" / "codex"


def real(name: str) -> Path:
    (path,) = sorted((DATA / name).rglob("rollout-*.jsonl"))
    return path


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in real(name).read_bytes().splitlines() if raw.strip()]


def dump(objs: list[dict[str, Any]]) -> bytes:
    """The lines as Codex writes them (serde_json: compact), ordinals renumbered."""
    n = 0
    out = []
    for o in objs:
        if "ordinal" in o:
            o = {**o, "ordinal": n}
            n += 1
        out.append(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(out).encode()


def _item(o: dict[str, Any], kind: str) -> bool:
    return o.get("type") == "response_item" and o["payload"].get("type") == kind


def _index(objs: list[dict[str, Any]], pred: Callable[[dict[str, Any]], bool], nth: int = 0) -> int:
    return [i for i, o in enumerate(objs) if pred(o)][nth]


def interrupted_shell() -> bytes:
    """openai/codex#29773: the real rollout of a run killed while ``sleep 30`` ran."""
    return real("killed").read_bytes()


def interrupted_patch() -> bytes:
    """An ``apply_patch`` (custom tool) call cut off before its output was written: the
    real patch rollout up to and including the call."""
    objs = lines("patch")
    return dump(objs[: _index(objs, lambda o: _item(o, "custom_tool_call")) + 1])


def missing_output_mid() -> bytes:
    """#29773: a persisted function_call without its function_call_output, the session
    resumed and used after it (the first turn's output removed)."""
    objs = lines("exec")
    del objs[_index(objs, lambda o: _item(o, "function_call_output"))]
    return dump(objs)


def rejected_turn() -> bytes:
    """#46193/#46195: a turn the upstream rejected stays in the history: its output
    names a call the history no longer holds (the first call removed)."""
    objs = lines("exec")
    del objs[_index(objs, lambda o: _item(o, "function_call"))]
    return dump(objs)


def empty_call_ids() -> bytes:
    """#42088: a call and its output recorded with an empty ``call_id``."""
    objs = lines("exec")
    for kind in ("function_call", "function_call_output"):
        o = objs[_index(objs, lambda o, k=kind: _item(o, k))]
        o["payload"] = {**o["payload"], "call_id": ""}
    return dump(objs)


def output_without_call_id_key() -> bytes:
    """#42088, the other shape: an output line with no ``call_id`` at all. codex-cli
    0.171.0 reads it, answers the call 'aborted' and sends the output without an id."""
    objs = lines("exec")
    o = objs[_index(objs, lambda o: _item(o, "function_call_output"))]
    o["payload"] = {k: v for k, v in o["payload"].items() if k != "call_id"}
    return dump(objs)


def late_output() -> bytes:
    """A shell call interrupted, the user's next prompt recorded, then the call's output
    written late: fine for OpenAI's Responses API (pairing by call_id), refused by a
    Chat Completions upstream (Bedrock, Kimi through a chat proxy: #26195, cc-switch
    #7509), where each tool message must follow its call."""
    objs = lines("exec")
    i = _index(objs, lambda o: _item(o, "function_call_output"))
    out = objs.pop(i)
    j = _index(objs, lambda o: _item(o, "message") and o["payload"].get("role") == "user", -1)
    objs.insert(j + 1, out)
    return dump(objs)


def duplicate_output() -> bytes:
    """A call answered twice (the output line written again after a resume)."""
    objs = lines("exec")
    i = _index(objs, lambda o: _item(o, "function_call_output"))
    objs.append(json.loads(json.dumps(objs[i])))
    return dump(objs)


def long_call_id() -> bytes:
    """A call id longer than the 64 characters OpenAI accepts (an upstream that mints
    long ids): no append of Codex's own lines can change an id Codex sends."""
    objs = lines("patch")
    long = "call_" + "x" * 80
    for kind in ("custom_tool_call", "custom_tool_call_output"):
        o = objs[_index(objs, lambda o, k=kind: _item(o, k))]
        o["payload"] = {**o["payload"], "call_id": long}
    return dump(objs)


def rolled_back_break() -> bytes:
    """The second turn's outputs removed, then that turn rolled back
    (``thread_rolled_back``): nothing of it is sent again."""
    objs = lines("exec")
    for _ in range(2):
        del objs[_index(objs, lambda o: _item(o, "function_call_output"), 1)]
    objs.append(
        {
            "timestamp": objs[-1]["timestamp"],
            "ordinal": 0,
            "type": "event_msg",
            "payload": {"type": "thread_rolled_back", "num_turns": 1},
        }
    )
    return dump(objs)


def compaction_split() -> bytes:
    """A compaction whose replacement history kept the first call but not its output,
    which was recorded before it: the call is left without output after replay."""
    objs = lines("exec")
    items = [o["payload"] for o in objs if o.get("type") == "response_item"]
    i = next(k for k, p in enumerate(items) if p.get("type") == "function_call")
    objs.append(
        {
            "timestamp": objs[-1]["timestamp"],
            "ordinal": 0,
            "type": "compacted",
            "payload": {"message": "summary", "replacement_history": items[: i + 1]},
        }
    )
    return dump(objs)


#: name -> (bytes, raw view broken, default view broken, repairable by an append)
BREAKS: dict[str, Callable[[], bytes]] = {
    "interrupted_shell": interrupted_shell,
    "interrupted_patch": interrupted_patch,
    "missing_output_mid": missing_output_mid,
    "rejected_turn": rejected_turn,
    "empty_call_ids": empty_call_ids,
    "output_without_call_id_key": output_without_call_id_key,
    "duplicate_output": duplicate_output,
    "compaction_split": compaction_split,
}

#: The real rollout each break is made from (its file name carries the session id).
SOURCE = {
    "interrupted_shell": "killed",
    "interrupted_patch": "patch",
    "long_call_id": "patch",
}


def source(name: str) -> Path:
    return real(SOURCE.get(name, "exec"))
