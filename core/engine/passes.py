"""Read-time repair: pair every call with one result, lay the pair out the way the
provider needs it, and hand back untouched messages as the very same objects.

The passes run in order over the neutral view:

1. pairing: each result finds its call (the most recent unanswered one with its id);
   duplicates keep the best result (real over error over synthetic), results with no
   call anywhere are orphans;
2. ids: ids the provider refuses, and repeated call ids, are rewritten on both halves;
3. layout: every unit (an assistant turn with calls) is followed by one answering turn
   holding its results first, synthetic ones for dangling calls, then whatever user
   content sat between;
4. provider passes: merges, bridges, a leading user turn, reasoning adjacency, and the
   thinking prefix-binding check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from toolpair._model import Block, Codec, Fix, Message, Policy, Role
from toolpair.providers import Profile


@dataclass(slots=True, eq=False)
class _Call:
    block: Block
    msg: int
    seg: int
    result: Block | None = None
    result_msg: int = -1


@dataclass(slots=True, eq=False)
class Out:
    """A message of the output: its blocks and the input message it descends from."""

    role: Role
    blocks: list[Block]
    template: Message | None
    #: The blocks the template had when it reached the pass, for "did it change".
    was_nonempty: bool = True

    def unchanged(self) -> bool:
        t = self.template
        if t is None or t.role != self.role or len(t.blocks) != len(self.blocks):
            return False
        return all(a is b for a, b in zip(t.blocks, self.blocks, strict=True))


def _rank(b: Block) -> int:
    return 0 if b.synthetic else (1 if b.is_error else 2)


def _key(b: Block) -> str:
    # Gemini allows id-less calls: they pair by name (and position).
    return b.id if b.id is not None else "\x00" + (b.name or "")


@dataclass(slots=True)
class _State:
    msgs: Sequence[Message]
    codec: Codec
    profile: Profile
    policy: Policy
    keep_orphans: bool
    taken: set[str]
    at_end: bool
    fixes: list[Fix] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    #: id(result block) -> "home" | "drop" | "text" | "keep"
    fate: dict[int, str] = field(default_factory=dict)
    renamed: dict[int, Block] = field(default_factory=dict)
    id_map: dict[str, str] = field(default_factory=dict)
    #: id(result block) -> the message it came from
    origin: dict[int, Message] = field(default_factory=dict)

    def fix(self, kind: str, index: int, ids: Sequence[str | None] = (), detail: str = "") -> None:
        self.fixes.append(Fix(kind, index, tuple(i or "" for i in ids), detail))

    def r(self, b: Block) -> Block:
        return self.renamed.get(id(b), b)


def segments(
    msgs: Sequence[Message], shape: str, reasoning_ends_calls: bool = False
) -> list[tuple[str, list[Message]]]:
    """Runs of assistant messages and of user-side messages. In a chat format every
    assistant message is its own run: its results must follow it at once. With
    ``reasoning_ends_calls`` (`Profile.reasoning_ends_calls`), a reasoning item after a
    call starts a new run, so the call's outputs go before it."""
    out: list[tuple[str, list[Message]]] = []
    calling = False  # the current assistant run holds a call
    for m in msgs:
        side = "assistant" if m.role == "assistant" else "user"
        ends = (
            reasoning_ends_calls
            and calling
            and side == "assistant"
            and bool(m.blocks)
            and m.blocks[0].kind == "reasoning"
        )
        if out and out[-1][0] == side and (side == "user" or shape != "chat") and not ends:
            out[-1][1].append(m)
        else:
            out.append((side, [m]))
            calling = False
        if side == "assistant" and any(b.kind == "call" for b in m.blocks):
            calling = True
    return out


