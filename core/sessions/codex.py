"""OpenAI Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and
``archived_sessions/``), ``.jsonl.zst`` when Codex has compressed a cold one.

Each line is ``{timestamp, ordinal?, type, payload}``; the history is the
``response_item`` payloads (OpenAI Responses items). Read as Codex rebuilds it on resume
(codex-rs ``core/src/rollout/replay.rs``): a ``compacted`` line with a
``replacement_history`` replaces the history so far (one without rebuilds it from the
context, the user messages and the summary), an ``event_msg`` ``thread_rolled_back``
drops the last N user turns; items that are not sent (``ghost_snapshot``, system
messages, unknown types) are left out, as ``record_items`` leaves them out. Before every
request Codex normalises the history (``core/src/context_manager/normalize.rs``): an
``aborted`` output goes right after each call without one, and outputs whose call is
gone are dropped. The default view is that normalised history (is this session stuck?);
the raw view (``--raw``) is the replayed history before normalisation, what an upstream
sees that Codex's healing does not reach.

Judged with the Responses rules for the model the rollout names (the last
``turn_context``), or with Chat Completions where ``config.toml`` of the rollout's
``CODEX_HOME`` sets the provider's ``wire_api = "chat"`` (Codex before 0.50-ish).

A repair only appends, as Codex itself does on resume: new lines after the last byte,
each with the next ``ordinal`` where the file carries ordinals (the history projection
of ``thread_history_1.sqlite`` keeps a byte offset and the next ordinal, so nothing is
ever inserted). Calls left without output get an output line each; anything an output
line cannot fix (an output whose call is gone, a duplicate output, an output that a
Chat Completions upstream needs right after its call, empty call ids) gets one
``compacted`` line whose ``replacement_history`` is the whole history with each call
followed by its output: Codex's own whole-history replacement. ``state_5.sqlite`` is
never touched. A ``.jsonl.zst`` rollout is read (with Python 3.14's ``compression.zstd``)
but not repaired: Codex decompresses it to ``.jsonl`` before appending, and so must the
user.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import toolpair
from toolpair._model import InvalidHistory
from toolpair.sessions._files import written_by_toolpair
from toolpair.sessions._format import Loaded, Plan, SessionError

NAME = "codex"
NEXT_PROMPT = "(the next prompt)"
#: What Codex's normalisation answers a call without output with (normalize.rs).
CODEX_ABORTED = "aborted"
#: What a repair answers a call without output with.
ABORTED = "aborted: no output was recorded for this call (added by toolpair repair)"
_SNIFF = 65536
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_NAME = re.compile(r"rollout-.+\.jsonl(\.zst)?\Z")
_HEAD = re.compile(
    rb'\A\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"session_meta"'
)

#: Call item type -> the output type that answers it (normalize.rs pairs local shell
#: calls with function_call_output).
CALLS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
    "tool_search_call": "tool_search_output",
}
OUTPUTS = {"function_call_output", "custom_tool_call_output", "tool_search_output"}
#: Response item types Codex keeps in the history it sends (``is_api_message``).
_SENT = {
    "message",
    "reasoning",
    *CALLS,
    *OUTPUTS,
    "web_search_call",
    "image_generation_call",
    "compaction",
}
#: A user message with one of these openings is context, not a turn (rollback and
#: compaction count turns without them).
_CONTEXT = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)


def zstd_available() -> bool:
    try:
        import compression.zstd  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def _decompress(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise SessionError(
            "a compressed rollout (.jsonl.zst): reading it needs Python 3.14 or later "
            "(compression.zstd); or decompress it first (zstd -d FILE)"
        ) from None
    try:
        out: bytes = zstd.decompress(data)
    except Exception as e:
        raise SessionError(f"a .jsonl.zst rollout that does not decompress: {e}") from None
    return out


def _text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)
    )


def _is_turn(item: dict[str, Any]) -> bool:
    """``is_user_turn_boundary``: a user message that is not context."""
    if item.get("type") != "message" or item.get("role") != "user":
        return False
    return not _text(item).lstrip().lower().startswith(_CONTEXT)


def _call_id(item: dict[str, Any]) -> str:
    """The pairing id; a missing one reads as empty, as Codex reads it."""
    cid = item.get("call_id")
    return cid if isinstance(cid, str) else ""


# -- reading ------------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    payload: dict[str, Any]
    line: int | None
    where: str


@dataclass(slots=True)
class _Read:
    meta: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    items: list[_Item] = field(default_factory=list)
    lines: int = 0
    bad: int = 0
    not_sent: int = 0
    compactions: int = 0
    rollbacks: int = 0
    last_ordinal: int | None = None
    ends_with_newline: bool = True


def _parse_lines(text_lines: Iterable[str]) -> _Read:
    r = _Read()
    decode = json.JSONDecoder().decode
    history: list[_Item] = []
    last = ""
    for n, raw in enumerate(text_lines, 1):
        last = raw
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        r.lines += 1
        try:
            obj = decode(line)
        except ValueError:
            r.bad += 1
            continue
        if not isinstance(obj, dict):
            r.bad += 1
            continue
        if isinstance(obj.get("ordinal"), int):
            r.last_ordinal = obj["ordinal"]
        kind, payload = obj.get("type"), obj.get("payload")
        if not isinstance(payload, dict):
            r.bad += 1
            continue
        if kind == "session_meta":
            if not r.meta:
                r.meta = payload
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                r.model = payload["model"]
        elif kind == "response_item":
            if not _readable(payload):
                r.bad += 1
                continue
            history.append(_Item(payload, n, f"line {n}"))
        elif kind == "compacted":
            r.compactions += 1
            repl = payload.get("replacement_history")
            if isinstance(repl, list):
                history = [
                    _Item(x, n, f"line {n} replacement_history[{i}]")
                    for i, x in enumerate(repl)
                    if isinstance(x, dict) and _readable(x)
                ]
            else:
                history = _rebuilt(history, payload.get("message"), n)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            r.rollbacks += 1
            num = payload.get("num_turns")
            _drop_turns(history, num if isinstance(num, int) else 0)
    r.ends_with_newline = last.endswith("\n") or not last
    for it in history:
        if _sent(it.payload):
            r.items.append(it)
        else:
            r.not_sent += 1
    return r


def _readable(p: dict[str, Any]) -> bool:
    """Whether Codex reads the item at all (codex-cli 0.171.0 reads an output with no
    ``call_id`` and sends it so: #42088)."""
    return isinstance(p.get("type"), str)


def _sent(p: dict[str, Any]) -> bool:
    kind = p.get("type")
    if kind not in _SENT:
        return False
    return not (kind == "message" and p.get("role") == "system")


def _rebuilt(history: list[_Item], message: Any, n: int) -> list[_Item]:
    """``build_compacted_history`` without a replacement: the context before the first
    turn, every user message, and the summary as a user message."""
    first = next((i for i, it in enumerate(history) if _is_turn(it.payload)), len(history))
    out = history[:first]
    out += [it for it in history[first:] if _is_turn(it.payload)]
    summary = message if isinstance(message, str) else ""
    out.append(
        _Item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": summary}],
            },
            n,
            f"line {n} summary",
        )
    )
    return out


