"""Claude Code and Agent SDK session transcripts: read them as Claude Code does, and
repair them with the smallest edit.

A session file (``~/.claude/projects/<dir>/<sessionId>.jsonl``) is not a message list:
every line is one entry of a ``parentUuid`` graph, an API response is streamed as one
line per content block, a parallel batch of results may fan out into sibling branches,
rewinds leave dead branches, and a compaction starts a new root. What the API is sent
on ``--resume`` is the chain from the leaf back to the last compaction boundary, with
consecutive same-role entries merged into one API message. That is what this module
rebuilds (`read_session`), judges with the ``anthropic`` profile (`Session.validate`),
and repairs in place (`plan_repair` / `apply_plan`): a neutral error ``tool_result``
line spliced right after an assistant line whose call was never answered, results moved
in front of text, orphan and duplicate results dropped, every other line byte-identical.

Reading streams the file: an entry keeps only the skeleton that pairing needs (roles,
block kinds, ids, a short prefix of text), so memory grows with the number of lines,
not their size.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import uuid as _uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from toolpair._model import InvalidHistory, Policy, Violation
from toolpair.sessions._files import written_by_toolpair
from toolpair.sessions._format import Loaded, runs_text
from toolpair.sessions._format import Plan as SessionPlan
from toolpair.sessions._format import SessionError as SessionError

#: Entry types that belong to the conversation graph (with a string ``uuid``).
GRAPH_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
#: Entries that become API messages.
MESSAGE_TYPES = frozenset({"user", "assistant"})
#: Keys whose presence on a line says "Claude Code transcript" (with ``type``).
_SESSION_KEYS = ("parentUuid", "sessionId", "leafUuid", "isSidechain")
_TEXT_KEEP = 48
#: Files from this size are read in two passes (graph, then sent content only).
TWO_PASS_FROM = 8 << 20
#: The user turn a resumed session sends after its history (judging stands it in).
NEXT_PROMPT = "(the next prompt)"
_LIST_KEEP = 16
_DEPTH = 2


# -- reading ------------------------------------------------------------------------


def _short(text: str) -> str:
    """A prefix of a text, enough to render it; blank text stays as it is (rules care)."""
    return text if len(text) <= _TEXT_KEEP else text[:_TEXT_KEEP]


def _block(b: Any, depth: int = 0) -> Any:
    """A content block reduced to its kind, ids, flags and a short text."""
    if not isinstance(b, dict):
        return b if isinstance(b, str | int | float | bool) or b is None else {}
    t = b.get("type")
    out: dict[str, Any] = {"type": t}
    for k in ("id", "tool_use_id", "name", "is_error", "signature", "cache_control"):
        if k in b:
            v = b[k]
            out[k] = _short(v) if isinstance(v, str) and k != "id" and k != "tool_use_id" else v
    if t == "tool_use" or t == "server_tool_use":
        out["input"] = {}
        return out
    for k in ("text", "thinking", "data"):
        v = b.get(k)
        if isinstance(v, str):
            out[k] = _short(v)
    c = b.get("content")
    if isinstance(c, str):
        out["content"] = _short(c)
    elif isinstance(c, list):
        out["content"] = [_block(x, depth + 1) for x in c[:_LIST_KEEP]] if depth < _DEPTH else []
    elif c is not None:
        out["content"] = {} if isinstance(c, dict) else c
    if "source" in b and isinstance(b["source"], dict):
        out["source"] = {"type": b["source"].get("type")}
    return out


def _skeleton(content: Any) -> Any:
    """The content of a message as far as pairing and rendering care: memory per line
    stays small however large the line is."""
    if isinstance(content, str):
        return _short(content)
    if not isinstance(content, list):
        return content
    return [_block(b) for b in content]


@dataclass(slots=True, eq=False)
class Entry:
    """One graph line of a transcript, reduced to what the chain and pairing need."""

    #: 0-based position among the file's physical lines, and the 1-based line number.
    pos: int
    uuid: str
    parent: str | None
    type: str
    subtype: str | None = None
    sidechain: bool = False
    meta: bool = False
    team: bool = False
    api_error: bool = False
    compact_summary: bool = False
    msg_id: str | None = None
    model: str | None = None
    content: Any = None
    source: str | None = None
    #: Counted on reading even when the content is not kept: the chain's parallel
    #: recovery needs to know a result line without holding its content.
    n_blocks: int = 0
    n_results: int = 0

    @property
    def line(self) -> int:
        return self.pos + 1

    def blocks(self) -> list[Any]:
        c = self.content
        if isinstance(c, str):
            return [{"type": "text", "text": c}]
        if not isinstance(c, list):
            return []
        if self.type == "assistant":
            # Claude Code leaves the whitespace-only text blocks a stream may hold out of
            # what it sends (the API refuses them).
            return [
                b
                for b in c
                if not (
                    isinstance(b, dict)
                    and b.get("type") == "text"
                    and isinstance(b.get("text"), str)
                    and not b["text"].strip()
                )
            ]
        return list(c)

    def call_ids(self) -> list[str]:
        return [
            b["id"]
            for b in self.blocks()
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
        ]

    def result_ids(self) -> list[str]:
        return [
            b["tool_use_id"]
            for b in self.blocks()
            if isinstance(b, dict)
            and b.get("type") == "tool_result"
            and isinstance(b.get("tool_use_id"), str)
        ]


def _entry(pos: int, obj: Mapping[str, Any], keep_content: bool = True) -> Entry | None:
    t = obj.get("type")
    uid = obj.get("uuid")
    if t not in GRAPH_TYPES or not isinstance(uid, str):
        return None
    parent = obj.get("parentUuid")
    e = Entry(
        pos,
        sys.intern(uid),
        sys.intern(parent) if isinstance(parent, str) and parent else None,
        str(t),
        subtype=obj.get("subtype") if isinstance(obj.get("subtype"), str) else None,
        sidechain=bool(obj.get("isSidechain")),
        meta=bool(obj.get("isMeta")),
        team=bool(obj.get("teamName")),
        api_error=bool(obj.get("isApiErrorMessage")),
        compact_summary=bool(obj.get("isCompactSummary")),
        source=obj.get("sourceToolAssistantUUID")
        if isinstance(obj.get("sourceToolAssistantUUID"), str)
        else None,
    )
    if t in MESSAGE_TYPES:
        m = obj.get("message")
        if isinstance(m, Mapping):
            mid = m.get("id")
            e.msg_id = sys.intern(mid) if isinstance(mid, str) else None
            content = m.get("content")
            if isinstance(content, list):
                e.n_blocks = len(content)
                e.n_results = sum(
                    1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                )
            elif isinstance(content, str):
                e.n_blocks = 1
            if keep_content:
                _fill(e, m)
    return e


def _fill(e: Entry, m: Mapping[str, Any]) -> None:
    model = m.get("model")
    e.model = model if isinstance(model, str) else None
    e.content = _skeleton(m.get("content"))


@dataclass(slots=True)
class Transcript:
    """Every graph entry of a file, in file order, plus what was not part of the graph."""

    entries: list[Entry] = field(default_factory=list)
    #: Physical lines read (blank ones included).
    lines: int = 0
    #: Lines that are not JSON objects (a torn last line, corruption), by line number.
    bad_lines: list[int] = field(default_factory=list)
    #: Non-graph lines (summary, file-history-snapshot, queue-operation...), by type.
    metadata: dict[str, int] = field(default_factory=dict)
    #: The agentId of a subagent file (every line carries it).
    agent_id: str | None = None
    version: str | None = None
    session_id: str | None = None
    bytes: int = 0


def read_transcript(lines: Iterable[bytes | str], *, keep_content: bool = True) -> Transcript:
    """Read a transcript line by line. Lines that are not JSON are skipped and listed,
    as Claude Code skips corrupt lines. Without ``keep_content`` only the graph is kept
    (`fill_content` reads the content of the lines that are sent)."""
    t = Transcript()
    for pos, raw in enumerate(lines):
        t.lines = pos + 1
        t.bytes += len(raw)
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            t.bad_lines.append(pos + 1)
            continue
        if not isinstance(obj, dict):
            t.bad_lines.append(pos + 1)
            continue
        e = _entry(pos, obj, keep_content)
        if e is None:
            kind = obj.get("type")
            key = kind if isinstance(kind, str) else "?"
            t.metadata[key] = t.metadata.get(key, 0) + 1
            continue
        t.entries.append(e)
        if t.agent_id is None and isinstance(obj.get("agentId"), str) and e.sidechain:
            t.agent_id = obj["agentId"]
        v = obj.get("version")
        if isinstance(v, str):
            t.version = v
        sid = obj.get("sessionId")
        if t.session_id is None and isinstance(sid, str):
            t.session_id = sid
    return t


def looks_like_session(objs: Iterable[Any]) -> bool:
    """Whether parsed lines look like a Claude Code transcript: objects with a ``type``
    and the chain's fields (``parentUuid``, ``sessionId``, ``leafUuid``)."""
    for obj in objs:
        if (
            isinstance(obj, Mapping)
            and isinstance(obj.get("type"), str)
            and any(k in obj for k in _SESSION_KEYS)
        ):
            return True
    return False