def _pair(st: _State, segs: list[tuple[str, list[Message]]]) -> None:
    open_calls: dict[str, list[_Call]] = {}
    done: dict[str, list[_Call]] = {}
    pending: dict[str, list[tuple[Block, int]]] = {}
    orphans: list[tuple[Block, int]] = []
    servers: set[str] = set()  # server tool uses seen so far
    for s, (_side, seg_msgs) in enumerate(segs):
        for m in seg_msgs:
            for b in m.blocks:
                if b.kind == "server_call" and b.id is not None:
                    servers.add(b.id)
                elif b.kind == "server_result" and b.id is not None and b.id not in servers:
                    # A server tool's result with no use before it (S4) answers nothing.
                    orphans.append((b, m.index))
                elif b.kind == "call":
                    c = _Call(b, m.index, s)
                    st.calls.append(c)
                    k = _key(b)
                    waiting = pending.get(k)
                    if waiting:
                        res, at = waiting.pop(0)
                        c.result, c.result_msg = res, at
                        st.fate[id(res)] = "home"
                        done.setdefault(k, []).append(c)
                    else:
                        open_calls.setdefault(k, []).append(c)
                elif b.kind == "result":
                    st.origin[id(b)] = m
                    if b.missing_id:
                        orphans.append((b, m.index))  # it answers no call
                        continue
                    k = _key(b)
                    cands = open_calls.get(k)
                    if cands:
                        if b.id is None:
                            latest = cands[-1].seg
                            pick = next(c for c in cands if c.seg == latest)
                            cands.remove(pick)
                        else:
                            pick = cands.pop()
                        pick.result, pick.result_msg = b, m.index
                        st.fate[id(b)] = "home"
                        done.setdefault(k, []).append(pick)
                    elif done.get(k):
                        prior = done[k][-1]
                        assert prior.result is not None
                        if _rank(b) > _rank(prior.result):
                            loser, loser_at = prior.result, prior.result_msg
                            prior.result, prior.result_msg = b, m.index
                            st.fate[id(b)] = "home"
                        else:
                            loser, loser_at = b, m.index
                        st.fate[id(loser)] = "drop"
                        st.fix(
                            "duplicate_result_dropped",
                            loser_at,
                            [loser.id],
                            "a call has one result; the best one is kept",
                        )
                    elif b.id is None:
                        # An id-less result (Gemini) only answers a call before it: a
                        # later call of the same name is a different call.
                        orphans.append((b, m.index))
                    else:
                        pending.setdefault(k, []).append((b, m.index))
    orphans.extend(x for waiting in pending.values() for x in waiting)
    for b, at in sorted(orphans, key=lambda x: x[1]):
        if st.keep_orphans:
            st.fate[id(b)] = "keep"
        elif st.policy.orphans == "text":
            st.fate[id(b)] = "text"
            st.fix(
                "orphan_result_as_text", at, [b.id or b.name], "no call has this id; kept as text"
            )
        else:
            st.fate[id(b)] = "drop"
            st.fix("orphan_result_dropped", at, [b.id or b.name], "no call anywhere has this id")


def _ids_removed(st: _State) -> bool:
    """Calls and results without their ids, for a host that takes none; False where the
    format cannot drop one (its ids are then made valid instead)."""
    strip = st.codec.without_id
    for c in st.calls:
        if c.block.id is None:
            continue
        bare = strip(c.block)
        if bare is None:
            return False  # the format says so on its first id, before anything changed
        st.renamed[id(c.block)] = bare
        if c.result is not None:
            st.renamed[id(c.result)] = strip(c.result) or c.result
        st.fix("id_removed", c.msg, [c.block.id], "the host accepts no id on calls or results")
    return True


def _rewrite_ids(st: _State) -> None:
    profile = st.profile
    if not profile.ids_allowed and _ids_removed(st):
        return
    taken: set[str] | None = None  # built on the first rename: most repairs have none
    seen: set[str] = set()
    turn = -1
    for c in st.calls:
        old = c.block.id
        if old is None:
            continue
        if profile.ids_unique_per_turn and c.seg != turn:
            turn, seen = c.seg, set()
        if profile.valid_id(old) and old not in seen:
            seen.add(old)
            continue
        if taken is None:
            taken = {c.block.id for c in st.calls if c.block.id is not None}
        salt = 0
        new = profile.new_id(old, salt)
        while new in taken or new in st.taken or new in seen or not profile.valid_id(new):
            salt += 1
            new = profile.new_id(old, salt)
        seen.add(new)
        taken.add(new)
        st.renamed[id(c.block)] = st.codec.with_id(c.block, new)
        if c.result is not None:
            st.renamed[id(c.result)] = st.codec.with_id(c.result, new)
        st.id_map[new] = st.id_map.get(old, old)
        reason = "repeated" if old in seen else "refused by the provider"
        st.fix("id_rewritten", c.msg, [old, new], f"call id {reason}; rewritten on both halves")