def _drop_turns(history: list[_Item], num: int) -> None:
    if num <= 0:
        return
    turns = [i for i, it in enumerate(history) if _is_turn(it.payload)]
    if not turns:
        return
    cut = turns[0] if num >= len(turns) else turns[len(turns) - num]
    del history[cut:]


def _normalised(items: Sequence[_Item]) -> tuple[list[_Item], list[str]]:
    """``ensure_call_outputs_present`` then ``remove_orphan_outputs``."""
    outs = {(it.payload.get("type"), _call_id(it.payload)) for it in items}
    out: list[_Item] = []
    notes: list[str] = []
    for it in items:
        out.append(it)
        p = it.payload
        kind, cid = p.get("type"), _call_id(p)
        if kind in CALLS and (CALLS[str(kind)], cid) not in outs:
            out.append(_Item(_synthetic(str(kind), cid, CODEX_ABORTED), None, "inserted by Codex"))
            notes.append(cid)
    calls = {
        (CALLS[str(it.payload.get("type"))], _call_id(it.payload))
        for it in items
        if it.payload.get("type") in CALLS
    }
    kept: list[_Item] = []
    dropped = 0
    for it in out:
        p = it.payload
        kind, cid = p.get("type"), _call_id(p)
        # Observed with codex-cli 0.171.0: an output with no call id is sent as it is.
        orphan = kind in OUTPUTS and cid and (kind, cid) not in calls
        if orphan and not (kind == "tool_search_output" and p.get("execution") == "server"):
            dropped += 1
            continue
        kept.append(it)
    msgs = []
    if notes:
        msgs.append(f"{len(notes)} call(s) without output answered 'aborted' by Codex")
    if dropped:
        msgs.append(f"{dropped} output(s) without a call dropped by Codex")
    return kept, msgs