def sniff_file(path: str, limit: int = 65536) -> bool:
    """Whether the file at ``path`` starts like a Claude Code transcript."""
    try:
        with open(path, "rb") as f:
            head = f.read(limit)
    except OSError:
        return False
    objs: list[Any] = []
    for raw in head.split(b"\n")[:20]:
        if not raw.strip():
            continue
        try:
            objs.append(json.loads(raw))
        except ValueError:
            break
    return looks_like_session(objs)


# -- the chain ------------------------------------------------------------------------


@dataclass(slots=True)
class ApiMessage:
    """One merged API message: consecutive same-role entries of the sent chain."""

    role: str
    entries: list[Entry]

    def content(self) -> list[Any]:
        out: list[Any] = []
        for e in self.entries:
            out.extend(e.blocks())
        return out

    def line_of_block(self, k: int) -> int:
        for e in self.entries:
            n = len(e.blocks())
            if k < n:
                return e.line
            k -= n
        return self.entries[-1].line


@dataclass(slots=True)
class Session:
    """A transcript read the way Claude Code loads it for ``--resume``."""

    transcript: Transcript
    leaf: Entry | None
    #: The rebuilt main chain, root to leaf (before cutting at the last boundary), with
    #: recovered parallel siblings in place.
    chain: list[Entry]
    #: The chain from the last compaction boundary on: what is sent.
    sent: list[Entry]
    messages: list[ApiMessage]
    #: The last compact_boundary on the chain, if any.
    boundary: Entry | None
    #: Entries recovered from sibling branches of a parallel batch.
    recovered: list[Entry]
    #: Graph entries never sent: before the boundary, dead branches, sidechains.
    before_boundary: list[Entry]
    dead: list[Entry]
    sidechain: list[Entry]
    cycle: bool = False

    @property
    def model(self) -> str | None:
        for m in reversed(self.messages):
            if m.role == "assistant":
                for e in reversed(m.entries):
                    if e.model and not e.model.startswith("<"):
                        return e.model
        return None

    def api_messages(self) -> list[dict[str, Any]]:
        """The merged messages as Anthropic Messages API dicts (content skeletons)."""
        return [{"role": m.role, "content": m.content()} for m in self.messages]

    def validate(self, *, model: str | None = None) -> list[Violation]:
        """What the Messages API would reject, with ``messages.N`` in merged terms."""
        from toolpair import _api

        msgs = self.api_messages()
        if not msgs:
            return []
        if msgs[-1]["role"] == "assistant":
            # On resume the next request adds the user's new prompt after the history:
            # a last assistant message is not a prefill, and its calls must be answered.
            msgs.append({"role": "user", "content": [{"type": "text", "text": NEXT_PROMPT}]})
        return _api.validate(msgs, "anthropic", model=model or self.model, format="anthropic")

    def line_of(self, v: Violation) -> int | None:
        if not 0 <= v.index < len(self.messages):
            return None
        m = self.messages[v.index]
        for e in m.entries:
            # The line holding the first id the violation names (a call or a result).
            if v.ids and (v.ids[0] in e.call_ids() or v.ids[0] in e.result_ids()):
                return e.line
        parts = v.path.split(".") if v.path else []
        if len(parts) >= 4 and parts[2] == "content" and parts[3].isdigit():
            return m.line_of_block(int(parts[3]))
        return m.entries[0].line

    def skipped(self) -> dict[str, int]:
        """What was read and not judged, by reason."""
        out: dict[str, int] = {}
        t = self.transcript
        for name, n in (
            ("lines before the last compaction", len(self.before_boundary)),
            ("dead-branch messages", sum(1 for e in self.dead if e.type in MESSAGE_TYPES)),
            (
                "off-chain progress and system lines",
                sum(1 for e in self.dead if e.type not in MESSAGE_TYPES),
            ),
            ("sidechain lines (their own chains)", len(self.sidechain)),
            ("metadata lines", sum(t.metadata.values())),
            ("unreadable lines", len(t.bad_lines)),
            (
                "chain lines that are not messages",
                sum(1 for e in self.sent if e.type not in MESSAGE_TYPES or e.api_error),
            ),
        ):
            if n:
                out[name] = n
        return out