def _filter(st: _State, m: Message) -> list[Block]:
    """A message's blocks with results that live elsewhere (or nowhere) taken out."""
    out: list[Block] = []
    for b in m.blocks:
        if b.kind == "result" or (b.kind == "server_result" and id(b) in st.fate):
            f = st.fate.get(id(b), "keep")
            if f == "text":
                out.append(st.codec.result_as_text(b))
            elif f == "keep":
                out.append(st.r(b))
            continue
        out.append(st.r(b) if b.kind == "call" else b)
    return out


def _reorder_assistant(blocks: list[Block]) -> list[Block]:
    """Text and server blocks after a client call move in front of the calls; thinking
    blocks stay where they are, untouched."""
    first = next((i for i, b in enumerate(blocks) if b.kind == "call"), None)
    if first is None:
        return blocks
    tail = blocks[first:]
    movers = [b for b in tail if b.kind not in ("call", "thinking")]
    if not movers:
        return blocks
    return blocks[:first] + movers + [b for b in tail if b.kind in ("call", "thinking")]


def _bridge(st: _State) -> Out:
    return Out("assistant", [st.codec.make_text(st.policy.bridge_text, "assistant")], None)


def _user_msgs(st: _State, msgs: Sequence[Message]) -> list[Out]:
    out = []
    for m in msgs:
        blocks = _filter(st, m)
        if not blocks and m.blocks and all(b.kind == "result" for b in m.blocks):
            continue  # its results went home or were dropped; those fixes say so
        if m.role == "tool" and blocks and blocks[0].kind == "text":
            out.append(Out("user", blocks, None))  # an orphan tool message kept as text
            continue
        out.append(Out(m.role, blocks, m, bool(m.blocks)))
    return out


def _assistant_run(st: _State, msgs: Sequence[Message]) -> list[Out]:
    shape = st.codec.shape
    if shape == "blocks":
        flat = [b for m in msgs for b in _filter(st, m)]
        reordered = _reorder_assistant(flat)
        merge = st.profile.strict_alternation and sum(1 for m in msgs if m.blocks) > 1
        if len(msgs) > 1 and (merge or reordered is not flat):
            if reordered is not flat:
                st.fix(
                    "content_reordered",
                    msgs[0].index,
                    [],
                    "text and server blocks moved in front of the tool calls",
                )
            st.fix(
                "turns_merged",
                msgs[0].index,
                [],
                f"{len(msgs)} assistant messages merged into one turn",
            )
            return [Out("assistant", reordered, msgs[0])]
        out = []
        for m in msgs:
            blocks = _filter(st, m)
            new = _reorder_assistant(blocks)
            if new is not blocks:
                st.fix(
                    "content_reordered",
                    m.index,
                    [],
                    "text and server blocks moved in front of the tool calls",
                )
            out.append(Out("assistant", new, m))
        return out
    outs = []
    for m in msgs:
        # A chat codec may keep calls among its content (LlamaIndex's ToolCallBlock).
        blocks = _filter(st, m)
        new = _reorder_assistant(blocks)
        if new is not blocks:
            st.fix("content_reordered", m.index, [], "content moved in front of the tool calls")
        outs.append(Out("assistant", new, m))
    if shape == "items":
        outs = _reorder_items(st, outs)
    return outs


def _reorder_items(st: _State, outs: list[Out]) -> list[Out]:
    """The items version of `_reorder_assistant`: an item and the reasoning items right
    before it move together, so no call is parted from its reasoning (R3)."""
    groups: list[list[Out]] = [[]]
    for o in outs:
        groups[-1].append(o)
        if not (o.blocks and o.blocks[0].kind == "reasoning"):
            groups.append([])
    if not groups[-1]:
        groups.pop()

    def is_call(g: list[Out]) -> bool:
        return bool(g[-1].blocks) and g[-1].blocks[0].kind == "call"

    first = next((i for i, g in enumerate(groups) if is_call(g)), None)
    if first is None:
        return outs
    tail = groups[first:]
    movers = [g for g in tail if not is_call(g)]
    if not movers:
        return outs
    idx = movers[0][0].template.index if movers[0][0].template else -1
    st.fix("content_reordered", idx, [], "items moved in front of the tool calls")
    ordered = groups[:first] + movers + [g for g in tail if is_call(g)]
    return [o for g in ordered for o in g]