def _synthetic(call_type: str, cid: str, text: str) -> dict[str, Any]:
    kind = CALLS[call_type]
    if kind == "tool_search_output":
        return {
            "type": kind,
            "call_id": cid,
            "status": "completed",
            "execution": "client",
            "tools": [],
        }
    return {"type": kind, "call_id": cid, "output": text}


# -- Chat Completions (a provider configured with wire_api = "chat") -----------------


def _chat(items: Sequence[_Item]) -> tuple[list[dict[str, Any]], list[_Item]]:
    """The Chat Completions messages Codex builds from the items (calls after an
    assistant message, with nothing but reasoning or calls between, join that message),
    and per message the item it starts at."""
    msgs: list[dict[str, Any]] = []
    src: list[_Item] = []
    attach: dict[str, Any] | None = None
    for it in items:
        p = it.payload
        kind = p.get("type")
        if kind == "message":
            role = {"developer": "system"}.get(str(p.get("role")), str(p.get("role")))
            msgs.append({"role": role, "content": _text(p)})
            src.append(it)
            attach = msgs[-1] if role == "assistant" else None
        elif kind in CALLS:
            args = p.get("arguments", p.get("input", ""))
            call = {
                "id": _call_id(p),
                "type": "function",
                "function": {
                    "name": p.get("name", kind),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            if attach is not None:
                attach.setdefault("tool_calls", []).append(call)
            else:
                msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
                src.append(it)
                attach = msgs[-1]
        elif kind in OUTPUTS:
            out = p.get("output")
            text = out if isinstance(out, str) else json.dumps(out)
            msgs.append({"role": "tool", "tool_call_id": _call_id(p), "content": text})
            src.append(it)
            attach = None
        elif kind != "reasoning":
            attach = None
    return msgs, src


# -- the format ----------------------------------------------------------------------


@dataclass(slots=True)
class _State:
    read: _Read
    #: The items judged (normalised, or raw), without the next-prompt stand-in.
    items: list[_Item]
    chat: bool
    compressed: bool


def _codex_home(path: str) -> Path | None:
    p = Path(path).resolve().parent
    for d in (p, *p.parents):
        if d.name in ("sessions", "archived_sessions"):
            return d.parent
    return None


def _chat_wire(path: str, provider_id: Any) -> bool:
    """Whether ``config.toml`` beside the rollout's sessions folder configures the
    rollout's provider with ``wire_api = "chat"``."""
    if not isinstance(provider_id, str):
        return False
    home = _codex_home(path)
    if home is None:
        return False
    try:
        text = (home / "config.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    section = re.search(
        rf'^\[model_providers\.(?:"{re.escape(provider_id)}"|{re.escape(provider_id)})\]\s*$(.*?)(?=^\[|\Z)',
        text,
        re.M | re.S,
    )
    return bool(section and re.search(r'^\s*wire_api\s*=\s*"chat"', section.group(1), re.M))


class CodexFormat:
    name = NAME
    agent = "Codex CLI"
    close_hint = "quit Codex (/quit or Ctrl-C) in every terminal that has this session open"
    provider = "openai-responses"
    wire = "openai-responses"
    providers = ("openai-responses", "openai")

    def __init__(self, raw: bool = False) -> None:
        self.raw = raw

    def raw_view(self) -> CodexFormat:
        """The same format judging what the file holds, before Codex's normalisation."""
        return CodexFormat(raw=True)

    # -- finding files --

    def sniff(self, path: str) -> bool:
        p = Path(path)
        if not p.is_file() or written_by_toolpair(p.name):
            return False
        try:
            with open(p, "rb") as f:
                head = f.read(_SNIFF)
        except OSError:
            return False
        if head.startswith(_ZSTD_MAGIC):
            return bool(_NAME.match(p.name))
        return _HEAD.match(head) is not None

    def target(self, path: str) -> str:
        return path

    def default_roots(self) -> list[Path]:
        home = os.environ.get("CODEX_HOME")
        base = Path(home) if home else Path.home() / ".codex"
        return [base / "sessions", base / "archived_sessions"]

    def session_files(self, root: Path) -> Iterator[Path]:
        if root.is_file():
            if _NAME.match(root.name):
                yield root
            return
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                if _NAME.match(f) and not written_by_toolpair(f):
                    yield Path(d) / f

    # -- reading --

    def load(self, data: bytes, path: str) -> Loaded:
        compressed = data.startswith(_ZSTD_MAGIC)
        if compressed:
            data = _decompress(data)
        text = data.decode("utf-8", errors="replace")
        return self._loaded(_parse_lines(text.splitlines(keepends=True)), path, compressed)

    def load_path(self, path: str) -> Loaded:
        with open(path, "rb") as f:
            if f.read(4) == _ZSTD_MAGIC:
                f.seek(0)
                return self.load(f.read(), path)
            f.seek(0)
            lines = (raw.decode("utf-8", errors="replace") for raw in f)
            return self._loaded(_parse_lines(lines), path, False)

    def looks_like(self, objs: list[Any]) -> bool:
        return any(
            isinstance(o, dict)
            and o.get("type") == "session_meta"
            and isinstance(o.get("payload"), dict)
            for o in objs[:3]
        )

    def history(self, obj: Any) -> list[Any]:
        if not isinstance(obj, list | tuple) or not self.looks_like(list(obj)):
            raise InvalidHistory(
                "a codex rollout is a list of line objects starting with session_meta"
            )
        text = [json.dumps(o) + "\n" for o in obj]
        r = _parse_lines(text)
        items = r.items if self.raw else _normalised(r.items)[0]
        return [it.payload for it in items]

    def _loaded(self, r: _Read, path: str, compressed: bool) -> Loaded:
        if not r.meta:
            raise SessionError("not a Codex rollout: no session_meta line")
        chat = _chat_wire(path, r.meta.get("model_provider"))
        notes: list[str] = []
        if self.raw:
            items = list(r.items)
        else:
            items, notes = _normalised(r.items)
        model = r.model
        provider = "openai" if chat else "openai-responses"
        stand = _Item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": NEXT_PROMPT}],
            },
            None,
            "the next prompt",
        )
        if chat:
            messages, src = _chat([*items, stand])
            wire = "openai"
        else:
            messages = [it.payload for it in [*items, stand]]
            src = [*items, stand]
            wire = "openai-responses"
        view = "raw: what the file holds" if self.raw else "as Codex sends it on resume"
        parts = [
            f"codex format ({view})",
            f"{'Chat Completions' if chat else 'Responses'} rules",
        ]
        if model:
            parts.append(f"model {model}")
        if isinstance(r.meta.get("model_provider"), str):
            parts.append(f"provider {r.meta['model_provider']}")
        if isinstance(r.meta.get("cli_version"), str):
            parts.append(f"Codex {r.meta['cli_version']}")
        parts.append(f"{r.lines} lines")
        if compressed:
            parts.append("zstd-compressed")
        if r.compactions:
            parts.append(f"{r.compactions} compaction(s) replayed")
        if r.rollbacks:
            parts.append(f"{r.rollbacks} rollback(s) replayed")
        parts.extend(notes)
        skipped = []
        if r.bad:
            skipped.append(f"{r.bad} line(s) that do not parse, skipped as Codex skips them")
        if r.not_sent:
            skipped.append(f"{r.not_sent} item(s) Codex does not send (snapshots, system, unknown)")
        return Loaded(
            path=path,
            format=NAME,
            provider=provider,
            wire=wire,
            messages=messages,
            where=[it.where for it in src],
            lines=[it.line for it in src],
            described=", ".join(parts),
            model=model,
            skipped="; ".join(skipped),
            context={},
            state=_State(r, items, chat, compressed),
            stand_in=True,
        )

    # -- repairing --

    def plan(self, loaded: Loaded, data: bytes, model: str | None) -> Plan | None:
        st = loaded.state
        if not isinstance(st, _State):
            raise SessionError("plan() needs the Loaded that load() returned")
        m = model or loaded.model
        if not self._violations(loaded, m):
            return None
        if st.compressed:
            return Plan(
                [
                    "unrepaired: a compressed rollout (.jsonl.zst) is not appended to: "
                    "decompress it to .jsonl first as Codex does before appending "
                    "(zstd -d --rm FILE), then repair the .jsonl"
                ],
                data,
                0,
            )
        raw = st.read.items
        dangling = _dangling(raw)
        tail = b"" if st.read.ends_with_newline or not data else b"\n"
        ordinal = st.read.last_ordinal
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"

        def line(kind: str, payload: dict[str, Any]) -> bytes:
            nonlocal ordinal
            obj: dict[str, Any] = {"timestamp": stamp}
            if ordinal is not None:
                ordinal += 1
                obj["ordinal"] = ordinal
            obj["type"] = kind
            obj["payload"] = payload
            return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

        if dangling:
            added = b"".join(
                line("response_item", _synthetic(k, cid, ABORTED)) for k, cid, _ in dangling
            )
            new = data + tail + added
            after = self.load(new, loaded.path)
            if not self._violations(after, m):
                changes = [f"appended an output for {name} ({cid})" for _, cid, name in dangling]
                return Plan(changes, new, len(changes))
        if st.chat:
            # Seen with codex-cli 0.80.0 (tests/integrations/codex_cli): with a provider on
            # wire_api = "chat" it resumes past an appended replacement_history and
            # sends the items as they were; 0.171.0, which takes the replacement, refuses
            # the chat wire API. No append fixes what a chat upstream refuses.
            return Plan(
                [
                    'unrepaired: on a Chat Completions provider (wire_api = "chat") Codex '
                    "does not replay an appended history replacement, and no output line "
                    "can move or remove an item: switch the provider to wire_api = "
                    '"responses" (or start a new session)'
                ],
                data,
                0,
            )
        ordinal = st.read.last_ordinal
        history, changes = _canonical(raw, st.chat)
        if not changes:
            return Plan(["unrepaired: no output line or history replacement fixes this"], data, 0)
        payload = {"message": "", "replacement_history": [it for it in history]}
        new = data + tail + line("compacted", payload)
        after = self.load(new, loaded.path)
        left = self._violations(after, m)
        fixes = len(changes)
        changes = [f"in a compacted replacement_history appended: {c}" for c in changes]
        changes += [f"unrepaired: {v.code} at {after.where[v.index]}: {v.message}" for v in left]
        return Plan(changes, new, fixes)

    def _violations(self, loaded: Loaded, model: str | None) -> list[Any]:
        return toolpair.validate(loaded.messages, loaded.provider, model=model, format=loaded.wire)

    def verify(self, before: Loaded, after: Loaded) -> str | None:
        b, a = before.state, after.state
        if not isinstance(b, _State) or not isinstance(a, _State):
            return "not loaded by the codex format"
        if a.read.meta != b.read.meta:
            return "the session_meta would read otherwise"
        if b.read.last_ordinal is not None and a.read.last_ordinal is None:
            return "the appended lines would carry no ordinal"
        kept = [it.payload for it in a.read.items]
        j = 0
        for it in b.read.items:
            p = it.payload
            if p.get("type") in OUTPUTS:
                continue
            while j < len(kept) and kept[j] != p and not _same_call(kept[j], p):
                if kept[j].get("type") not in OUTPUTS:
                    return f"{it.where}: an item would be added that is not an output"
                j += 1
            if j == len(kept):
                return f"{it.where} would be lost"
            j += 1
        for p in kept[j:]:
            if p.get("type") not in OUTPUTS:
                return "the history would gain more than outputs"
        real_b = [it.payload for it in b.read.items if it.payload.get("type") in OUTPUTS]
        real_a = [p for p in kept if p.get("type") in OUTPUTS]
        lost = [p for p in real_b if p not in real_a and _call_id(p) and _has_call(b.read.items, p)]
        if lost and not all(_duplicate(b.read.items, p) for p in lost):
            return "a real output would be lost"
        return None


