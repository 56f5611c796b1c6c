"""Gemini CLI sessions: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (v0.39 on),
subagent files ``chats/<parent>/<id>.jsonl``, legacy single-document ``session-*.json``
and ``/chat save`` checkpoints ``checkpoint-<tag>.json``.

Read as the CLI reads them on resume (``loadConversationRecord`` then
``convertSessionToClientHistory`` and the curated history of ``GeminiChat``): a record
whose ``id`` was seen replaces the earlier one in its place, ``$set.messages`` rebuilds
the whole list, ``$rewindTo`` drops that record and all after it, lines that do not
parse are skipped. Each ``gemini`` record becomes a model turn followed by one user turn
of the results its tool calls hold; a call without a result yields nothing, which is the
400 users meet on every later prompt.

A repair appends (the CLI's own update path): one full copy of each broken record under
its id, each unanswered call given status ``cancelled`` and an error response; where
the CLI recorded responses twice (0.44 to 0.61), one ``$set.messages`` checkpoint listing
every record once. Earlier bytes are never touched. Legacy documents and checkpoints are
rewritten whole, in the layout the CLI writes them (``JSON.stringify(value, null, 2)``).
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import toolpair
from toolpair._model import InvalidHistory
from toolpair.sessions._files import written_by_toolpair
from toolpair.sessions._format import Loaded, Plan, SessionError

NAME = "gemini-cli"
NEXT_PROMPT = "(the next prompt)"
CONTEXT_TURN = "(the session context the CLI sends first)"
#: The error a repaired call answers with: the CLI's own shape for a failed call.
CANCELLED = "Tool call was cancelled: no result was recorded (added by toolpair repair)."
_SNIFF = 65536
_SESSION_NAME = re.compile(r"session-.+\.jsonl?\Z")
_CHECKPOINT_NAME = re.compile(r"checkpoint-.+\.json\Z")


def _reject_constant(name: str) -> Any:
    # JSON.parse has no NaN or Infinity: a line holding one is skipped by the CLI.
    raise ValueError(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _parse(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        # Node reads the file as UTF-8, a bad byte becoming U+FFFD.
        text = text.decode("utf-8", errors="replace")
    return _DECODER.decode(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_lone(text: str) -> str:
    # JSON.stringify writes a lone surrogate as an escape (it cannot be UTF-8); Python
    # would keep it raw and fail to encode the line.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _js_json(obj: Any) -> str:
    """``JSON.stringify(obj)``: compact, non-ASCII kept as it is."""
    return _escape_lone(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))


def _js_pretty(obj: Any) -> str:
    """``JSON.stringify(obj, null, 2)``."""
    return _escape_lone(json.dumps(obj, indent=2, ensure_ascii=False))


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _is_obj(v: Any) -> bool:
    return isinstance(v, dict)


def _str_prop(rec: Any, key: str) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get(key), str)


# -- the CLI's text of a part list (partListUnionToString, verbose) ------------------

_VERBOSE = (
    ("videoMetadata", "[Video Metadata]"),
    ("thought", None),
    ("codeExecutionResult", "[Code Execution Result]"),
    ("executableCode", "[Executable Code]"),
    ("fileData", "[File Data]"),
)


def _part_text(value: Any) -> str:
    if not value:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_part_text(p) for p in value)
    if not isinstance(value, dict):
        return ""
    for key, text in _VERBOSE:
        if value.get(key) is not None:
            return text if text is not None else f"[Thought: {value[key]}]"
    if value.get("functionCall") is not None:
        return f"[Function Call: {_name_of(value['functionCall'])}]"
    if value.get("functionResponse") is not None:
        return f"[Function Response: {_name_of(value['functionResponse'])}]"
    if value.get("inlineData") is not None:
        return "[Media]"
    text = value.get("text")
    return text if isinstance(text, str) else ""


def _name_of(v: Any) -> str:
    return str(v.get("name")) if isinstance(v, dict) else ""


def _ignored_user_text(text: str) -> bool:
    t = text.strip()
    return (
        not t
        or t.startswith(("/", "?"))
        or t.startswith("<session_context>")
        or t.startswith("<hook_context>")
    )


def _parts(content: Any) -> list[Any]:
    """``ensurePartArray``."""
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [content]


# -- reading ----------------------------------------------------------------------


@dataclass(slots=True)
class _Record:
    """A message record as the final map holds it, and where it was read."""

    obj: dict[str, Any]
    line: int | None
    label: str
    #: Its index in a legacy document's ``messages``.
    pos: int | None = None


@dataclass(slots=True)
class _State:
    kind: str  # "jsonl", "json" (legacy document) or "checkpoint"
    records: list[_Record] = field(default_factory=list)
    #: The checkpoint document (kind "checkpoint") or the legacy document ("json").
    document: Any = None
    #: Per wire message, the record it came from (None: a stand-in or a checkpoint).
    sources: list[_Record | None] = field(default_factory=list)


def _read_lines(lines: Iterable[tuple[int, Any]]) -> tuple[dict[str, Any], list[_Record], str]:
    """``loadConversationRecord``: the metadata, the final records in their order, and
    what was read and dropped, for the report."""
    meta: dict[str, Any] = {}
    recs: dict[str, _Record] = {}
    rewinds = checkpoints = replaced = 0
    for n, rec in lines:
        if rec is _UNREADABLE or not isinstance(rec, dict):
            continue
        if _str_prop(rec, "$rewindTo"):
            rewinds += 1
            target = rec["$rewindTo"]
            if target in recs:
                keys = list(recs)
                for k in keys[keys.index(target) :]:
                    del recs[k]
            else:
                recs.clear()
        elif _str_prop(rec, "id"):
            if rec["id"] in recs:
                replaced += 1
                recs[rec["id"]].obj = rec
                recs[rec["id"]].line = n
                recs[rec["id"]].label = f"line {n}"
            else:
                recs[rec["id"]] = _Record(rec, n, f"line {n}")
        elif _is_obj(rec.get("$set")):
            upd = rec["$set"]
            if isinstance(upd.get("messages"), list):
                checkpoints += 1
                recs.clear()
                _add_all(recs, upd["messages"], n, f"line {n} $set.messages")
            meta.update(upd)
        elif _str_prop(rec, "sessionId") and _str_prop(rec, "projectHash"):
            meta.update(rec)
            if isinstance(rec.get("messages"), list):
                _add_all(recs, rec["messages"], n, f"line {n} messages")
    notes = []
    if replaced:
        notes.append(f"{replaced} record updates applied in place")
    if checkpoints:
        notes.append(f"{checkpoints} $set.messages checkpoint(s)")
    if rewinds:
        notes.append(f"{rewinds} $rewindTo")
    return meta, list(recs.values()), ", ".join(notes)


def _add_all(recs: dict[str, _Record], msgs: Sequence[Any], n: int | None, where: str) -> None:
    for i, m in enumerate(msgs):
        if _str_prop(m, "id"):
            label = f"{where}[{i}]"
            if m["id"] in recs:
                recs[m["id"]].obj, recs[m["id"]].line, recs[m["id"]].label = m, n, label
            else:
                recs[m["id"]] = _Record(m, n, label)


class _Unreadable:
    pass


_UNREADABLE: Any = _Unreadable()


@dataclass(slots=True)
class _Counts:
    lines: int = 0
    bad: int = 0


def _json_lines(text_lines: Iterable[str], counts: _Counts) -> Iterator[tuple[int, Any]]:
    """Each line's value, as the CLI's line reader sees it; parsed one at a time, so that
    a record replaced later is freed (memory follows what is sent)."""
    decode = _DECODER.decode
    for n, raw in enumerate(text_lines, 1):
        line = raw[:-1] if raw.endswith("\n") else raw
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip():
            continue
        counts.lines += 1
        try:
            yield n, decode(line)
        except ValueError:
            counts.bad += 1
            yield n, _UNREADABLE


def _read_jsonl(text_lines: Iterable[str]) -> _Read | None:
    """A JSONL session, or None when no line names a sessionId and projectHash."""
    counts = _Counts()
    meta, recs, notes = _read_lines(_json_lines(text_lines, counts))
    if not (isinstance(meta.get("sessionId"), str) and isinstance(meta.get("projectHash"), str)):
        return None
    note = [f"{counts.lines} lines"] + ([notes] if notes else [])
    if counts.bad:
        note.append(f"{counts.bad} unreadable line(s) skipped as the CLI skips them")
    return _read_records("jsonl", meta, recs, None, note)


def _jsonl_head(head: bytes) -> bool:
    """Whether the file starts as the CLI starts a JSONL session: a metadata line."""
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        obj = _parse(first)
    except ValueError:
        return False
    return _str_prop(obj, "sessionId") and _str_prop(obj, "projectHash")


@dataclass(slots=True)
class _Turn:
    role: str
    parts: list[Any]
    source: _Record | None
    what: str


def _convert(records: Sequence[_Record]) -> tuple[list[_Turn], int]:
    """``convertSessionToClientHistory``; the count of records it leaves out."""
    out: list[_Turn] = []
    left_out = 0
    for r in records:
        msg = r.obj
        kind = msg.get("type")
        if kind == "user":
            if _ignored_user_text(_part_text(msg.get("content"))):
                left_out += 1
                continue
            out.append(_Turn("user", _parts(msg.get("content")), r, r.label))
        elif kind == "gemini":
            content = msg.get("content")
            cparts = _parts(content) if content else []
            modern = any(
                isinstance(p, dict) and (p.get("functionCall") or p.get("thought")) for p in cparts
            )
            tool_calls = _list(msg.get("toolCalls"))
            if modern:
                model = list(cparts)
            else:
                model = []
                for t in msg.get("thoughts") or []:
                    if isinstance(t, dict):
                        subj, desc = t.get("subject"), t.get("description")
                        text = f"**{subj}** {desc}" if subj else desc
                        model.append({"text": text, "thought": True})
                model.extend(cparts)
                for tc in tool_calls:
                    if isinstance(tc, dict):
                        call = {"id": tc.get("id"), "name": tc.get("name"), "args": tc.get("args")}
                        model.append(
                            {"functionCall": {k: v for k, v in call.items() if v is not None}}
                        )
            if not model:
                left_out += 1
                continue
            out.append(_Turn("model", model, r, r.label))
            responses: list[Any] = []
            for tc in tool_calls:
                if not isinstance(tc, dict) or not _truthy(tc.get("result")):
                    continue
                res = tc["result"]
                if isinstance(res, str):
                    responses.append(
                        {
                            "functionResponse": {
                                "id": tc.get("id"),
                                "name": tc.get("name"),
                                "response": {"output": res},
                            }
                        }
                    )
                elif isinstance(res, list):
                    responses.extend(_parts(res))
                else:
                    responses.append(res)
            if responses:
                out.append(_Turn("user", responses, r, f"{r.label} toolCalls results"))
        else:
            left_out += 1
    return out, left_out


def _truthy(v: Any) -> bool:
    """JavaScript truthiness, for ``if (toolCall.result)``: an empty list is true."""
    if isinstance(v, list | dict):
        return True
    return bool(v)


def _valid_content(role: str, parts: Any) -> bool:
    """``isValidContent`` of GeminiChat."""
    if role == "model" and not parts:
        return True
    if not parts:
        return False
    for p in parts:
        if not isinstance(p, dict) or not p:
            return False
        others = [k for k in p if k not in ("text", "thought", "callIndex")]
        if not p.get("thought") and p.get("text") == "" and not others:
            return False
    return True


def _curated(turns: Sequence[_Turn]) -> tuple[list[_Turn], int]:
    """``extractCuratedHistory``: a run of model turns with an invalid one is dropped."""
    out: list[_Turn] = []
    dropped = 0
    i = 0
    while i < len(turns):
        if turns[i].role == "user":
            out.append(turns[i])
            i += 1
            continue
        run = []
        while i < len(turns) and turns[i].role == "model":
            run.append(turns[i])
            i += 1
        if all(_valid_content(t.role, t.parts) for t in run):
            out.extend(run)
        else:
            dropped += len(run)
    return out, dropped


def _wire(t: _Turn) -> dict[str, Any]:
    return {"role": t.role, "parts": t.parts}


def _stand_in(text: str, what: str) -> _Turn:
    return _Turn("user", [{"text": text}], None, what)


def _last_model(records: Sequence[_Record]) -> str | None:
    for r in reversed(records):
        m = r.obj.get("model")
        if r.obj.get("type") == "gemini" and isinstance(m, str) and m:
            return m
    return None


@dataclass(slots=True)
class _Read:
    kind: str
    turns: list[_Turn]
    records: list[_Record]
    document: Any
    meta: dict[str, Any]
    notes: list[str]
    skipped: list[str]
    auth: str | None = None


def _checkpoint_history(doc: Any) -> list[Any] | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and "history" in doc and "sessionId" not in doc:
        h = doc["history"]
        return h if isinstance(h, list) else []
    return None


def _read_checkpoint(doc: Any, history: list[Any]) -> _Read:
    turns: list[_Turn] = []
    for i, c in enumerate(history):
        if not isinstance(c, dict):
            raise SessionError(f"history[{i}] is not a Gemini Content object")
        parts = c.get("parts")
        turns.append(
            _Turn(
                str(c.get("role")), parts if isinstance(parts, list) else [], None, f"history[{i}]"
            )
        )
    auth = doc.get("authType") if isinstance(doc, dict) else None
    cur, dropped = _curated(turns)
    skipped = [f"{dropped} model turn(s) the CLI drops as invalid"] if dropped else []
    cur.append(_stand_in(NEXT_PROMPT, "the next prompt"))
    return _Read(
        "checkpoint",
        cur,
        [],
        doc,
        {},
        [f"{len(history)} turns"],
        skipped,
        auth if isinstance(auth, str) else None,
    )


def _read_records(
    kind: str, meta: dict[str, Any], recs: list[_Record], doc: Any, notes: list[str]
) -> _Read:
    turns, left_out = _convert(recs)
    cur, dropped = _curated(turns)
    skipped = []
    if left_out:
        skipped.append(
            f"{left_out} record(s) the CLI does not send (info/error, commands, context)"
        )
    if dropped:
        skipped.append(f"{dropped} model turn(s) the CLI drops as invalid")
    cur.insert(0, _stand_in(CONTEXT_TURN, "the session context"))
    cur.append(_stand_in(NEXT_PROMPT, "the next prompt"))
    return _Read(kind, cur, recs, doc, meta, notes, skipped)


def _read_bytes(data: bytes) -> _Read:
    head = data.lstrip()[:1]
    if head == b"[" or (
        head == b"{" and b'"sessionId"' not in data[:_SNIFF] and b'"history"' in data[:_SNIFF]
    ):
        try:
            doc = _parse(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise SessionError(f"not JSON: {e}") from None
        hist = _checkpoint_history(doc)
        if hist is not None:
            return _read_checkpoint(doc, hist)
    # Split at newlines only: a JSON string may hold U+2028, which JSON.stringify keeps.
    read = _read_jsonl(data.decode("utf-8", errors="replace").split("\n"))
    if read is not None:
        return read
    # parseLegacyRecordFallback: one JSON document.
    try:
        doc = _parse(data)
    except (ValueError, UnicodeDecodeError):
        raise SessionError(
            "not a Gemini CLI session: no line names a sessionId and projectHash"
        ) from None
    if isinstance(doc, dict) and "sessionId" in doc and isinstance(doc.get("messages"), list):
        # The CLI takes any object naming a sessionId; one without messages is refused
        # here, so that nothing is called valid that was never read.
        msgs = doc["messages"]
        recs = [
            _Record(m, None, f"messages[{i}]", i) for i, m in enumerate(msgs) if isinstance(m, dict)
        ]
        return _read_records("json", doc, recs, doc, [f"{len(msgs)} messages"])
    hist = _checkpoint_history(doc)
    if hist is not None:
        return _read_checkpoint(doc, hist)
    raise SessionError("not a Gemini CLI session, legacy session or checkpoint")


def _read_objects(obj: Any) -> _Read:
    """`history` input: a JSONL file's line objects, or a JSON file's document."""
    if isinstance(obj, dict):
        hist = _checkpoint_history(obj)
        if hist is not None:
            return _read_checkpoint(obj, hist)
        if "sessionId" in obj:
            msgs = _list(obj.get("messages"))
            recs = [
                _Record(m, None, f"messages[{i}]", i)
                for i, m in enumerate(msgs)
                if isinstance(m, dict)
            ]
            return _read_records("json", obj, recs, obj, [])
        raise InvalidHistory("not a Gemini CLI session document (no sessionId) or checkpoint")
    if isinstance(obj, list | tuple):
        items = list(obj)
        if items and all(isinstance(c, dict) and "role" in c and "parts" in c for c in items):
            return _read_checkpoint(items, items)
        meta, recs, notes = _read_lines((i + 1, o) for i, o in enumerate(items))
        if not (
            isinstance(meta.get("sessionId"), str) and isinstance(meta.get("projectHash"), str)
        ):
            raise InvalidHistory("a gemini-cli session's lines name no sessionId and projectHash")
        return _read_records("jsonl", meta, recs, None, [notes] if notes else [])
    raise InvalidHistory(
        f"a gemini-cli session is a list of line objects, not {type(obj).__name__}"
    )


# -- the format ----------------------------------------------------------------------


def _unanswered_at(messages: Sequence[Any], i: int) -> list[Any]:
    """The calls of model turn ``i`` that no function response in the user turns right
    after it answers (by id; by name where the call has none)."""
    ids: set[Any] = set()
    names: list[Any] = []
    j = i + 1
    while j < len(messages) and messages[j].get("role") == "user":
        for p in messages[j].get("parts") or []:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if isinstance(fr, dict):
                ids.add(fr.get("id"))
                names.append(fr.get("name"))
        j += 1
    out = []
    for p in messages[i].get("parts") or []:
        fc = p.get("functionCall") if isinstance(p, dict) else None
        if not isinstance(fc, dict):
            continue
        if fc.get("id") is not None:
            if fc["id"] not in ids:
                out.append(fc)
        elif fc.get("name") in names:
            names.remove(fc.get("name"))
        else:
            out.append(fc)
    return out


def _fixed_record(rec: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A full copy of ``rec`` in which every call without a result is cancelled."""
    new = copy.deepcopy(rec)
    tcs = new.get("toolCalls")
    if not isinstance(tcs, list):
        tcs = []
    done: list[str] = []
    known = {tc.get("id") for tc in tcs if isinstance(tc, dict)}
    for tc in tcs:
        if isinstance(tc, dict) and not _answers(tc.get("result")):
            # Parts a result holds besides a response (a text, a file) stay after it.
            kept = _list(tc.get("result"))
            tc["result"] = [_error_response(tc.get("id"), tc.get("name")), *kept]
            tc["status"] = "cancelled"
            done.append(f"{tc.get('name')} ({tc.get('id')})")
    content = new.get("content")
    for p in _parts(content) if content else []:
        fc = p.get("functionCall") if isinstance(p, dict) else None
        if isinstance(fc, dict) and fc.get("id") not in known:
            # A call the model made that no tool-call record holds: one is added for it.
            tcs.append(
                {
                    "id": fc.get("id"),
                    "name": fc.get("name"),
                    "args": fc.get("args", {}),
                    "result": [_error_response(fc.get("id"), fc.get("name"))],
                    "status": "cancelled",
                    "timestamp": new.get("timestamp"),
                }
            )
            known.add(fc.get("id"))
            done.append(f"{fc.get('name')} ({fc.get('id')}, no tool-call record)")
    if tcs and "toolCalls" not in new:
        new["toolCalls"] = tcs
    return new, done