def _filled(codec: Codec, res: Block, policy: Policy) -> Block | None:
    """An empty error result given the policy's text, where the format can say it."""
    try:
        return codec.with_content(res, policy.empty_error_text)
    except NotImplementedError:
        return None


def _answer(st: _State, calls: list[_Call], zone: Sequence[Message], last: bool) -> list[Out]:
    """The answering turn for ``calls``, then the user content that sat in ``zone``."""
    codec, policy = st.codec, st.policy
    chosen: list[tuple[Block, Block | None]] = []  # (result as sent, original result)
    for c in calls:
        if c.result is not None:
            res = st.r(c.result)
            filled = _filled(codec, res, policy) if res.is_error and res.empty else None
            if filled is not None:
                # A9/B7: an error result may not be empty.
                res = filled
                st.renamed[id(c.result)] = res
                st.fix(
                    "error_result_filled",
                    c.result_msg,
                    [res.id or res.name],
                    "an error result may not be empty",
                )
            chosen.append((res, c.result))
        elif not (last and policy.trailing == "keep"):
            call = st.r(c.block)
            chosen.append((codec.make_result(call, policy.placeholder, is_error=True), None))
            st.fix(
                "synthetic_result",
                c.msg,
                [call.id or call.name],
                "the call had no result; an error result was added",
            )
    if codec.shape == "blocks":
        # A system turn between the calls and their results (Anthropic's mid-conversation
        # system messages) is not the answering turn: the results come first, the system
        # turn right after them, as it was, rather than its text in the result turn.
        k = 0
        while k < len(zone) and zone[k].role == "system":
            k += 1
        if not k or not chosen:
            return _answer_blocks(st, chosen, zone)
        moved = [Out("system", list(m.blocks), m) for m in zone[:k]]
        for m in zone[:k]:
            st.fix(
                "system_moved",
                m.index,
                [b.id or b.name or "" for b, _ in chosen],
                "a system turn between calls and their results moved after the results",
            )
        answered = _answer_blocks(st, chosen, zone[k:])
        return [*answered[:1], *moved, *answered[1:]]
    # chat and items: one message per result, right after the call(s).
    lead: list[int] = []
    for m in zone:
        if m.role != "tool" or not m.blocks or m.blocks[0].kind != "result":
            break
        lead.append(id(st.r(m.blocks[0])))
    if set(lead) == {id(b) for b, _ in chosen}:
        order = {k: n for n, k in enumerate(lead)}
        chosen.sort(key=lambda pair: order[id(pair[0])])
    else:
        # A program ends after the calls it made (PTC): its output goes after theirs.
        chosen.sort(key=lambda pair: pair[0].sub == "program_output")
    lead_set = set(lead)
    out: list[Out] = []
    for b, orig in chosen:
        src = st.origin[id(orig)] if orig is not None else None
        if src is not None and id(b) not in lead_set:
            st.fix("result_moved", src.index, [b.id], "moved right after the call")
        out.append(Out("tool", [b], src))
    out.extend(_user_msgs(st, zone))
    return out


def _holding(st: _State, results: list[Block], candidates: Sequence[Message]) -> Message | None:
    want = {id(b) for b in results}
    for m in candidates:
        if len(m.blocks) == len(results) and {id(st.r(b)) for b in m.blocks} == want:
            return m
    return None


