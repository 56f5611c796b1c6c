"""The Cline family's task folders: Cline up to 3.x (and the legacy bundle of 4.x),
Cline 4.x SDK sessions, Roo Code and its Zoo Code fork, and Kilo Code's legacy
extension.

Every one of them keeps a task's history as one JSON array of Anthropic messages,
``api_conversation_history.json`` (Cline 4.x SDK sessions: the ``messages`` of
``<id>.messages.json``), beside companions that point into it: Cline's
``ui_messages.json`` (``conversationHistoryIndex``), ``context_history.json`` (keyed by
message index) and the ``conversationHistoryDeletedRange`` of the task history index;
Roo's ``ui_messages.json`` and every rewind and delete find messages by their ``ts``.
So a repair never inserts or removes a message where one follows: the user message
after a call gains the missing ``tool_result`` (first, in call order), stray results
move to the front, and orphan or duplicate results go; a call in the very last message
is answered by one appended message. Only the changed message's bytes are rewritten, in
the file's own layout; every other byte stays.

What is judged is the history as the agent sends it on resume: Roo (and its forks)
first hides what a condense or truncation replaced and, on resume, answers calls left
open in the last assistant message with "interrupted" results, appending the missing
ones of a last user message after its content. Cline sends everything outside the
deleted range of its truncation. Cline 3.35+ and 4.x also patch missing results in
memory on every request with a placeholder (``result missing``); that patch is not
applied here: the file itself stays broken for every other reader of it (the 4.x
migration, Roo's import, an export), and the placeholder hides the file's own results.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolpair._model import InvalidHistory, Policy, Violation
from toolpair.sessions._files import written_by_toolpair
from toolpair.sessions._format import Loaded, Plan, SessionError, runs_text

#: The history file of a legacy task folder.
TASK_FILE = "api_conversation_history.json"
#: The suffix of a Cline 4.x SDK session's message file.
SDK_SUFFIX = ".messages.json"
#: The user turn a resumed task sends after its history (judging stands it in).
NEXT_PROMPT = "(the next prompt)"
#: What Cline's per-request patch answers a call without a result with (ContextManager.ts).
CLINE_MISSING = "result missing"
#: What Roo answers a call left open at the end with on resume (Task.ts).
ROO_INTERRUPTED = "Task was interrupted before this tool call could be completed."
#: What Roo's write-time check gives a call still without a result (validateToolResultIds).
ROO_STILL_MISSING = "Tool execution was interrupted before completion."

#: globalStorage folder (``publisher.name``, lowercased) -> the agent.
EXTENSIONS = {
    "saoudrizwan.claude-dev": "Cline",
    "rooveterinaryinc.roo-cline": "Roo Code",
    "zoocodeorganization.zoo-code": "Zoo Code",
    "kilocode.kilo-code": "Kilo Code",
}
#: The editors' product folders that hold ``User/globalStorage``.
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
#: Keys only Roo and its forks put on a stored message.
_ROO_KEYS = frozenset(
    {"isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent"}
)
_ROO_KEYS_MARKER = "isTruncationMarker"
_HEAD = 64 * 1024


# -- where the files live ---------------------------------------------------------------


def _config_bases() -> list[Path]:
    """The per-user folders an editor keeps ``<Product>/User`` in, for this OS."""
    home = Path.home()
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        return [Path(appdata)] if appdata else [home / "AppData" / "Roaming"]
    if sys.platform == "darwin":
        return [home / "Library" / "Application Support"]
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return [Path(xdg) if xdg else home / ".config"]


def cline_data_dir() -> Path:
    """Cline's CLI and SDK data folder (``CLINE_DATA_DIR``, ``CLINE_DIR``/data, or
    ``~/.cline/data``), as ``sdk/packages/shared/src/storage/paths.ts`` resolves it."""
    explicit = os.environ.get("CLINE_DATA_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("CLINE_DIR", "").strip()
    return (Path(base) if base else Path.home() / ".cline") / "data"


def candidate_roots() -> list[Path]:
    """Every folder a family member may keep tasks in on this machine, existing or not."""
    users: list[Path] = [b / e / "User" for b in _config_bases() for e in EDITORS]
    home = Path.home()
    # Remote and Codespaces hosts keep the extension's storage under the server's folder.
    users += [home / ".vscode-server" / "data" / "User", home / ".vscode-remote" / "data" / "User"]
    roots = [u / "globalStorage" / ext / "tasks" for u in users for ext in EXTENSIONS]
    data = cline_data_dir()
    sessions = os.environ.get("CLINE_SESSION_DATA_DIR", "").strip()
    roots += [data / "tasks", Path(sessions) if sessions else data / "sessions"]
    return roots


def _agent_of(path: str) -> str | None:
    low = path.replace("\\", "/").lower()
    for ext, agent in EXTENSIONS.items():
        if f"/{ext}/" in low:
            return agent
    if "/.cline/" in low:
        return "Cline"
    return None


def _is_backup(name: str) -> bool:
    """A backup or temp file (toolpair's, or Roo's safeWriteJson's), never a session."""
    return written_by_toolpair(name) or ".bak" in name or name.endswith((".tmp", ".lock"))


# -- reading the JSON with each top-level message's span ---------------------------------

_WS = " \t\r\n"


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


@dataclass(slots=True)
class _Doc:
    """A parsed history file and where each stored message's text sits in it."""

    text: str
    #: The stored messages (dicts as the file holds them).
    stored: list[Any]
    #: Per stored message, its ``[start, end)`` in `text`.
    spans: list[tuple[int, int]]
    #: Where the message array closes (``]``), for an append.
    close: int
    #: The SDK document (everything but the messages), or None for a bare array.
    sdk: dict[str, Any] | None
    #: The indentation unit of the file ("" when compact) and of the array's items.
    unit: str
    item_indent: str


def _scan_array(
    s: str, i: int, dec: json.JSONDecoder
) -> tuple[list[Any], list[tuple[int, int]], int]:
    if i >= len(s) or s[i] != "[":
        raise SessionError("the message history is not a JSON array")
    items: list[Any] = []
    spans: list[tuple[int, int]] = []
    i = _skip(s, i + 1)
    if i < len(s) and s[i] == "]":
        return items, spans, i
    while True:
        try:
            obj, end = dec.raw_decode(s, i)
        except json.JSONDecodeError as e:
            raise SessionError(f"not valid JSON: {e.msg} at character {e.pos}") from None
        items.append(obj)
        spans.append((i, end))
        i = _skip(s, end)
        if i < len(s) and s[i] == ",":
            i = _skip(s, i + 1)
            continue
        if i < len(s) and s[i] == "]":
            return items, spans, i
        raise SessionError(f"not valid JSON: expected ',' or ']' at character {i}")


def _indent_of(s: str, start: int) -> str:
    line = s.rfind("\n", 0, start) + 1
    j = line
    while j < start and s[j] in " \t":
        j += 1
    return s[line:j]


def _parse(data: bytes) -> _Doc:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SessionError(f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    dec = json.JSONDecoder()
    i = _skip(text, 1 if text.startswith("\ufeff") else 0)
    sdk: dict[str, Any] | None = None
    if i < len(text) and text[i] == "{":
        sdk = {}
        i = _skip(text, i + 1)
        found: tuple[list[Any], list[tuple[int, int]], int] | None = None
        while i < len(text) and text[i] != "}":
            try:
                key, i = dec.raw_decode(text, i)
                i = _skip(text, i)
                if text[i] != ":":
                    raise SessionError(f"not valid JSON: expected ':' at character {i}")
                i = _skip(text, i + 1)
                if key == "messages" and text[i] == "[":
                    found = _scan_array(text, i, dec)
                    i = found[2] + 1
                else:
                    sdk[key], i = dec.raw_decode(text, i)
            except (json.JSONDecodeError, IndexError):
                raise SessionError(f"not valid JSON at character {i}") from None
            i = _skip(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip(text, i + 1)
        if found is None:
            raise SessionError("no 'messages' array: not a Cline session file")
        stored, spans, close = found
    else:
        stored, spans, close = _scan_array(text, i, dec)
    item_indent = _indent_of(text, spans[0][0]) if spans and "\n" in text[: spans[0][0]] else ""
    unit = ""
    if item_indent:
        outer = _indent_of(text, close)
        unit = item_indent[len(outer) :] if item_indent.startswith(outer) else item_indent
    return _Doc(text, stored, spans, close, sdk, unit, item_indent)


def _dump(obj: Any, doc: _Doc) -> str:
    """One message serialised as the file's own writer would: compact ``JSON.stringify``
    for a task folder, indented to the file's unit for an SDK session."""
    if not doc.unit:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    out = json.dumps(obj, ensure_ascii=False, indent=doc.unit)
    return out.replace("\n", "\n" + doc.item_indent)


# -- the history as sent ----------------------------------------------------------------


def _blocks(m: Any) -> list[Any]:
    c = m.get("content") if isinstance(m, dict) else None
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return list(c) if isinstance(c, list) else []


def _calls(m: Any) -> list[dict[str, Any]]:
    if not isinstance(m, dict) or m.get("role") != "assistant":
        return []
    return [
        b
        for b in _blocks(m)
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _is_result(b: Any) -> bool:
    return isinstance(b, dict) and b.get("type") == "tool_result"


def _wire(m: dict[str, Any]) -> dict[str, Any]:
    """A stored message as the agent sends it: its role and content only (Cline's
    ``convertClineStorageToAnthropicMessage`` also drops unsigned thinking blocks)."""
    c = m.get("content")
    if isinstance(c, list):
        c = [
            b
            for b in c
            if not (isinstance(b, dict) and b.get("type") == "thinking" and not b.get("signature"))
        ]
    return {"role": m.get("role"), "content": c}


def _roo_effective(stored: list[Any]) -> tuple[list[int], dict[int, list[Any]]]:
    """Roo's ``getEffectiveApiHistory``: the stored indices it sends, and the content of
    those whose orphan results it filters out after a summary."""
    idx = list(range(len(stored)))
    trimmed: dict[int, list[Any]] = {}
    summaries = [
        i for i, m in enumerate(stored) if isinstance(m, dict) and m.get("isSummary") is True
    ]
    markers = {
        m.get("truncationId")
        for m in stored
        if isinstance(m, dict) and m.get(_ROO_KEYS_MARKER) and m.get("truncationId")
    }
    if summaries:
        ids = {b["id"] for i in idx[summaries[-1] :] for b in _calls(stored[i])}
        kept: list[int] = []
        for i in idx[summaries[-1] :]:
            m = stored[i]
            c = m.get("content") if isinstance(m, dict) else None
            if m.get("role") == "user" and isinstance(c, list):
                f = [b for b in c if not (_is_result(b) and b.get("tool_use_id") not in ids)]
                if not f:
                    continue
                if len(f) != len(c):
                    trimmed[i] = f
            kept.append(i)
        markers = {
            stored[i].get("truncationId")
            for i in kept
            if stored[i].get(_ROO_KEYS_MARKER) and stored[i].get("truncationId")
        }
        return [i for i in kept if stored[i].get("truncationParent") not in markers], trimmed
    summary_ids = {
        m.get("condenseId")
        for m in stored
        if isinstance(m, dict) and m.get("isSummary") and m.get("condenseId")
    }
    out = []
    for i in idx:
        m = stored[i]
        if isinstance(m, dict):
            if m.get("condenseParent") and m["condenseParent"] in summary_ids:
                continue
            if m.get("truncationParent") and m["truncationParent"] in markers:
                continue
        out.append(i)
    return out, trimmed


def _roo_fix_ids(user: list[Any], calls: list[dict[str, Any]]) -> list[Any]:
    """Roo's write-time ``validateAndFixToolResultIds`` on the user turn a resume sends."""
    valid = {c["id"] for c in calls}
    results = [b for b in user if _is_result(b)]
    seen: set[str] = set()
    dedup: list[Any] = []
    for b in user:
        if _is_result(b):
            tid = b.get("tool_use_id")
            if tid in seen:
                continue
            seen.add(str(tid))
        dedup.append(b)
    results = [b for b in dedup if _is_result(b)]
    if all(r.get("tool_use_id") in valid for r in results) and valid <= seen:
        return user
    used: set[str] = set()
    out: list[Any] = []
    for b in dedup:
        if not _is_result(b):
            out.append(b)
            continue
        tid = b.get("tool_use_id")
        if tid in valid and tid not in used:
            used.add(tid)
            out.append(b)
            continue
        k = next(n for n, r in enumerate(results) if r is b)
        if k < len(calls) and calls[k]["id"] not in used:
            used.add(calls[k]["id"])
            out.append({**b, "tool_use_id": calls[k]["id"]})
    missing = [
        {"type": "tool_result", "tool_use_id": c["id"], "content": ROO_STILL_MISSING}
        for c in calls
        if c["id"] not in used
    ]
    return missing + out


@dataclass(slots=True)
class _State:
    doc: _Doc
    #: "cline" (a legacy task), "roo" (Roo, Zoo, Kilo legacy) or "sdk".
    kind: str
    agent: str
    #: Per sent message (the stand-in excluded), its stored index.
    sent: list[int]
    #: Stored indices hidden from the request (truncation, condense).
    hidden: list[int]
    #: Per stored index, the content Roo sends where it filters orphan results out.
    trimmed: dict[int, list[Any]]
    #: Filled by `plan`: the stored indices it rewrote, and whether it appended one.
    edited: set[int] = field(default_factory=set)
    appended: bool = False


def _deleted_range(path: str) -> tuple[int, int] | None:
    """The task's ``conversationHistoryDeletedRange`` from Cline's task history index
    (``globalStorage/state/taskHistory.json``), if it is there."""
    p = Path(path).resolve()
    task = p.parent.name
    index = p.parent.parent.parent / "state" / "taskHistory.json"
    try:
        with open(index, "rb") as f:
            items = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(items, list):
        return None
    for it in items:
        if isinstance(it, dict) and str(it.get("id")) == task:
            r = it.get("conversationHistoryDeletedRange")
            if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r):
                return (r[0], r[1])
    return None


def _kind(doc: _Doc, path: str) -> tuple[str, str]:
    if doc.sdk is not None:
        return "sdk", "Cline 4.x SDK session"
    agent = _agent_of(path)
    roo_like = any(
        isinstance(m, dict) and (_ROO_KEYS.intersection(m) or m.get(_ROO_KEYS_MARKER))
        for m in doc.stored
    ) or (bool(path) and (Path(path).parent / "history_item.json").exists())
    if agent in ("Roo Code", "Zoo Code", "Kilo Code") or (agent is None and roo_like):
        return "roo", agent or "Roo Code family"
    return "cline", agent or "Cline family"


def _build(doc: _Doc, path: str) -> tuple[_State, list[Any], list[str], list[int | None]]:
    kind, agent = _kind(doc, path)
    stored = doc.stored
    for i, m in enumerate(stored):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise SessionError(f"messages[{i}] is not a user or assistant message")
        if not isinstance(m.get("content"), list | str):
            raise SessionError(f"messages[{i}] has no content list")
    trimmed: dict[int, list[Any]] = {}
    if kind == "roo":
        sent, trimmed = _roo_effective(stored)
    elif kind == "cline" and path and (r := _deleted_range(path)) is not None and len(stored) > 2:
        sent = [0, 1, *list(range(r[1] + 1, len(stored)))]
    else:
        sent = list(range(len(stored)))
    hidden = sorted(set(range(len(stored))) - set(sent))
    msgs: list[Any] = []
    for i in sent:
        w = _wire(stored[i])
        if i in trimmed:
            w["content"] = trimmed[i]
        msgs.append(w)
    if kind == "cline" and hidden and len(msgs) > 2 and msgs[2]["role"] == "user":
        # Cline strips every result from the first message after its cut.
        # Cline strips every result from the first message after its cut, and its
        # per-request patch answers the calls of messages[1] with a placeholder: nothing
        # on disk can answer them otherwise, so that seam is judged as Cline sends it.
        kept = [b for b in _blocks(msgs[2]) if not _is_result(b)]
        seam = [
            {"type": "tool_result", "tool_use_id": c["id"], "content": CLINE_MISSING}
            for c in _calls(msgs[1])
        ]
        msgs[2] = {**msgs[2], "content": seam + kept}
    where = [f"messages[{i}]" for i in sent]
    starts = [doc.spans[i][0] for i in sent]
    lines: list[int | None] = []
    line, pos = 1, 0
    for s in starts:
        line += doc.text.count("\n", pos, s)
        pos = s
        lines.append(line)
    _resume(kind, msgs, stored, sent, where, lines)
    return _State(doc, kind, agent, sent, hidden, trimmed), msgs, where, lines


def _resume(
    kind: str,
    msgs: list[Any],
    stored: list[Any],
    sent: list[int],
    where: list[str],
    lines: list[int | None],
) -> None:
    """The turn a resume sends after the history, as each agent builds it."""
    prompt = {"type": "text", "text": NEXT_PROMPT}
    last = msgs[-1] if msgs else None
    last_stored = stored[sent[-1]] if sent else None
    if (
        kind == "roo"
        and last is not None
        and not (isinstance(last_stored, dict) and last_stored.get("isSummary"))
    ):
        if last["role"] == "assistant":
            calls = _calls(last)
            content: list[Any] = [
                {"type": "tool_result", "tool_use_id": c["id"], "content": ROO_INTERRUPTED}
                for c in calls
            ]
            msgs.append({"role": "user", "content": _roo_fix_ids([*content, prompt], calls)})
            where.append("the next prompt")
            lines.append(None)
            return
        # Roo pops the last user message and sends its content, the missing results
        # appended after it, and the next prompt as one turn.
        prev = msgs[-2] if len(msgs) > 1 and msgs[-2]["role"] == "assistant" else None
        calls = _calls(prev) if prev is not None else []
        have = {b.get("tool_use_id") for b in _blocks(last) if _is_result(b)}
        missing = [
            {"type": "tool_result", "tool_use_id": c["id"], "content": ROO_INTERRUPTED}
            for c in calls
            if c["id"] not in have
        ]
        content = _blocks(last) + missing + [prompt]
        if calls:
            content = _roo_fix_ids(content, calls)
        msgs[-1] = {"role": "user", "content": content}
        where[-1] += " + the next prompt"
        return
    if last is not None and last["role"] == "user":
        # Cline pops the last user message and re-sends it with the resumption text.
        msgs[-1] = {"role": "user", "content": [*_blocks(last), prompt]}
        where[-1] += " + the next prompt"
        return
    msgs.append({"role": "user", "content": [prompt]})
    where.append("the next prompt")
    lines.append(None)


def _model(doc: _Doc, path: str) -> str | None:
    for m in reversed(doc.stored):
        info = m.get("modelInfo") if isinstance(m, dict) else None
        mid = info.get("id") if isinstance(info, dict) else None
        if isinstance(mid, str):
            return mid
    if doc.sdk is not None:
        return None
    try:
        with open(Path(path).parent / "task_metadata.json", "rb") as f:
            meta = json.load(f)
        usage = meta.get("model_usage") if isinstance(meta, dict) else None
        if isinstance(usage, list) and usage and isinstance(usage[-1], dict):
            mid = usage[-1].get("model_id")
            return mid if isinstance(mid, str) else None
    except (OSError, ValueError):
        return None
    return None


# -- repair -----------------------------------------------------------------------------


def _error_result(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "is_error": True, "content": text}


def _as_text(b: Any) -> Any:
    """An orphan result as Roo itself keeps one whose call is hidden (Task.ts,
    addToApiConversationHistory): a text block, so that nothing it said is lost."""
    if not _is_result(b):
        return b
    c = b.get("content")
    body = c if isinstance(c, str) else json.dumps(c, ensure_ascii=False, separators=(",", ":"))
    return {"type": "text", "text": f"Tool result:\n{body}"}


def _fixed_user(
    content: list[Any], calls: list[dict[str, Any]], text: str
) -> tuple[list[Any], list[str]]:
    """The user message after ``calls``: their results first in call order (missing ones
    an error), every other block after them in its order; orphan and duplicate
    results dropped."""
    ids = [c["id"] for c in calls]
    first: dict[str, Any] = {}
    rest: list[Any] = []
    notes: list[str] = []
    for b in content:
        if _is_result(b):
            tid = b.get("tool_use_id")
            if tid in ids and tid not in first:
                first[str(tid)] = b
            elif tid in ids:
                notes.append(f"dropped a duplicate result for {tid}")
            else:
                notes.append(f"dropped an orphan result for {tid}")
            continue
        rest.append(b)
    out = []
    for cid in ids:
        if cid in first:
            out.append(first[cid])
        else:
            out.append(_error_result(cid, text))
            notes.append(f"added an error result for {cid}")
    new = out + rest
    if not any(n.startswith("added") for n in notes) and [id(b) for b in new] != [
        id(b) for b in content
    ]:
        notes.append("moved the results first, in call order")
    return new, notes


def _locator(st: _State, lines: list[int | None]) -> Callable[[Violation], int | None]:
    """In an indented file, the line of the message that holds the id a violation names."""

    def locate(v: Violation) -> int | None:
        if not 0 <= v.index < len(lines):
            return None
        first = lines[v.index]
        if v.index >= len(st.sent) or first is None:
            return first
        a, b = st.doc.spans[st.sent[v.index]]
        for i in v.ids:
            at = st.doc.text.find(json.dumps(i), a, b) if i else -1
            if at >= 0:
                return first + st.doc.text.count("\n", a, at)
        return first

    return locate


class ClineFormat:
    name = "cline"
    agent = "Cline family"
    close_hint = (
        "close the task first: switch the extension to another task or close the editor "
        "window (it keeps the open task in memory and writes it back)"
    )
    provider = "anthropic"
    wire = "anthropic"

    def sniff(self, path: str) -> bool:
        p = Path(path)
        if p.is_dir():
            return (p / TASK_FILE).is_file() or (p / f"{p.name}{SDK_SUFFIX}").is_file()
        if p.name == TASK_FILE:
            return True
        if not p.name.endswith(SDK_SUFFIX):
            return False
        try:
            with open(p, "rb") as f:
                head = f.read(_HEAD)
        except OSError:
            return False
        return b'"messages"' in head and head.lstrip()[:1] == b"{"

    def target(self, path: str) -> str:
        p = Path(path)
        if p.is_dir():
            sdk = p / f"{p.name}{SDK_SUFFIX}"
            return str(sdk if sdk.is_file() and not (p / TASK_FILE).is_file() else p / TASK_FILE)
        return str(p)

    def load(self, data: bytes, path: str) -> Loaded:
        doc = _parse(data)
        if not doc.stored:
            raise SessionError("the task holds no message")
        state, msgs, where, lines = _build(doc, path)
        model = _model(doc, path)
        parts = [f"cline format ({state.agent})", "anthropic rules"]
        if model:
            parts.append(f"model {model}")
        parts.append(f"{len(doc.stored)} stored messages, {len(state.sent)} sent")
        if state.kind != "roo":
            parts.append("judged as stored (Cline 3.35+ and 4.x patch missing results in memory)")
        skipped = ""
        if state.hidden:
            why = "Cline's truncation" if state.kind == "cline" else "a condense or truncation"
            hidden = runs_text(state.hidden, _message_run)
            skipped = f"{len(state.hidden)} messages hidden by {why} ({hidden})"
        return Loaded(
            path=path,
            format=self.name,
            provider=self.provider,
            wire=self.wire,
            messages=msgs,
            where=where,
            lines=lines,
            described=", ".join(parts),
            model=model,
            skipped=skipped,
            state=state,
            stand_in=where[-1] == "the next prompt",
            locate=_locator(state, lines) if doc.unit else None,
        )

    def history(self, obj: Any) -> list[Any]:
        if isinstance(obj, list):
            stored, sdk = obj, None
        elif isinstance(obj, dict) and isinstance(obj.get("messages"), list):
            stored, sdk = obj["messages"], {k: v for k, v in obj.items() if k != "messages"}
        else:
            raise InvalidHistory("a Cline history is a JSON array or an SDK session document")
        doc = _Doc("", stored, [(0, 0)] * len(stored), 0, sdk, "", "")
        try:
            _state, msgs, _where, _lines = _build(doc, "")
        except SessionError as e:
            raise InvalidHistory(str(e)) from None
        return msgs

    def plan(self, loaded: Loaded, data: bytes, model: str | None) -> Plan | None:
        st: _State = loaded.state
        doc = st.doc
        stored = doc.stored
        text = Policy().placeholder
        new: dict[int, Any] = {}
        changes: list[str] = []
        unrepaired: list[str] = []
        append: dict[str, Any] | None = None
        for k, i in enumerate(st.sent):
            m = stored[i]
            prev_calls = _calls(stored[st.sent[k - 1]]) if k > 0 else []
            c = m["content"]
            if m["role"] == "user" and not prev_calls and isinstance(c, list):
                seen = st.trimmed.get(i, c)
                if any(_is_result(b) for b in seen):
                    # Results here answer no call of the message before: orphans.
                    if st.kind == "roo":
                        new[i] = {**m, "content": [_as_text(b) for b in c]}
                        changes.append(
                            f"messages[{i}]: results that answer no call turned into text"
                        )
                    else:
                        kept = [b for b in c if not _is_result(b)] or [
                            {"type": "text", "text": "(a tool result without its call was removed)"}
                        ]
                        new[i] = {**m, "content": kept}
                        changes.append(f"messages[{i}]: dropped results that answer no call")
            calls = _calls(m)
            if not calls:
                continue
            if k + 1 < len(st.sent):
                j = st.sent[k + 1]
                nxt = stored[j]
                if nxt["role"] != "user":
                    unrepaired.append(
                        f"unrepaired: messages[{i}]: another assistant message follows its "
                        "calls; inserting a user message would shift every index the "
                        "companion files hold"
                    )
                    continue
                if st.kind == "cline" and st.hidden and k == 1:
                    continue  # the truncation seam: Cline answers these itself
                content = nxt["content"] if isinstance(nxt["content"], list) else _blocks(nxt)
                _fixed, sent_notes = _fixed_user(st.trimmed.get(j, content), calls, text)
                if not sent_notes:
                    continue
                fixed, notes = _fixed_user(content, calls, text)
                new[j] = {**nxt, "content": fixed}
                changes += [f"messages[{j}]: {n}" for n in notes]
                continue
            if i != len(stored) - 1:
                unrepaired.append(
                    f"unrepaired: messages[{i}]: its calls are the last sent, but hidden "
                    "messages follow it"
                )
                continue
            if st.kind == "roo":
                # Roo answers these itself on resume ("interrupted"): nothing to write.
                continue
            append = {"role": "user", "content": [_error_result(c["id"], text) for c in calls]}
            ts = m.get("ts")
            if isinstance(ts, int) and not isinstance(ts, bool):
                append["ts"] = ts + 1
            if st.kind == "sdk":
                append = {"id": f"{m.get('id', 'msg')}_toolpair", **append}
            changes += [
                f"messages[{len(stored)}]: appended an error result for {c['id']}" for c in calls
            ]
        if not new and append is None:
            return None
        out: list[str] = []
        pos = 0
        for i in sorted(new):
            a, b = doc.spans[i]
            out += [doc.text[pos:a], _dump(new[i], doc)]
            pos = b
        if append is not None:
            last_end = doc.spans[-1][1]
            out.append(doc.text[pos:last_end])
            sep = "," + ("\n" + doc.item_indent if doc.unit else "")
            out += [sep, _dump(append, doc)]
            pos = last_end
        out.append(doc.text[pos:])
        st.edited = set(new)
        st.appended = append is not None
        return Plan(changes + unrepaired, "".join(out).encode("utf-8"), len(changes))

    def verify(self, before: Loaded, after: Loaded) -> str | None:
        lock = Path(before.path + ".lock")
        if lock.exists():
            # Roo's safeWriteJson holds it while it writes the task (proper-lockfile).
            return f"{lock} exists: the extension is writing this task; close the task first"
        b: _State = before.state
        a: _State = after.state
        n = len(b.doc.stored)
        want = n + (1 if b.appended else 0)
        if len(a.doc.stored) != want:
            return f"the task would hold {len(a.doc.stored)} messages, not {want}"
        if a.kind != b.kind:
            return f"the file would be read as a {a.kind} task, not {b.kind}"
        if b.doc.sdk != a.doc.sdk:
            return "the session document's other fields would change"
        for i in range(n):
            old, new = b.doc.stored[i], a.doc.stored[i]
            if i not in b.edited:
                s0, e0 = b.doc.spans[i]
                s1, e1 = a.doc.spans[i]
                if b.doc.text[s0:e0] != a.doc.text[s1:e1]:
                    return f"messages[{i}] would change"
                continue
            if {k: v for k, v in old.items() if k != "content"} != {
                k: v for k, v in new.items() if k != "content"
            }:
                return f"messages[{i}] would change more than its content"
        if a.sent[: len(b.sent)] != b.sent:
            return "the messages sent on resume would change"
        return None

    def default_roots(self) -> list[Path]:
        # Every candidate: scan walks those that exist, and names them all when none does.
        return candidate_roots()

    def session_files(self, root: Path) -> Iterator[Path]:
        stack = [str(root)]
        while stack:
            d = stack.pop()
            try:
                it = os.scandir(d)
            except OSError:
                continue
            with it:
                subdirs: list[str] = []
                names: set[str] = set()
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        subdirs.append(e.path)
                    elif not _is_backup(e.name):
                        names.add(e.name)
            if TASK_FILE in names:
                yield Path(d) / TASK_FILE
            base = os.path.basename(d)
            if f"{base}{SDK_SUFFIX}" in names:
                yield Path(d) / f"{base}{SDK_SUFFIX}"
            stack.extend(sorted(subdirs, reverse=True))


def _message_run(first: int, last: int) -> str:
    return f"messages[{first}]" if first == last else f"messages[{first}-{last}]"


FORMAT = ClineFormat()