def _answers(result: Any) -> bool:
    if not _truthy(result):
        return False
    if isinstance(result, list):
        return any(isinstance(p, dict) and "functionResponse" in p for p in _parts(result))
    return True


def _error_response(call_id: Any, name: Any) -> dict[str, Any]:
    fr: dict[str, Any] = {"id": call_id, "name": name, "response": {"error": CANCELLED}}
    if call_id is None:
        del fr["id"]
    return {"functionResponse": fr}


class GeminiCliFormat:
    name = NAME
    agent = "Gemini CLI"
    close_hint = "quit Gemini CLI (/quit) in every terminal that has this session open"
    provider = "gemini"
    wire = "gemini"

    # -- finding files --

    def sniff(self, path: str) -> bool:
        p = Path(path)
        if not p.is_file():
            return False
        try:
            with open(p, "rb") as f:
                head = f.read(_SNIFF)
        except OSError:
            return False
        return _sniff_bytes(p.name, head)

    def target(self, path: str) -> str:
        return path

    def default_roots(self) -> list[Path]:
        home = os.environ.get("GEMINI_CLI_HOME") or str(Path.home())
        # Named even when missing: scan says where it looked.
        return [Path(home) / ".gemini" / "tmp"]

    def session_files(self, root: Path) -> Iterator[Path]:
        if root.is_file():
            if _is_session_name(root):
                yield root
            return
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            d = Path(dirpath)
            in_chats = d.name == "chats"
            under_chats = d.parent.name == "chats"
            for fn in sorted(filenames):
                if _ours(fn):
                    continue
                if (
                    (in_chats and _SESSION_NAME.match(fn))
                    or (under_chats and fn.endswith(".jsonl"))
                    or _CHECKPOINT_NAME.match(fn)
                ):
                    yield d / fn

    # -- reading --

    def load(self, data: bytes, path: str) -> Loaded:
        return self._loaded(_read_bytes(data), path)

    def load_path(self, path: str) -> Loaded:
        with open(path, "rb") as f:
            if _jsonl_head(f.read(_SNIFF)):
                f.seek(0)
                read = _read_jsonl(raw.decode("utf-8", errors="replace") for raw in f)
                if read is not None:
                    return self._loaded(read, path)
            f.seek(0)
            return self.load(f.read(), path)

    def looks_like(self, objs: list[Any]) -> bool:
        """Whether parsed objects look like a session file's lines (for the hint an
        error gives: pass ``format='gemini-cli'``)."""
        return any(
            isinstance(o, dict) and _str_prop(o, "sessionId") and _str_prop(o, "projectHash")
            for o in objs[:3]
        )

    def history(self, obj: Any) -> list[Any]:
        try:
            r = _read_objects(obj)
        except SessionError as e:
            raise InvalidHistory(str(e)) from None
        return [_wire(t) for t in r.turns]

    def _loaded(self, r: _Read, path: str) -> Loaded:
        model = _last_model(r.records) if r.records else None
        provider = "vertex" if r.auth == "vertex-ai" else "gemini"
        label = {"jsonl": "session", "json": "legacy session", "checkpoint": "checkpoint"}[r.kind]
        parts = [f"gemini-cli format ({label})", f"{provider} rules"]
        if model:
            parts.append(f"model {model}")
        if r.auth:
            parts.append(f"saved with {r.auth}")
        if r.meta.get("kind") == "subagent":
            parts.append("subagent")
        parts.extend(r.notes)
        recs = [t.source for t in r.turns]
        lines = [t.source.line if t.source is not None else None for t in r.turns]
        state = _State(r.kind, r.records, r.document, recs)
        return Loaded(
            path=path,
            format=NAME,
            provider=provider,
            wire="gemini",
            messages=[_wire(t) for t in r.turns],
            where=[t.what for t in r.turns],
            lines=lines,
            described=", ".join(parts),
            model=model,
            skipped="; ".join(r.skipped),
            context={},
            state=state,
            stand_in=True,
        )

    # -- repairing --

    def plan(self, loaded: Loaded, data: bytes, model: str | None) -> Plan | None:
        st = loaded.state
        if not isinstance(st, _State):
            raise SessionError("plan() needs the Loaded that load() returned")
        m = model or loaded.model
        violations = toolpair.validate(loaded.messages, loaded.provider, model=m, format="gemini")
        if not violations:
            return None
        if st.kind == "checkpoint":
            return self._plan_checkpoint(loaded, data, m)
        broken: dict[int, _Record] = {}
        for i, src in enumerate(st.sources):
            if (
                src is not None
                and src.obj.get("type") == "gemini"
                and loaded.messages[i].get("role") == "model"
                and _unanswered_at(loaded.messages, i)
            ):
                broken[id(src)] = src
        changes: list[str] = []
        fixed: dict[int, dict[str, Any]] = {}
        for key, src in broken.items():
            new, done = _fixed_record(src.obj)
            if done:
                fixed[key] = new
                changes.append(f"{src.label}: cancelled {', '.join(done)}")
        doubled = _doubled(st.records) if st.kind == "jsonl" else set()
        strays = _strays(st.records) if st.kind == "jsonl" else {}
        if not fixed and not doubled and not strays:
            # What is left (a response whose call sits in another turn) has no edit this
            # format allows: the commands report the violations themselves.
            return None
        if st.kind == "jsonl" and (doubled or strays):
            # A record copy cannot take a response out: the records a CLI of 0.44 to 0.61
            # replays twice (google-gemini/gemini-cli #29365), a response whose call is
            # gone (a stray record, or /compress that cut between a call and its
            # response). One $set.messages line, the CLI's own whole-history update (read
            # from 0.44 on), lists every record once, without them.
            keep = []
            for r in st.records:
                if r.obj.get("id") in doubled:
                    continue
                obj: dict[str, Any] | None = fixed.get(id(r), r.obj)
                if id(r) in strays and obj is not None:
                    obj = _without_parts(obj, strays[id(r)])
                if obj is not None:
                    keep.append(obj)
            tail = b"" if data.endswith(b"\n") or not data else b"\n"
            new_data = data + tail + (_js_json({"$set": {"messages": keep}}) + "\n").encode()
            changes = [f"in a $set.messages checkpoint appended: {c}" for c in changes]
            if doubled:
                gone = [r.label for r in st.records if r.obj.get("id") in doubled]
                changes.append(
                    "in a $set.messages checkpoint appended: left out "
                    f"{len(gone)} record(s) repeating responses the turn already holds "
                    f"({', '.join(gone)})"
                )
            for r in st.records:
                if id(r) in strays and r.obj.get("id") not in doubled:
                    ids = ", ".join(str(x) for x in _stray_ids(r.obj, strays[id(r)]))
                    changes.append(
                        f"in a $set.messages checkpoint appended: {r.label}: left out "
                        f"the response(s) whose call is gone ({ids})"
                    )
            # A file the CLI has written a $set.messages line to (or doubled, 0.44-0.61)
            # is read by a CLI that reads them; otherwise say what an older CLI does.
            if not doubled and not any("$set.messages" in r.label for r in st.records):
                changes.append(
                    "note: Gemini CLI reads a $set.messages line from 0.44 on; an older CLI "
                    "ignores it: update the CLI before resuming (an append cannot take a "
                    "response out for it)"
                )
        elif st.kind == "jsonl":
            tail = b"" if data.endswith(b"\n") or not data else b"\n"
            added = "".join(_js_json(new) + "\n" for new in fixed.values()).encode()
            new_data = data + tail + added
            changes = [f"appended a copy of {c}" for c in changes]
        else:
            doc = copy.deepcopy(st.document)
            msgs = doc["messages"]
            for src in st.records:
                if id(src) in fixed and src.pos is not None:
                    msgs[src.pos] = fixed[id(src)]
            new_data = _js_pretty(doc).encode() + (b"\n" if data.endswith(b"\n") else b"")
            changes = [f"rewrote {c}" for c in changes]
        assert st.kind != "jsonl" or new_data.startswith(data)
        fixes = len([c for c in changes if not c.startswith("note: ")])
        after = self.load(new_data, loaded.path)
        left = toolpair.validate(after.messages, after.provider, model=m, format="gemini")
        changes += [f"unrepaired: {v.code} at {after.where[v.index]}: {v.message}" for v in left]
        return Plan(changes, new_data, fixes)

    def _plan_checkpoint(self, loaded: Loaded, data: bytes, model: str | None) -> Plan | None:
        doc = loaded.state.document
        # A checkpoint saved after a resume by CLI 0.44 to 0.61 holds each response turn's
        # parts twice (google-gemini/gemini-cli#29365): the repeats go first.
        history, changes = _undoubled(list(_checkpoint_history(doc) or []))
        i = 0
        while i < len(history):
            turn = history[i]
            missing = (
                _unanswered_at(history, i)
                if isinstance(turn, dict) and turn.get("role") == "model"
                else []
            )
            if missing:
                parts = [_error_response(fc.get("id"), fc.get("name")) for fc in missing]
                what = ", ".join(f"{fc.get('name')} ({fc.get('id')})" for fc in missing)
                nxt = history[i + 1] if i + 1 < len(history) else None
                if (
                    isinstance(nxt, dict)
                    and nxt.get("role") == "user"
                    and any(
                        isinstance(p, dict) and "functionResponse" in p
                        for p in nxt.get("parts") or []
                    )
                ):
                    history[i + 1] = {**nxt, "parts": [*nxt["parts"], *parts]}
                    changes.append(f"history[{i + 1}]: added the responses of {what}")
                else:
                    history.insert(i + 1, {"role": "user", "parts": parts})
                    changes.append(f"history[{i + 1}]: inserted the responses of {what}")
            i += 1
        if not changes:
            return None
        new_doc: Any = history if isinstance(doc, list) else {**doc, "history": history}
        new_data = _js_pretty(new_doc).encode()
        if data.endswith(b"\n"):
            new_data += b"\n"
        fixes = len(changes)
        after = self.load(new_data, loaded.path)
        left = toolpair.validate(after.messages, after.provider, model=model, format="gemini")
        changes += [f"unrepaired: {v.code} at {after.where[v.index]}: {v.message}" for v in left]
        return Plan(changes, new_data, fixes)

    def verify(self, before: Loaded, after: Loaded) -> str | None:
        b, a = before.state, after.state
        if not isinstance(b, _State) or not isinstance(a, _State):
            return "not loaded by the gemini-cli format"
        if b.kind != a.kind:
            return f"the file would read as a {a.kind}, not a {b.kind}"
        if b.kind == "checkpoint":
            return _checkpoint_kept(b.document, a.document)
        doubled = _doubled(b.records) if b.kind == "jsonl" else set()
        strays = _strays(b.records) if b.kind == "jsonl" else {}
        ids_a = [r.obj.get("id") for r in a.records]
        if ids_a == [r.obj.get("id") for r in b.records]:
            pairs = [(r.obj, ra) for r, ra in zip(b.records, a.records, strict=True)]
        else:
            want = []
            for r in b.records:
                obj = _without_parts(r.obj, strays[id(r)]) if id(r) in strays else r.obj
                if r.obj.get("id") not in doubled and obj is not None:
                    want.append(obj)
            if ids_a != [o.get("id") for o in want]:
                return "the records would come back in another order or number"
            pairs = list(zip(want, a.records, strict=True))
        for wb, ra in pairs:
            if wb != ra.obj and not _same_but_repaired(wb, ra.obj):
                return f"{ra.label} would change beyond its unanswered calls"
        return None