def _pick_leaf(entries: Sequence[Entry], by_uuid: Mapping[str, Entry]) -> Entry | None:
    parents = {e.parent for e in entries if e.parent}
    leaves: list[Entry] = []
    for term in entries:
        if term.uuid in parents:
            continue
        cur: Entry | None = term
        seen: set[str] = set()
        while cur is not None and cur.uuid not in seen:
            seen.add(cur.uuid)
            if cur.type in MESSAGE_TYPES:
                leaves.append(cur)
                break
            cur = by_uuid.get(cur.parent) if cur.parent else None
    if not leaves:
        return None
    main = [e for e in leaves if not e.sidechain and not e.team and not e.meta]
    return max(main or leaves, key=lambda e: e.pos)


def _recover_parallel(
    chain: list[Entry], entries: Sequence[Entry], children: Mapping[str, list[Entry]]
) -> tuple[list[Entry], list[Entry]]:
    """Put the lines of each API response back together, as Claude Code does on resume.

    2.1 writes each result of a parallel batch under the assistant line holding its own
    call, and with streaming tool execution a result may be written between two lines of
    the same response; the walk from the leaf then passes through one branch only. For
    every ``message.id`` on the chain, all its assistant lines (on the chain or not, in
    file order) are placed together, followed by every result line hanging from any of
    them (by ``parentUuid`` or ``sourceToolAssistantUUID``)."""
    if not chain:
        return chain, []
    side = chain[-1].sidechain
    by_msg: dict[str, list[Entry]] = {}
    for e in entries:
        if e.type == "assistant" and e.msg_id and e.sidechain == side:
            by_msg.setdefault(e.msg_id, []).append(e)
    by_source: dict[str, list[Entry]] = {}
    for e in entries:
        if e.source and e.type == "user" and e.n_results:
            by_source.setdefault(e.source, []).append(e)
    on_chain = {e.uuid for e in chain}
    placed: set[str] = set()
    recovered: list[Entry] = []
    out: list[Entry] = []
    for e in chain:
        if e.uuid in placed:
            continue
        group = by_msg.get(e.msg_id or "") if e.type == "assistant" else None
        if not group or (len(group) < 2 and not children.get(e.uuid) and not by_source.get(e.uuid)):
            out.append(e)
            placed.add(e.uuid)
            continue
        members = {a.uuid for a in group}
        results: dict[str, Entry] = {}
        for a in group:
            for c in (*children.get(a.uuid, ()), *by_source.get(a.uuid, ())):
                if c.uuid not in members and c.n_results:
                    results[c.uuid] = c
        for x in (*group, *sorted(results.values(), key=lambda r: r.pos)):
            if x.uuid in placed:
                continue
            out.append(x)
            placed.add(x.uuid)
            if x.uuid not in on_chain:
                recovered.append(x)
    return out, recovered