def _answer_blocks(
    st: _State, chosen: list[tuple[Block, Block | None]], zone: Sequence[Message]
) -> list[Out]:
    tpl = zone[0] if zone else None
    results = [b for b, _ in chosen]
    lead: list[Block] = []
    if tpl is not None:
        for b in tpl.blocks:
            if b.kind != "result":
                break
            lead.append(st.r(b))
        if {id(b) for b in lead} == {id(b) for b in results}:
            results = lead
    lead_ids = {id(b) for b in lead}
    for b, orig in chosen:
        if orig is None or id(b) in lead_ids:
            continue
        at = st.origin[id(orig)].index
        if tpl is not None and st.origin[id(orig)] is tpl:
            st.fix("results_first", at, [b.id or b.name], "moved in front of the user's content")
        else:
            st.fix(
                "result_moved",
                at,
                [b.id or b.name],
                "moved first into the turn right after its call",
            )
    rest = _filter(st, tpl) if tpl is not None else []
    later = _user_msgs(st, zone[1:])
    # A message that already holds exactly these results (in the zone, or where the
    # results came from) is the result turn, handed back as it is.
    whole = _holding(st, results, [*zone, *(st.origin[id(o)] for _, o in chosen if o)])
    if not (st.profile.results_only or st.profile.bridge_after_results):
        if not results and tpl is None:
            return later
        if whole is not None and not rest:
            return [Out("user", [st.r(b) for b in whole.blocks], whole), *later]
        return [Out("user", results + rest, tpl, bool(tpl.blocks) if tpl else True), *later]
    # The result turn holds nothing else; the user's content follows a bridge.
    head_tpl = None if rest else tpl
    if whole is not None:
        head_tpl, results = whole, [st.r(b) for b in whole.blocks]
    content = [o for o in later if o.blocks]
    if rest:
        content.insert(0, Out("user", rest, tpl if head_tpl is not tpl else None))
    content = [o for o in content if o.template is not head_tpl or head_tpl is None]
    if not results:
        return content
    head = Out("user", results, head_tpl)
    if not content:
        return [head]
    if rest:
        st.fix(
            "content_moved",
            tpl.index if tpl else -1,
            [],
            "user content moved out of the result turn",
        )
    st.fix(
        "bridge_inserted",
        tpl.index if tpl else -1,
        [],
        "an assistant turn between the results and the user's content",
    )
    return [head, _bridge(st), *content]


def layout(st: _State) -> list[Out]:
    segs = segments(
        st.msgs, st.codec.shape, st.codec.shape == "items" and st.profile.reasoning_ends_calls
    )
    _pair(st, segs)
    _rewrite_ids(st)
    by_seg: dict[int, list[_Call]] = {}
    for c in st.calls:
        by_seg.setdefault(c.seg, []).append(c)
    out: list[Out] = []
    consumed: set[int] = set()
    for s, (side, seg_msgs) in enumerate(segs):
        if s in consumed:
            continue
        if side == "user":
            out.extend(_user_msgs(st, seg_msgs))
            continue
        out.extend(_assistant_run(st, seg_msgs))
        calls = by_seg.get(s)
        if not calls:
            continue
        zone: Sequence[Message] = []
        if s + 1 < len(segs) and segs[s + 1][0] == "user":
            zone = segs[s + 1][1]
            consumed.add(s + 1)
        out.extend(_answer(st, calls, zone, last=s + 1 >= len(segs) and st.at_end))
    return out


def _drop_empty(st: _State, out: list[Out]) -> list[Out]:
    kept = []
    for o in out:
        if o.blocks:
            kept.append(o)
        elif o.template is not None and (o.was_nonempty or st.profile.drop_empty):
            st.fix("empty_message_removed", o.template.index, [], "the message had no content left")
        else:
            kept.append(o)
    return kept


def _alternate(st: _State, out: list[Out]) -> list[Out]:
    """Bedrock and Gemini reject consecutive turns of one role: merge them, or
    (Bedrock) bridge a result turn and the user content after it. System messages do
    not count: those providers take them out of the message list."""
    res: list[Out] = []
    last = -1  # the last non-system message in res
    for o in out:
        prev = res[last] if last >= 0 else None
        if o.role == "system" or prev is None or prev.role != o.role or o.role == "tool":
            res.append(o)
            if o.role != "system":
                last = len(res) - 1
            continue
        idx = o.template.index if o.template else -1
        results = any(b.kind == "result" for b in prev.blocks + o.blocks)
        if o.role == "user" and results and st.profile.results_only:
            res.append(_bridge(st))
            res.append(o)
            last = len(res) - 1
            st.fix(
                "bridge_inserted", idx, [], "an assistant turn keeps user and assistant alternating"
            )
            continue
        if not o.blocks or not prev.blocks:
            merged = o if o.blocks else prev  # merging into an empty turn changes nothing
        else:
            blocks = prev.blocks + o.blocks
            if o.role == "assistant":
                blocks = _reorder_assistant(blocks)
            merged = Out(prev.role, blocks, prev.template)
        # The merged turn takes the later place, so system messages between the two
        # stay before it and never end the history (Mistral M5).
        del res[last]
        res.append(merged)
        last = len(res) - 1
        st.fix("turns_merged", idx, [], f"consecutive {o.role} turns merged")
    return res