def _yielded(rec: dict[str, Any]) -> list[Any]:
    """The function responses a record puts in the history: a user record's own parts,
    a gemini record's tool-call results."""
    if rec.get("type") == "user":
        return [
            p["functionResponse"]
            for p in _parts(rec.get("content"))
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
        ]
    out = []
    for tc in _list(rec.get("toolCalls")):
        if isinstance(tc, dict) and isinstance(tc.get("result"), list):
            out += [
                p["functionResponse"]
                for p in tc["result"]
                if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
            ]
    return out


def _doubled(records: Sequence[_Record]) -> set[str]:
    """The ids of user records holding nothing but responses the history already holds
    for the same call turn (same id, same response): from 0.44 the CLI records each
    batch's responses in the call record and again as a user record, and from its first
    resume also persists the response turn it rebuilt, all replayed on resume."""
    out: set[str] = set()
    seen: list[Any] = []
    for r in records:
        rec = r.obj
        if rec.get("type") == "gemini":
            # Each model turn starts a new response turn; a record the CLI leaves out
            # (no content, no calls) does not.
            if _has_calls(rec) or rec.get("content") or rec.get("thoughts"):
                seen = list(_yielded(rec))
            continue
        if rec.get("type") != "user":
            continue
        parts = _parts(rec.get("content"))
        mine = _yielded(rec)
        if not mine or len(mine) != len(parts):
            seen += mine
            continue
        if all(any(_same_response(x, y) for y in seen) for x in mine):
            out.add(str(rec.get("id")))
        else:
            seen += mine
    return out


