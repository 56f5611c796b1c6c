"""The breaks of a Gemini CLI session the reference lists, made from the real files in
data/gemini_cli/ (each function returns the broken bytes; the input is never changed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "core" / "data" / "gemini_cli"
PARALLEL = next((DATA / "parallel").rglob("session-*.jsonl"))
SUBAGENT = next(
    p for p in (DATA / "subagent").rglob("*.jsonl") if not p.name.startswith("session-")
)
KILLED = next((DATA / "killed").rglob("session-*.jsonl"))
DOUBLING = next((DATA / "doubling").rglob("session-*.jsonl"))
GEMINI3 = next((DATA / "gemini3").rglob("session-*.jsonl"))


def js(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def objs(data: bytes) -> list[Any]:
    return [json.loads(x) for x in lines(data)]


def tool_lines(data: bytes) -> list[int]:
    """0-based indexes of the lines holding a gemini record with tool calls."""
    return [i for i, o in enumerate(objs(data)) if o.get("type") == "gemini" and o.get("toolCalls")]


def _drop_results(obj: dict[str, Any], which: list[int] | None = None) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    for k, tc in enumerate(out["toolCalls"]):
        if which is None or k in which:
            tc.pop("result", None)
            tc["status"] = "executing"
    return out


def with_line(data: bytes, index: int, obj: Any) -> bytes:
    ls = lines(data)
    ls[index] = js(obj)
    return b"\n".join(ls) + b"\n"


def dangling_end(data: bytes | None = None) -> bytes:
    """The last batch recorded with no results, and nothing after it (the CLI stopped
    while the tools ran, after it recorded them)."""
    data = data if data is not None else PARALLEL.read_bytes()
    i = tool_lines(data)[-1]
    ls = lines(data)[: i + 1]
    ls[i] = js(_drop_results(json.loads(ls[i])))
    return b"\n".join(ls) + b"\n"


def mid_history(which: list[int] | None = None, data: bytes | None = None) -> bytes:
    """A batch in the middle left with calls unanswered (``which``: those calls; all by
    default), the session going on after it."""
    data = data if data is not None else PARALLEL.read_bytes()
    i = tool_lines(data)[0]
    return with_line(data, i, _drop_results(objs(data)[i], which))


def rewind_after(data: bytes, to_id: str) -> bytes:
    return data + js({"$rewindTo": to_id}) + b"\n"


def set_messages(data: bytes) -> bytes:
    """A ``$set.messages`` checkpoint (as /compress writes) whose model record holds its
    calls in ``content`` with no tool-call records, and no result after it."""
    recs = [o for o in objs(data) if isinstance(o.get("id"), str)]
    final: dict[str, Any] = {}
    for r in recs:
        final[r["id"]] = r
    out = []
    for r in final.values():
        if r.get("type") == "gemini" and r.get("toolCalls"):
            calls = [
                {"functionCall": {"id": tc["id"], "name": tc["name"], "args": tc["args"]}}
                for tc in r["toolCalls"]
            ]
            r = {k: v for k, v in r.items() if k != "toolCalls"}
            r["content"] = calls
            out.append(r)
            break
        out.append(r)
    return data + js({"$set": {"messages": out}}) + b"\n"


def legacy_document(data: bytes) -> bytes:
    """The same session as the single JSON document CLIs before 0.39 wrote."""
    meta: dict[str, Any] = {}
    final: dict[str, Any] = {}
    for o in objs(data):
        if "$set" in o:
            meta.update({k: v for k, v in o["$set"].items() if k != "messages"})
        elif isinstance(o.get("id"), str):
            final[o["id"]] = o
        elif "sessionId" in o:
            meta.update(o)
    doc = {**meta, "messages": list(final.values())}
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def checkpoint(history: list[Any], auth: str = "gemini-api-key") -> bytes:
    """``/chat save``: ``JSON.stringify({history, authType}, null, 2)``."""
    return json.dumps({"history": history, "authType": auth}, indent=2, ensure_ascii=False).encode()


def first_run(data: bytes) -> bytes:
    """The file as its first run left it: the lines before a resume's metadata line."""
    ls = lines(data)
    starts = [i for i, o in enumerate(objs(data)) if "sessionId" in o and "projectHash" in o]
    end = starts[1] if len(starts) > 1 else len(ls)
    return b"\n".join(ls[:end]) + b"\n"


#: /chat save after a resume, by CLI 0.61 (the batch's responses twice in one turn).
CHECKPOINT = DATA / "checkpoint" / "project" / "checkpoint-after-resume.json"


def _call_record(data: bytes) -> dict[str, Any]:
    return objs(data)[tool_lines(data)[0]]


def _responses(rec: dict[str, Any]) -> list[Any]:
    return [p for tc in rec["toolCalls"] for p in tc["result"]]


def stray_response(data: bytes | None = None) -> bytes:
    """A user record holding a response whose call no record holds (the call record
    lost, or written under another id): appended after the session."""
    data = data if data is not None else PARALLEL.read_bytes()
    part = json.loads(json.dumps(_responses(_call_record(data))[0]))
    part["functionResponse"]["id"] = "read_file__read_file_0000000000000_9"
    rec = {"id": "stray-1", "timestamp": "t", "type": "user", "content": [part]}
    return data + js(rec) + b"\n"


def compression_split(data: bytes | None = None) -> bytes:
    """/compress cut between a call and its responses (#6638, #3814): its
    ``$set.messages`` checkpoint starts with the summary, then a record of the responses
    whose call the summary replaced, then what came after the call."""
    data = data if data is not None else PARALLEL.read_bytes()
    recs = [o for o in objs(data) if isinstance(o.get("id"), str)]
    final: dict[str, Any] = {}
    for r in recs:
        final[r["id"]] = r
    ordered = list(final.values())
    i = next(k for k, r in enumerate(ordered) if r.get("type") == "gemini" and r.get("toolCalls"))
    summary = {
        "id": "summary-1",
        "timestamp": "t",
        "type": "user",
        "content": [{"text": "Summary: the user asked to look at notes.txt."}],
    }
    split = {"id": "split-1", "timestamp": "t", "type": "user", "content": _responses(ordered[i])}
    out = [summary, split, *ordered[i + 1 :]]
    return data + js({"$set": {"messages": out}}) + b"\n"