_SPOKEN = frozenset({"text", "image"})


def _split_calls(st: _State, out: list[Out]) -> list[Out]:
    """Where an assistant turn may not hold text beside tool use (Bedrock's Llama and
    Mistral): the text goes in an assistant turn of its own, then a user bridge, then
    the calls. A turn with reasoning is left whole: only Claude replays it."""
    items = st.codec.shape == "items"
    res: list[Out] = []
    k = 0
    while k < len(out):
        o = out[k]
        if o.role != "assistant":
            res.append(o)
            k += 1
            continue
        run = [o]
        k += 1
        # Items of one turn; a system item among them leaves the turn whole (Bedrock
        # takes system messages out of the list).
        while items and k < len(out) and out[k].role in ("assistant", "system"):
            run.append(out[k])
            k += 1
        turn = [t for t in run if t.role == "assistant"]
        blocks = [b for t in turn for b in t.blocks]
        kinds = {b.kind for b in blocks}
        if "call" not in kinds or not kinds & _SPOKEN or kinds & {"thinking", "reasoning"}:
            res.extend(run)
            continue
        if items:
            said = [t for t in run if not any(b.kind == "call" for b in t.blocks)]
            acts = [t for t in turn if any(b.kind == "call" for b in t.blocks)]
        else:
            said = [Out("assistant", [b for b in o.blocks if b.kind != "call"], o.template)]
            acts = [Out("assistant", [b for b in o.blocks if b.kind == "call"], None)]
        idx = turn[0].template.index if turn[0].template is not None else -1
        st.fix("content_moved", idx, [], "text moved out of the tool-use turn into its own")
        st.fix("bridge_inserted", idx, [], "a user turn between the text and the tool use")
        bridge = Out("user", [st.codec.make_text(st.policy.user_bridge_text, "user")], None)
        res.extend([*said, bridge, *acts])
    return res


def _chat_bridges(st: _State, out: list[Out]) -> list[Out]:
    """Mistral (M4) allows only an assistant or tool message after a tool message, and
    a system message only after a user or system one. Tool then user gets an assistant
    bridge; a system message after an assistant or tool message moves back to just
    after the last user message (forward would end the history on it when that user
    message is the last, M5). Bedrock needs only the first, for user messages: it takes
    system messages out of the list."""
    strict = st.profile.system_after_user_only
    res: list[Out] = []
    prev = ""  # the role the provider sees last
    anchor = 0  # where a system message may go: after the last user or system message
    for o in out:
        idx = o.template.index if o.template else -1
        if strict and o.role == "system" and prev in ("assistant", "tool"):
            res.insert(anchor, o)
            anchor += 1
            st.fix("system_moved", idx, [], "a system message may only follow a user turn")
            continue
        if prev == "tool" and o.role not in ("tool", "assistant") and (strict or o.role == "user"):
            res.append(_bridge(st))
            st.fix("bridge_inserted", idx, [], "an assistant turn between the results and the user")
        res.append(o)
        if o.role in ("user", "system"):
            anchor = len(res)
        if strict or o.role != "system":
            prev = o.role
    return res


def _leading_user(st: _State, out: list[Out]) -> list[Out]:
    k = next((i for i, o in enumerate(out) if o.role != "system"), None)
    if k is None:
        return out
    first = out[k]
    need = first.role != "user" and first.role != "tool" and st.profile.first_user
    need = need or (
        st.profile.first_not_call
        and first.role == "assistant"
        and any(b.kind == "call" for b in first.blocks)
    )
    if first.role == "tool" and st.profile.first_user:
        need = True
    if not need:
        return out
    st.fix("user_turn_inserted", 0, [], "the history must start with a user turn")
    bridge = Out("user", [st.codec.make_text(st.policy.user_bridge_text, "user")], None)
    return [*out[:k], bridge, *out[k:]]