def _call_ids(records: Sequence[_Record]) -> set[Any]:
    out: set[Any] = set()
    for r in records:
        rec = r.obj
        if rec.get("type") != "gemini":
            continue
        out.update(tc.get("id") for tc in _list(rec.get("toolCalls")) if isinstance(tc, dict))
        content = rec.get("content")
        for p in _parts(content) if content else []:
            fc = p.get("functionCall") if isinstance(p, dict) else None
            if isinstance(fc, dict):
                out.add(fc.get("id"))
    out.discard(None)
    return out


def _strays(records: Sequence[_Record]) -> dict[int, list[int]]:
    """Per user record (by ``id()``), the indexes of its functionResponse parts whose
    call no record holds: a stray response record, or the responses /compress kept after
    summarising their call away (#6638, #3814). A response without an id, or whose call
    sits in some other turn, is not taken for one."""
    calls = _call_ids(records)
    out: dict[int, list[int]] = {}
    for r in records:
        if r.obj.get("type") != "user":
            continue
        idx = [
            i
            for i, p in enumerate(_parts(r.obj.get("content")))
            if isinstance(p, dict)
            and isinstance(p.get("functionResponse"), dict)
            and p["functionResponse"].get("id") is not None
            and p["functionResponse"]["id"] not in calls
        ]
        if idx:
            out[id(r)] = idx
    return out