def _merge(entries: Sequence[Entry]) -> list[ApiMessage]:
    out: list[ApiMessage] = []
    for e in entries:
        if e.type not in MESSAGE_TYPES or e.api_error:
            continue
        if out and out[-1].role == e.type:
            out[-1].entries.append(e)
        else:
            out.append(ApiMessage(e.type, [e]))
    return out


def build_session(t: Transcript) -> Session:
    entries = t.entries
    by_uuid: dict[str, Entry] = {}
    for e in entries:
        by_uuid[e.uuid] = e
    # Only result lines hanging from an assistant line are looked up (parallel recovery).
    children: dict[str, list[Entry]] = {}
    for e in entries:
        if e.parent and e.n_results and e.type == "user":
            p = by_uuid.get(e.parent)
            if p is not None and p.type == "assistant":
                children.setdefault(e.parent, []).append(e)
    # A subagent file (2.0 ``agent-*.jsonl`` in the project, 2.1 ``subagents/``): every
    # line is a sidechain line; it is its own chain.
    subagent = bool(entries) and all(e.sidechain for e in entries)
    if subagent:
        # A subagent file: the last user/assistant line is the leaf.
        msgs = [e for e in entries if e.type in MESSAGE_TYPES]
        leaf = msgs[-1] if msgs else None
    else:
        leaf = _pick_leaf(entries, by_uuid)
    chain: list[Entry] = []
    seen: set[str] = set()
    cycle = False
    cur = leaf
    while cur is not None:
        if cur.uuid in seen:
            cycle = True
            break
        seen.add(cur.uuid)
        chain.append(cur)
        cur = by_uuid.get(cur.parent) if cur.parent else None
    chain.reverse()
    chain, recovered = _recover_parallel(chain, entries, children)
    boundary_at = -1
    for i, e in enumerate(chain):
        if e.type == "system" and e.subtype == "compact_boundary":
            boundary_at = i
    boundary = chain[boundary_at] if boundary_at >= 0 else None
    sent = chain[boundary_at + 1 :]
    on_chain = {e.uuid for e in chain}
    before: list[Entry] = []
    dead: list[Entry] = []
    side: list[Entry] = []
    for e in entries:
        if e.uuid in on_chain:
            if boundary is not None and e.pos < boundary.pos and e not in sent:
                before.append(e)
            continue
        if e.sidechain and not subagent:
            side.append(e)
        elif boundary is not None and e.pos < boundary.pos:
            before.append(e)
        else:
            dead.append(e)
    return Session(
        t,
        leaf,
        chain,
        sent,
        _merge(sent),
        boundary,
        recovered,
        before,
        dead,
        side,
        cycle,
    )


def fill_content(session: Session, lines: Iterable[bytes | str]) -> None:
    """Second pass over the same file: the content of the lines that are sent."""
    wanted = {e.pos: e for e in session.sent if e.type in MESSAGE_TYPES}
    if not wanted:
        return
    last = max(wanted)
    for pos, raw in enumerate(lines):
        e = wanted.get(pos)
        if e is not None:
            m = json.loads(raw).get("message")
            if isinstance(m, Mapping):
                _fill(e, m)
        if pos >= last:
            break


def _size(f: Any) -> int:
    try:
        return int(os.fstat(f.fileno()).st_size)
    except (OSError, AttributeError, ValueError):
        return TWO_PASS_FROM