def _reasoning(st: _State, out: list[Out]) -> list[Out]:
    """Responses R3: every reasoning item directly before the item it produced."""
    res: list[Out] = []
    i = 0
    n = len(out)
    while i < n:
        if not (out[i].blocks and out[i].blocks[0].kind == "reasoning"):
            res.append(out[i])
            i += 1
            continue
        if out[i].blocks[0].item_id is None:
            # Sent without an id (store off, its encrypted content carried), nothing ties
            # it to a following item: it stays where it is (recorded 200s, ruby_llm).
            res.append(out[i])
            i += 1
            continue
        rs = []
        while i < n and out[i].blocks and out[i].blocks[0].kind == "reasoning":
            rs.append(out[i])
            i += 1
        # An assistant message without an id cannot be what a reasoning item produced
        # (R3): one standing between the reasoning and its items moves in front.
        pre = []
        while i < n and out[i].role == "assistant" and _idless_text(out[i]):
            pre.append(out[i])
            i += 1
        xs = []
        while (
            i < n
            and out[i].role == "assistant"
            and out[i].blocks
            and out[i].blocks[0].kind != "reasoning"
            and not _idless_text(out[i])
        ):
            xs.append(out[i])
            i += 1
        if pre and xs:
            idx = pre[0].template.index if pre[0].template else -1
            st.fix(
                "content_reordered",
                idx,
                [],
                "an assistant message without an id moved in front of the reasoning item",
            )
            res.extend(pre)
            pre = []
        if len(rs) == 1 and xs:
            res.append(rs[0])
            res.extend(xs)
            continue
        for k, r in enumerate(rs):
            if k < len(xs):
                res.append(r)
                res.append(xs[k])
            else:
                idx = r.template.index if r.template else -1
                st.fix(
                    "reasoning_dropped",
                    idx,
                    [r.blocks[0].item_id],
                    "a reasoning item with no item after it is rejected by the provider",
                )
        if len(rs) > 1 and xs:
            idx = rs[0].template.index if rs[0].template else -1
            st.fix("reasoning_reordered", idx, [], "reasoning items interleaved with their items")
        res.extend(xs[len(rs) :])
        res.extend(pre)
    return res


def _idless_text(o: Out) -> bool:
    return len(o.blocks) == 1 and o.blocks[0].kind == "text" and o.blocks[0].item_id is None


def _orphaned_item_ids(st: _State, out: list[Out], inputs: Sequence[Message]) -> list[Out]:
    """A function_call that lost the reasoning item before it loses its ``fc_`` id
    (which the API would tie to that reasoning item) and keeps its call_id."""
    strip = st.codec.without_item_id
    needs = st.profile.fc_needs_reasoning
    had_reasoning: set[int] = set()
    for a, b in pairwise(inputs):
        if a.blocks and a.blocks[0].kind == "reasoning" and b.blocks:
            had_reasoning.add(id(b.blocks[0]))
    for k, o in enumerate(out):
        if not o.blocks or o.blocks[0].kind != "call":
            continue
        blk = o.blocks[0]
        orig = o.template.blocks[0] if o.template and o.template.blocks else blk
        if blk.item_id is None:
            continue
        if id(orig) not in had_reasoning and not (needs and blk.sub == "function_call"):
            continue
        j = k - 1
        while j >= 0 and out[j].blocks and out[j].blocks[0].kind == "call":
            j -= 1
        if j >= 0 and out[j].blocks and out[j].blocks[0].kind == "reasoning":
            continue
        bare = strip(blk)
        if bare is None:
            return out  # the format has no item ids to drop
        out[k] = Out(o.role, [bare], o.template)
        st.fix(
            "item_id_dropped",
            o.template.index if o.template else -1,
            [blk.id],
            "its reasoning item is gone; the call keeps its call_id",
        )
    return out


#: The documented stand-in for a thought signature a call never had (Gemini API and
#: Vertex AI alike).
BYPASS_SIGNATURE = "skip_thought_signature_validator"