def _same_call(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """An empty-id call given an id by the repair, otherwise the same."""
    if old.get("type") not in CALLS or old.get("call_id") not in ("", None):
        return False
    return {k: v for k, v in new.items() if k != "call_id"} == {
        k: v for k, v in old.items() if k != "call_id"
    }


def _has_call(items: Sequence[_Item], out: dict[str, Any]) -> bool:
    cid = _call_id(out)
    return any(it.payload.get("type") in CALLS and _call_id(it.payload) == cid for it in items)


def _duplicate(items: Sequence[_Item], out: dict[str, Any]) -> bool:
    cid, kind = _call_id(out), out.get("type")
    return (
        sum(1 for it in items if it.payload.get("type") == kind and _call_id(it.payload) == cid) > 1
    )


def _dangling(items: Sequence[_Item]) -> list[tuple[str, str, str]]:
    """(call type, call id, name) of each call no output of its kind answers."""
    outs = {(it.payload.get("type"), _call_id(it.payload)) for it in items}
    out = []
    for it in items:
        p = it.payload
        kind, cid = p.get("type"), _call_id(p)
        if kind in CALLS and cid and (CALLS[str(kind)], cid) not in outs:
            out.append((str(kind), cid, str(p.get("name", kind))))
    return out


def _canonical(items: Sequence[_Item], chat: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The history with each call followed by its output (missing ones answered, orphan
    and duplicate outputs left out, empty call ids given ids): the replacement history a
    repair appends. Every other item stays, in its order."""
    changes: list[str] = []
    ids: dict[int, str] = {}
    k = 0
    pending: list[int] = []
    answered = {(it.payload.get("type"), _call_id(it.payload)) for it in items}
    for i, it in enumerate(items):
        p = it.payload
        kind = p.get("type")
        if kind in CALLS and not _call_id(p):
            k += 1
            ids[i] = f"call_toolpair_{k}"
            pending.append(i)
            changes.append(f"{it.where}: a call with an empty call_id given {ids[i]}")
        elif kind in CALLS and (CALLS[str(kind)], _call_id(p)) not in answered:
            pending.append(i)
        elif kind in OUTPUTS and not _call_id(p):
            # An output with no call id answers the nearest call before it still
            # waiting for an output of its kind.
            for j in reversed(pending):
                if CALLS[str(items[j].payload.get("type"))] == kind:
                    pending.remove(j)
                    ids[i] = ids.get(j) or _call_id(items[j].payload)
                    if j not in ids:
                        changes.append(
                            f"{it.where}: an output with no call_id given {ids[i]}, of the "
                            "call before it left without output"
                        )
                    break
    first_out: dict[tuple[str, str], dict[str, Any]] = {}
    first_idx: dict[tuple[str, str], int] = {}
    for i, it in enumerate(items):
        p = it.payload
        if p.get("type") in OUTPUTS:
            cid = ids.get(i) or _call_id(p)
            if not cid or (str(p.get("type")), cid) in first_out:
                continue
            first_out[(str(p.get("type")), cid)] = {**p, "call_id": cid} if i in ids else p
            first_idx[(str(p.get("type")), cid)] = i
    calls = {
        (CALLS[str(it.payload.get("type"))], ids.get(i) or _call_id(it.payload))
        for i, it in enumerate(items)
        if it.payload.get("type") in CALLS
    }
    out: list[dict[str, Any]] = []
    placed: set[tuple[str, str]] = set()
    for i, it in enumerate(items):
        p = it.payload
        kind = p.get("type")
        if kind in CALLS:
            cid = ids.get(i) or _call_id(p) or ""
            out.append({**p, "call_id": cid} if i in ids else p)
            key = (CALLS[str(kind)], cid)
            if key in placed:
                continue
            if key in first_out:
                out.append(first_out[key])
            else:
                out.append(_synthetic(str(kind), cid, ABORTED))
                changes.append(f"{it.where}: answered {p.get('name', kind)} ({cid})")
            placed.add(key)
        elif kind in OUTPUTS:
            cid = ids.get(i) or _call_id(p)
            key = (str(kind), cid or "")
            if key not in calls:
                gone = f"whose call is gone ({cid})" if cid else "with no call_id and no call"
                changes.append(f"{it.where}: left out an output {gone}")
            elif first_idx.get(key) != i:
                changes.append(f"{it.where}: left out a second output for {cid}")
            elif chat and not _right_after(items, i):
                changes.append(f"{it.where}: moved the output for {cid} right after its call")
        else:
            out.append(p)
    if not changes and [it.payload for it in items] != out:
        changes.append("outputs moved right after their calls")
    return copy.deepcopy(out), changes


def _right_after(items: Sequence[_Item], i: int) -> bool:
    j = i - 1
    while j >= 0 and items[j].payload.get("type") in OUTPUTS:
        j -= 1
    return j >= 0 and items[j].payload.get("type") in CALLS


FORMAT = CodexFormat()

__all__ = ["ABORTED", "CODEX_ABORTED", "FORMAT", "NAME", "CodexFormat", "zstd_available"]