def read_session(source: str | IO[bytes] | Iterable[bytes | str]) -> Session:
    """Read a transcript (a path, a binary file, or an iterable of lines) and rebuild
    what is sent. A large file (from `TWO_PASS_FROM` bytes) is read twice: first the
    graph alone, then the content of the sent lines only, so that memory follows the
    graph and the sent chain, not the size of the file."""
    if isinstance(source, str):
        with open(source, "rb") as stream:
            return read_session(stream)
    seekable = getattr(source, "seekable", None)
    if seekable is not None and seekable() and _size(source) >= TWO_PASS_FROM:
        f: Any = source
        start = f.tell()
        session = build_session(read_transcript(f, keep_content=False))
        f.seek(start)
        fill_content(session, f)
        return session
    return build_session(read_transcript(source))


def api_messages(lines: Iterable[Any]) -> list[dict[str, Any]]:
    """The merged API messages of a transcript given as parsed line objects (what
    ``format="claude-code"`` hands to the anthropic rules)."""
    t = Transcript()
    for pos, obj in enumerate(lines):
        t.lines = pos + 1
        if not isinstance(obj, dict):
            continue
        e = _entry(pos, obj)
        if e is None:
            continue
        t.entries.append(e)
        if t.agent_id is None and isinstance(obj.get("agentId"), str) and e.sidechain:
            t.agent_id = obj["agentId"]
    return build_session(t).api_messages()


# -- repair ---------------------------------------------------------------------------


@dataclass(slots=True)
class Change:
    """One edit of the plan, for the report."""

    kind: str
    line: int
    index: int
    ids: tuple[str, ...] = ()
    detail: str = ""

    def __str__(self) -> str:
        ids = f" ({', '.join(self.ids)})" if self.ids else ""
        return f"{self.kind} at messages.{self.index}, line {self.line}{ids}: {self.detail}"


@dataclass(slots=True)
class Plan:
    """The edits that make the sent chain valid, in terms of the file's lines."""

    changes: list[Change] = field(default_factory=list)
    #: New line objects to insert after the physical line ``pos``, in order.
    inserts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: Lines to drop (by pos).
    drops: set[int] = field(default_factory=set)
    #: New parentUuid for a line (by pos).
    reparent: dict[int, str | None] = field(default_factory=dict)
    #: New content block order/selection for a line (by pos): indices into its content.
    reblock: dict[int, list[int]] = field(default_factory=dict)
    #: The leaf uuid the repaired file must have.
    leaf: str | None = None

    def __bool__(self) -> bool:
        return bool(self.inserts or self.drops or self.reparent or self.reblock)


def _child_on_chain(chain: Sequence[Entry], e: Entry) -> Entry | None:
    for i, x in enumerate(chain):
        if x is e:
            for y in chain[i + 1 :]:
                if y.parent == e.uuid:
                    return y
            return None
    return None