def _signatures(
    st: _State, out: list[Out], due: bool = True, foreign: frozenset[int] = frozenset()
) -> list[Out]:
    """Gemini 3: the first call of each model step in the current turn carries a
    thought signature. A call that never had one gets the documented bypass value
    (``due``), and so does one whose signature another model produced (``foreign``:
    the calls' native objects, by ``id()``; G8)."""
    sign = st.codec.with_signature
    if foreign:
        for k, o in enumerate(out):
            hit = [
                j for j, b in enumerate(o.blocks) if b.kind == "call" and id(b.native) in foreign
            ]
            if not hit:
                continue
            blocks = list(o.blocks)
            for n in hit:
                signed = sign(blocks[n], BYPASS_SIGNATURE)
                if signed is None:
                    continue  # the format cannot carry one: reported unrepaired
                call = blocks[n]
                blocks[n] = signed
                st.fix(
                    "signature_bypassed",
                    o.template.index if o.template is not None else k,
                    [call.id or call.name],
                    "the call's thought signature was produced by another model; the "
                    "documented bypass value stands in",
                )
            out[k] = Out(o.role, blocks, o.template)
    if not due:
        return out
    start = 0
    for k in range(len(out) - 1, -1, -1):
        o = out[k]
        if o.role == "user" and any(b.kind != "result" for b in o.blocks):
            start = k + 1
            break
    for k in range(start, len(out)):
        o = out[k]
        if o.role != "assistant":
            continue
        j = next((j for j, b in enumerate(o.blocks) if b.kind == "call"), None)
        if j is None or o.blocks[j].item_id:
            continue
        call = o.blocks[j]
        idx = o.template.index if o.template is not None else k
        signed = sign(call, BYPASS_SIGNATURE)
        if signed is None:
            continue  # the format cannot carry one: the violation is reported unrepaired
        blocks = list(o.blocks)
        blocks[j] = signed
        out[k] = Out(o.role, blocks, o.template)
        st.fix(
            "signature_bypassed",
            idx,
            [call.id or call.name],
            "the call never had a thought signature; the documented bypass value stands in",
        )
    return out


def _prefix_binding(st: _State, out: list[Out]) -> list[Out]:
    """H4: a thinking block is bound to everything before it. Report (or strip) the
    thinking blocks that sit after the first message repair changed."""
    first = None
    for k, o in enumerate(out):
        same_place = k < len(st.msgs) and o.template is st.msgs[k]
        if not (o.unchanged() and same_place):
            first = k
            break
    if first is None:
        return out
    bound = [
        (k, o)
        for k, o in enumerate(out)
        if k >= first and any(b.kind == "thinking" for b in o.blocks)
    ]
    if not bound:
        return out
    if st.policy.bound_thinking == "strip":
        for k, o in bound:
            out[k] = Out(o.role, [b for b in o.blocks if b.kind != "thinking"], o.template)
            st.fix(
                "thinking_stripped",
                o.template.index if o.template else k,
                [],
                "thinking after an edited message would fail its prefix binding",
            )
        return [o for o in out if o.blocks]
    tpl = out[first].template
    idx = tpl.index if tpl is not None else first
    st.fix(
        "prefix_binding",
        idx,
        [],
        f"{len(bound)} message(s) with thinking follow an edited message; providers that "
        "bind thinking to its prefix (Anthropic H4) may reject them: retry with "
        "bound_thinking='strip' or the drop_block setting",
    )
    return out


def run(
    msgs: Sequence[Message],
    codec: Codec,
    profile: Profile,
    policy: Policy,
    *,
    keep_orphans: bool = False,
    taken: set[str] | None = None,
    first: bool = True,
    last: bool = True,
    signatures: bool = False,
    foreign: frozenset[int] = frozenset(),
) -> tuple[list[Any], list[Fix], dict[str, str]]:
    """Repair ``msgs``. ``taken`` holds ids used elsewhere in the history that a new
    id must avoid; ``first`` and ``last`` say whether ``msgs`` start and end the
    history (when repairing one piece of it)."""
    st = _State(msgs, codec, profile, policy, keep_orphans, taken or set(), last)
    out = layout(st)
    out = _drop_empty(st, out)
    if codec.shape != "items" and profile.strict_alternation:
        out = _alternate(st, out)
    if codec.shape != "blocks" and profile.bridge_after_results:
        out = _chat_bridges(st, out)
    if profile.calls_only:
        out = _split_calls(st, out)
    if first and (profile.first_user or profile.first_not_call):
        out = _leading_user(st, out)
    if codec.shape == "items" and profile.reasoning_adjacency:
        out = _reasoning(st, out)
        out = _orphaned_item_ids(st, out, msgs)
    if signatures or foreign:
        out = _signatures(st, out, signatures, foreign)
    out = _prefix_binding(st, out)
    natives = [
        o.template.native
        if o.template is not None and o.unchanged()
        else codec.build(o.role, o.blocks, o.template)
        for o in out
    ]
    return natives, st.fixes, st.id_map