def _stray_ids(rec: dict[str, Any], idx: list[int]) -> list[Any]:
    parts = _parts(rec.get("content"))
    return [parts[i]["functionResponse"].get("id") for i in idx]


def _without_parts(rec: dict[str, Any], idx: list[int]) -> dict[str, Any] | None:
    """``rec`` without the parts at ``idx``; None when nothing would be left."""
    parts = [p for i, p in enumerate(_parts(rec.get("content"))) if i not in idx]
    if not parts:
        return None
    return {**rec, "content": parts}


def _has_calls(rec: dict[str, Any]) -> bool:
    if _list(rec.get("toolCalls")):
        return True
    content = rec.get("content")
    return any(
        isinstance(p, dict) and p.get("functionCall") for p in (_parts(content) if content else [])
    )


def _same_response(a: Any, b: Any) -> bool:
    return (
        isinstance(a, dict)
        and isinstance(b, dict)
        and a.get("id") is not None
        and a.get("id") == b.get("id")
        and a.get("name") == b.get("name")
        and a.get("response") == b.get("response")
    )


def _same_but_repaired(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether ``after`` is ``before`` with nothing changed but what a repair sets: the
    status and result of calls that had no result, and records for calls that had none."""
    rest_b = {k: v for k, v in before.items() if k != "toolCalls"}
    rest_a = {k: v for k, v in after.items() if k != "toolCalls"}
    if rest_b != rest_a:
        return False
    calls_b = _list(before.get("toolCalls"))
    calls_a = _list(after.get("toolCalls"))
    if len(calls_a) < len(calls_b):
        return False
    for tb, ta in zip(calls_b, calls_a, strict=False):
        if tb == ta:
            continue
        if not (isinstance(tb, dict) and isinstance(ta, dict)) or _answers(tb.get("result")):
            return False
        keep_b = {k: v for k, v in tb.items() if k not in ("result", "status")}
        keep_a = {k: v for k, v in ta.items() if k not in ("result", "status")}
        if keep_b != keep_a or not _answers(ta.get("result")):
            return False
    for ta in calls_a[len(calls_b) :]:
        res = ta.get("result") if isinstance(ta, dict) else None
        if not (isinstance(res, list) and len(res) == 1 and _is_ours(res[0])):
            return False
    return True


def _undoubled(history: list[Any]) -> tuple[list[Any], list[str]]:
    """``history`` without the function responses that repeat one already given (same
    id, name and response) in the response turns after the same model turn; a turn left
    with nothing goes too."""
    out: list[Any] = []
    changes: list[str] = []
    seen: list[Any] = []
    for i, turn in enumerate(history):
        if not isinstance(turn, dict) or turn.get("role") != "user":
            seen = []
            out.append(turn)
            continue
        parts = _list(turn.get("parts"))
        kept = []
        dropped = 0
        for p in parts:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if isinstance(fr, dict) and any(_same_response(fr, x) for x in seen):
                dropped += 1
                continue
            if isinstance(fr, dict):
                seen.append(fr)
            kept.append(p)
        if not dropped:
            out.append(turn)
            continue
        changes.append(
            f"history[{i}]: left out {dropped} response(s) repeating ones the turn already "
            "holds (gemini-cli#29365)"
        )
        if kept:
            out.append({**turn, "parts": kept})
    return out, changes


def _checkpoint_kept(before: Any, after: Any) -> str | None:
    """Why ``after``'s history is not ``before``'s with repeated responses left out and
    only responses added (a turn inserted, or parts appended to a response turn), or
    None."""
    old = _undoubled(list(_checkpoint_history(before) or []))[0]
    new = _checkpoint_history(after) or []
    j = 0
    for i, turn in enumerate(old):
        while j < len(new) and new[j] != turn and not _extends(turn, new[j]):
            if not _all_ours(new[j]):
                return f"history[{j}] is neither kept nor a response toolpair added"
            j += 1
        if j == len(new):
            return f"history[{i}] would be lost"
        j += 1
    if any(not _all_ours(t) for t in new[j:]):
        return "the history would gain more than responses"
    return None


def _extends(old: Any, new: Any) -> bool:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    po, pn = old.get("parts") or [], new.get("parts") or []
    return (
        {k: v for k, v in old.items() if k != "parts"}
        == {k: v for k, v in new.items() if k != "parts"}
        and pn[: len(po)] == po
        and all(_is_ours(p) for p in pn[len(po) :])
    )


def _all_ours(turn: Any) -> bool:
    parts = _list(turn.get("parts")) if isinstance(turn, dict) else []
    return bool(parts) and all(_is_ours(p) for p in parts)


def _is_ours(part: Any) -> bool:
    fr = part.get("functionResponse") if isinstance(part, dict) else None
    return isinstance(fr, dict) and fr.get("response") == {"error": CANCELLED}


def _is_session_name(p: Path) -> bool:
    n = p.name
    if _ours(n):
        return False
    return bool(
        _SESSION_NAME.match(n)
        or _CHECKPOINT_NAME.match(n)
        or (p.parent.parent.name == "chats" and n.endswith(".jsonl"))
    )


def _ours(name: str) -> bool:
    """Backups and temporary files, of toolpair (``.bak``, ``.NAME.*.tmp``) or of the CLI
    (``.unreadable-<ms>``, ``.tmp-<pid>``): never sessions."""
    return written_by_toolpair(name) or ".bak" in name or ".unreadable-" in name or ".tmp-" in name


def _sniff_bytes(name: str, head: bytes) -> bool:
    text = head.lstrip()
    if not text:
        return False
    if text[:1] == b"[":
        return bool(_CHECKPOINT_NAME.match(name)) and b'"parts"' in head
    if text[:1] != b"{":
        return False
    first = text.split(b"\n", 1)[0]
    try:
        obj = _parse(first)
    except (ValueError, UnicodeDecodeError):
        obj = None
    if isinstance(obj, dict):
        if _str_prop(obj, "sessionId") and _str_prop(obj, "projectHash"):
            return True
        return _CHECKPOINT_NAME.match(name) is not None and "history" in obj
    # A pretty-printed document: a legacy session or a checkpoint.
    if re.match(rb'\{\s*"sessionId"\s*:', text) and b'"projectHash"' in head:
        return True
    return bool(re.match(rb'\{\s*"history"\s*:\s*\[', text)) and (
        _CHECKPOINT_NAME.match(name) is not None or b'"parts"' in head
    )


FORMAT = GeminiCliFormat()

__all__ = ["CANCELLED", "FORMAT", "NAME", "GeminiCliFormat"]