def plan_repair(
    session: Session,
    raw_lines: Sequence[bytes],
    *,
    placeholder: str | None = None,
    new_uuid: Any = None,
) -> Plan:
    """The minimal edit of the sent chain: splice an error result after every assistant
    line whose call has no result, drop orphan and duplicate results, put results in
    front of text. Sidechains, dead branches and content before the boundary are left
    alone."""
    text = placeholder or Policy().placeholder
    make_uuid = new_uuid or (lambda: str(_uuid.uuid4()))
    plan = Plan(leaf=session.leaf.uuid if session.leaf else None)
    chain = session.chain
    parent_of: dict[str, str | None] = {e.uuid: e.parent for e in session.transcript.entries}
    by_uuid = {e.uuid: e for e in session.transcript.entries}
    answered: set[str] = set()
    msgs = session.messages

    def splice(
        anchor: Entry, child: Entry | None, missing: Sequence[str], idx: int, at: int
    ) -> str:
        """Error result lines for ``missing`` hanging from ``anchor`` (in the file after
        the line ``at``), ``child`` re-parented to the last of them; returns its uuid."""
        obj = json.loads(raw_lines[anchor.pos])
        prev = anchor.uuid
        new_objs: list[dict[str, Any]] = []
        for cid in missing:
            nu = make_uuid()
            new_objs.append(_result_line(obj, prev, anchor.uuid, nu, cid, text))
            prev = nu
        plan.inserts.setdefault(at, []).extend(new_objs)
        if child is not None:
            plan.reparent[child.pos] = prev
            parent_of[child.uuid] = prev
        plan.changes.append(
            Change(
                "spliced result",
                anchor.line,
                idx,
                tuple(missing),
                f"error tool_result line(s) after the assistant line; "
                f"{'line ' + str(child.line) + ' re-parented' if child else 'new leaf'}",
            )
        )
        return prev

    for idx, m in enumerate(msgs):
        if m.role == "assistant":
            calls: list[str] = []
            for e in m.entries:
                calls.extend(e.call_ids())
            nxt = msgs[idx + 1] if idx + 1 < len(msgs) and msgs[idx + 1].role == "user" else None
            got: set[str] = set()
            if nxt is not None:
                for e in nxt.entries:
                    got.update(e.result_ids())
            # A merged turn can hold several API responses (a result line lost between
            # them): an unanswered response that another follows is answered right
            # after its own lines, so that the turns come apart as they were sent.
            responses = _responses(m.entries)
            for group in responses[:-1]:
                own = [c for e in group for c in e.call_ids()]
                if not own or any(c in got for c in own):
                    continue
                split = _split_point(chain, group)
                missing = [c for c in dict.fromkeys(own) if c not in answered]
                if split is None or not missing:
                    continue
                hung_from, next_line = split
                # In the file the results go after the response's last line, as Claude
                # Code writes them once the stream ends, whichever line they hang from.
                end = max(e.pos for e in group)
                at = end if end < next_line.pos else hung_from.pos
                splice(hung_from, next_line, missing, idx, at)
                answered.update(own)
            missing = [c for c in dict.fromkeys(calls) if c not in got and c not in answered]
            if missing:
                anchor = m.entries[-1]
                child = _child_on_chain(chain, anchor)
                last = splice(anchor, child, missing, idx, anchor.pos)
                if child is None and session.leaf is anchor:
                    plan.leaf = last
            answered.update(calls)
            continue
        # A user message: results must answer the assistant message right before it,
        # each once, and come before any other block.
        prev_calls: set[str] = set()
        if idx > 0 and msgs[idx - 1].role == "assistant":
            for e in msgs[idx - 1].entries:
                prev_calls.update(e.call_ids())
        seen_here: set[str] = set()
        kept_entries: list[Entry] = []
        for e in m.entries:
            blocks = e.blocks()
            keep: list[int] = []
            dropped: list[str] = []
            for k, b in enumerate(blocks):
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    rid = b.get("tool_use_id")
                    if not isinstance(rid, str) or rid not in prev_calls or rid in seen_here:
                        dropped.append(str(rid))
                        continue
                    seen_here.add(rid)
                keep.append(k)
            if dropped:
                why = "orphan or duplicate tool_result"
                if not keep:
                    plan.drops.add(e.pos)
                    child = _child_on_chain(chain, e)
                    new_parent = parent_of.get(e.uuid)
                    if child is not None:
                        plan.reparent[child.pos] = new_parent
                        parent_of[child.uuid] = new_parent
                    elif session.leaf is e:
                        plan.leaf = new_parent
                    plan.changes.append(
                        Change("dropped line", e.line, idx, tuple(dropped), why + " line")
                    )
                    continue
                plan.reblock[e.pos] = keep
                plan.changes.append(Change("dropped block", e.line, idx, tuple(dropped), why))
            kept_entries.append(e)
        # Results first: inside a line by reordering its blocks; across lines by
        # re-parenting the run of lines so that result lines come first.
        _results_first(plan, kept_entries, idx, parent_of, by_uuid)
    return plan


def _responses(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The lines of a merged assistant message, cut into the API responses they were
    streamed from (runs of one ``message.id``; a line without one is its own)."""
    out: list[list[Entry]] = []
    for e in entries:
        if out and e.msg_id is not None and out[-1][-1].msg_id == e.msg_id:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def _split_point(chain: Sequence[Entry], group: Sequence[Entry]) -> tuple[Entry, Entry] | None:
    """Where a result line can be spliced after a response without leaving the chain:
    the line of the response that the chain goes on from, and the chain line after it.
    With 2.1 parallel calls that line may be any of the response's lines (the next
    response hung from the result written last), not its last one."""
    members = {e.uuid: e for e in group}
    last = -1
    for i, x in enumerate(chain):
        if x.uuid in members:
            last = i
    if last < 0 or last + 1 >= len(chain):
        return None
    child = chain[last + 1]
    anchor = members.get(child.parent) if child.parent else None
    if anchor is None:
        return None
    return anchor, child


def _is_result(b: Any) -> bool:
    return isinstance(b, dict) and b.get("type") == "tool_result"


def _results_first(
    plan: Plan,
    entries: list[Entry],
    idx: int,
    parent_of: dict[str, str | None],
    by_uuid: Mapping[str, Entry],
) -> None:
    for e in entries:
        order = plan.reblock.get(e.pos, list(range(len(e.blocks()))))
        blocks = e.blocks()
        res = [k for k in order if _is_result(blocks[k])]
        other = [k for k in order if not _is_result(blocks[k])]
        if res and other and order != res + other:
            plan.reblock[e.pos] = res + other
            plan.changes.append(
                Change("moved results first", e.line, idx, (), "tool_result blocks before text")
            )
    kinds = [bool(e.result_ids()) for e in entries]
    if not any(kinds) or kinds == sorted(kinds, reverse=True):
        return
    # Only a contiguous run of lines (each the parent of the next) can be reordered.
    for a, b in itertools.pairwise(entries):
        if parent_of.get(b.uuid) != a.uuid:
            plan.changes.append(
                Change(
                    "unrepaired",
                    entries[0].line,
                    idx,
                    (),
                    "text before tool_result across lines that are not adjacent",
                )
            )
            return
    first_parent = parent_of.get(entries[0].uuid)
    new = [e for e in entries if e.result_ids()] + [e for e in entries if not e.result_ids()]
    prev = first_parent
    for e in new:
        if parent_of.get(e.uuid) != prev:
            plan.reparent[e.pos] = prev
            parent_of[e.uuid] = prev
        prev = e.uuid
    last_old = entries[-1]
    for x in by_uuid.values():
        if x.parent == last_old.uuid and x.pos not in plan.reparent and x not in entries:
            plan.reparent[x.pos] = new[-1].uuid
            parent_of[x.uuid] = new[-1].uuid
    if plan.leaf == last_old.uuid:
        plan.leaf = new[-1].uuid
    plan.changes.append(
        Change("moved results first", entries[0].line, idx, (), "result lines re-parented first")
    )


_COPIED = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId")


def _result_line(
    parent: Mapping[str, Any], parent_uuid: str, source: str, new: str, call_id: str, text: str
) -> dict[str, Any]:
    """A user line answering ``call_id`` with a neutral error, shaped like the result
    lines Claude Code writes."""
    obj: dict[str, Any] = {"parentUuid": parent_uuid}
    for k in _COPIED:
        if k in parent:
            obj[k] = parent[k]
    obj["type"] = "user"
    obj["message"] = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": call_id, "is_error": True, "content": text}
        ],
    }
    obj["uuid"] = new
    if "timestamp" in parent:
        obj["timestamp"] = parent["timestamp"]
    obj["toolUseResult"] = f"Error: {text}"
    obj["sourceToolAssistantUUID"] = source
    return obj


@dataclass(slots=True)
class LineStyle:
    separators: tuple[str, str] = (",", ":")
    ensure_ascii: bool = False

    def dumps(self, obj: Any) -> str:
        return json.dumps(obj, separators=self.separators, ensure_ascii=self.ensure_ascii)


def line_style(raw: bytes) -> LineStyle:
    """How a line was written (JSON.stringify's compact form, or Python's ``", "``)."""
    text = raw.decode("utf-8", "replace")
    key_sep = ":"
    item_sep = ","
    i = text.find('"', 1)
    if i > 0:
        j = text.find('"', i + 1)
        if j > 0 and text[j + 1 : j + 3] == ": ":
            key_sep = ": "
            item_sep = ", "
    return LineStyle((item_sep, key_sep), ensure_ascii=text.isascii() and "\\u" in text)


def _ending(raw: bytes) -> bytes:
    if raw.endswith(b"\r\n"):
        return b"\r\n"
    if raw.endswith(b"\n"):
        return b"\n"
    return b""


def apply_plan(raw_lines: Sequence[bytes], plan: Plan) -> Iterator[bytes]:
    """The repaired file, a line at a time: untouched lines are the very bytes read."""
    default_nl = b"\n"
    for raw in raw_lines:
        nl = _ending(raw)
        if nl:
            default_nl = nl
            break
    last = len(raw_lines) - 1
    for pos, raw in enumerate(raw_lines):
        if pos in plan.drops:
            continue
        if pos in plan.reparent or pos in plan.reblock:
            obj = json.loads(raw)
            if pos in plan.reparent:
                obj["parentUuid"] = plan.reparent[pos]
            if pos in plan.reblock:
                content = obj["message"]["content"]
                obj["message"]["content"] = [content[k] for k in plan.reblock[pos]]
            nl = _ending(raw)
            out = line_style(raw).dumps(obj).encode("utf-8") + nl
        else:
            out = raw
        if pos in plan.inserts:
            style = line_style(raw)
            if not _ending(out):
                out += default_nl
            yield out
            added = [style.dumps(o).encode("utf-8") + default_nl for o in plan.inserts[pos]]
            if pos == last and not _ending(raw):
                added[-1] = added[-1][: -len(default_nl)]
            yield from added
            continue
        yield out


# -- checks of a repaired graph ------------------------------------------------------


def graph_problems(t: Transcript) -> set[str]:
    """Uuids that repeat, cycles, and parents that name no line, each named by uuid (so
    that the problems of two versions of a file compare)."""
    problems: set[str] = set()
    seen: set[str] = set()
    for e in t.entries:
        if e.uuid in seen:
            problems.add(f"uuid {e.uuid} repeats")
        seen.add(e.uuid)
    by_uuid = {e.uuid: e for e in t.entries}
    for e in t.entries:
        if e.parent and e.parent not in by_uuid:
            problems.add(f"parent {e.parent} of {e.uuid} names no line")
    state: dict[str, int] = {}
    for e in t.entries:
        path: list[str] = []
        cur: Entry | None = e
        while cur is not None and cur.uuid not in state:
            state[cur.uuid] = 1
            path.append(cur.uuid)
            cur = by_uuid.get(cur.parent) if cur.parent else None
        if cur is not None and state.get(cur.uuid) == 1:
            problems.add(f"cycle through {cur.uuid}")
        for u in path:
            state[u] = 2
    return problems


# -- the session format ----------------------------------------------------------------


@dataclass(slots=True)
class _State:
    session: Session
    plan: Plan | None = None


def _span(session: Session, i: int) -> str:
    ls = [e.line for e in session.messages[i].entries]
    return f"line {ls[0]}" if len(ls) == 1 else f"lines {ls[0]}-{ls[-1]}"


def skipped_text(session: Session) -> str:
    """What was read and not judged, with the lines of each kind."""
    where = {
        "lines before the last compaction": [e.line for e in session.before_boundary],
        "dead-branch messages": [e.line for e in session.dead if e.type in MESSAGE_TYPES],
        "sidechain lines (their own chains)": [e.line for e in session.sidechain],
    }
    parts = []
    for what, n in session.skipped().items():
        lines = where.get(what)
        parts.append(f"{n} {what}" + (f" (lines {runs_text(lines)})" if lines else ""))
    return "; ".join(parts)


def _described(session: Session) -> str:
    t = session.transcript
    parts = ["claude-code format", "anthropic rules"]
    if session.model:
        parts.append(f"model {session.model}")
    if t.version:
        parts.append(f"written by {t.version}")
    if session.sent:
        parts.append(
            f"{len(session.messages)} API messages from lines "
            f"{session.sent[0].line}-{session.sent[-1].line}"
        )
    if session.boundary is not None:
        parts.append(f"last compaction at line {session.boundary.line}")
    if session.recovered:
        parts.append(f"{len(session.recovered)} parallel lines re-attached")
    return ", ".join(parts)


def loaded(session: Session, path: str) -> Loaded:
    """A rebuilt session as the session commands judge it."""
    msgs = session.api_messages()
    where = [_span(session, i) for i in range(len(session.messages))]
    lines: list[int | None] = [m.entries[0].line for m in session.messages]
    stand_in = bool(msgs) and msgs[-1]["role"] == "assistant"
    if stand_in:
        # On resume the next request adds the user's new prompt after the history: a
        # last assistant message is not a prefill, and its calls must be answered.
        msgs.append({"role": "user", "content": [{"type": "text", "text": NEXT_PROMPT}]})
        where.append("the next prompt")
        lines.append(None)
    return Loaded(
        path=path,
        format="claude-code",
        provider="anthropic",
        wire="anthropic",
        messages=msgs,
        where=where,
        lines=lines,
        described=_described(session),
        model=session.model,
        skipped=skipped_text(session),
        state=_State(session),
        stand_in=stand_in,
        locate=session.line_of,
    )


class ClaudeCode:
    """Claude Code and Agent SDK transcripts (``~/.claude/projects/<dir>/<id>.jsonl``)."""

    name = "claude-code"
    agent = "Claude Code"
    provider = "anthropic"
    wire = "anthropic"
    close_hint = "quit Claude Code (it appends to the file on exit)"

    def sniff(self, path: str) -> bool:
        return path != "-" and os.path.isfile(path) and sniff_file(path)

    def target(self, path: str) -> str:
        return path

    def load(self, data: bytes, path: str) -> Loaded:
        return loaded(read_session(data.splitlines(keepends=True)), path)

    def load_path(self, path: str) -> Loaded:
        # A large file is read in two passes (graph, then the sent lines' content).
        return loaded(read_session(path), path)

    def looks_like(self, objs: list[Any]) -> bool:
        return looks_like_session(objs)

    def history(self, obj: Any) -> list[Any]:
        if not isinstance(obj, list | tuple):
            raise InvalidHistory("a claude-code transcript is a list of line objects")
        return api_messages(obj)

    def plan(self, loaded: Loaded, data: bytes, model: str | None) -> SessionPlan | None:
        state: _State = loaded.state
        raw = data.splitlines(keepends=True)
        plan = plan_repair(state.session, raw)
        if not plan:
            return None
        state.plan = plan
        fixes = sum(1 for c in plan.changes if c.kind != "unrepaired")
        return SessionPlan([str(c) for c in plan.changes], b"".join(apply_plan(raw, plan)), fixes)

    def verify(self, before: Loaded, after: Loaded) -> str | None:
        b: _State = before.state
        a: _State = after.state
        leaf = b.plan.leaf if b.plan is not None else None
        if a.session.leaf is None or a.session.leaf.uuid != leaf:
            got = a.session.leaf.uuid if a.session.leaf else None
            return f"the leaf would move (expected {leaf}, got {got})"
        new_problems = graph_problems(a.session.transcript) - graph_problems(b.session.transcript)
        if new_problems:
            return "; ".join(sorted(new_problems))
        if a.session.cycle:
            return "the rebuilt chain has a cycle"
        return None

    def default_roots(self) -> list[Path]:
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return [(Path(base) if base else Path.home() / ".claude") / "projects"]

    def session_files(self, root: Path) -> Iterator[Path]:
        for d, _dirs, files in os.walk(root):
            for f in files:
                if f.endswith(".jsonl") and not written_by_toolpair(f):
                    yield Path(d) / f


FORMAT = ClaudeCode()
