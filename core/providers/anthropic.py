"""Anthropic Messages (also Claude on Vertex, which returns the same texts).

Rules A1-A11, S1-S4, T2, H1-H3 of docs/rules.md. The API merges
consecutive turns of one role (A11), so the rules read merged turns; indices are the
caller's own message indices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from toolpair._model import Block, Fix, Message, Policy, Violation
from toolpair._view import Item, Turn, pid, turns
from toolpair.providers._base import Context, Profile

A1 = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
A3 = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
A4 = "messages.{i}.content.{j}: `tool_use` ids must be unique"
# UNVERIFIED wording: Anthropic's schema errors name the field and say "Field required".
A_NO_ID = "messages.{i}.content.{j}.tool_result.tool_use_id: Field required"
A5 = (
    "messages.{i}.content.{j}: each tool_use must have a single result. Found multiple "
    "`tool_result` blocks with id: {id}"
)
A6 = "messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
A7 = (
    "messages.{i}.content.{j}.server_tool_use.id: String should match pattern "
    "'^srvtoolu_[a-zA-Z0-9_]+$'"
)
A8_NAME = "tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
A8_UNIQUE = "tools: Tool names must be unique."
A9 = "messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true"
A10 = "messages: text content blocks must be non-empty"
# Whitespace-only text gets its own 400 (anthropics/claude-code#23369, #23440;
# home-assistant/core#175637, for whitespace-only string content too). UNVERIFIED: a
# direct test of the API (LibreChat-AI/agents#124) found such a block accepted beside
# non-blank text in the same message, so it is reported only where its message has none.
A10_BLANK = "messages: text content blocks must contain non-whitespace text"
A10_TRAILING = "messages: final assistant content cannot end with trailing whitespace"
S1 = "`{tool}` tool use with id `{id}` was found without a corresponding `{tool}_tool_result` block"
S4 = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `{kind}` blocks: {id}. Each "
    "`{kind}` block must have a corresponding `server_tool_use` block before it."
)
# UNVERIFIED: no public copy of the 400 for a member result without toolset_name (T2);
# worded after the API's other field errors.
T2 = (
    "messages.{i}.content.{j}.tool_result: `toolset_name` is required: the `tool_use` it "
    "answers belongs to the `{toolset}` toolset"
)
H1 = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
H2 = (
    "messages.{i}.content.{j}: When thinking is disabled, an `assistant` message in the final "
    "position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your "
    "request."
)
H3 = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
A12_NAME = "messages.{i}.content.{j}.tool_use.name: String should have at most 200 characters"
# Mid-conversation system messages (2026-05, Opus 4.8 and later; Bedrock and Vertex too).
Y1_FIRST = (
    "messages.0: use the top-level 'system' parameter for the initial system prompt; the "
    "directive-only form (content: [] with output_config) is accepted at any position"
)
Y2_BEFORE = "messages.{i}: role 'system' must precede an 'assistant' message or end the array"
# UNVERIFIED wording; the placement is documented (mid-conversation-system-messages):
# after a user turn, or after an assistant turn that ends in a server tool use.
Y3_AFTER = (
    "messages.{i}: role 'system' must follow a 'user' message or an 'assistant' message "
    "ending in a server tool use"
)

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_SERVER_ID = re.compile(r"srvtoolu_[a-zA-Z0-9_]+")

#: Native block type names, for H1's "found" and the paths.
_TYPE_NAMES = {
    "call": "tool_use",
    "result": "tool_result",
    "text": "text",
    "image": "image",
    "server_call": "server_tool_use",
}


def _sent_as_is(block: Block, wire: bool, ctx: Context) -> bool:
    # A content block dict is sent as it stands; so is a message's string content on the
    # wire format (an empty one is a different error). A framework's own objects are
    # judged by its codec's ``sends_blank_text``, where it says.
    said = ctx.sends_blank(block) if ctx.sends_blank is not None else None
    if said is not None:
        return said
    native = block.native
    return isinstance(native, dict) or (wire and isinstance(native, str) and native != "")


def _blank_text(
    t: Turn, ctx: Context, add: Callable[[Violation], None], beside_calls: bool = False
) -> None:
    """A10: an empty text block anywhere; a whitespace-only one where its message has no
    other text (nor, with ``beside_calls``, a tool use). Only blank text that reaches the
    API is judged: frameworks that drop it before sending (LangChain's list content,
    llama-index's empty TextBlock) must not be reported for it."""
    wire = ctx.format == "anthropic"
    blank: dict[int, bool] = {}  # message -> has an empty block (else: whitespace only)
    solid: set[int] = set()
    for it in t.items:
        b = it.block
        if beside_calls and b.kind == "call":
            solid.add(it.msg)
        if b.kind != "text" or b.text is None:
            continue
        if b.text.strip():
            solid.add(it.msg)
        elif _sent_as_is(b, wire, ctx):
            blank[it.msg] = blank.get(it.msg, False) or not b.text
    for i, empty in blank.items():
        if empty:
            add(Violation("anthropic.empty_text", A10, i, (), "messages"))
        elif i not in solid:
            add(Violation("anthropic.empty_text", A10_BLANK, i, (), "messages"))


def _type_name(item: Item) -> str:
    native = item.block.native
    if isinstance(native, dict) and isinstance(native.get("type"), str):
        return str(native["type"])
    return _TYPE_NAMES.get(item.block.kind, item.block.kind)


def current_loop(ts: Sequence[Turn]) -> list[Turn]:
    """The turns after the last user turn that holds anything but results: the tool
    loop the model is in, which counts as one assistant turn (H1)."""
    start = 0
    for k in range(len(ts) - 1, -1, -1):
        t = ts[k]
        if t.role == "user" and any(it.block.kind != "result" for it in t.items):
            start = k + 1
            break
    return list(ts[start:])


def thinking_start_violation(ts: Sequence[Turn], wrap: str = "") -> Violation | None:
    """H1: with thinking on, a final tool loop must start with a thinking block."""
    loop = current_loop(ts)
    if not any(
        t.role == "assistant" and any(it.block.kind == "call" for it in t.items) for t in loop
    ):
        return None
    first = next((t for t in loop if t.role == "assistant"), None)
    if first is None or not first.items:
        return None
    head = first.items[0]
    if head.block.kind == "thinking":
        return None
    text = H1.format(i=head.msg, found=_type_name(head))
    return Violation(
        "thinking_not_first", wrap + text, head.msg, (), f"messages.{head.msg}.content.0.type"
    )


#: Server tools whose documented result block has an error form, as the API itself
#: returns it when the tool fails: the one shape repair can truthfully answer S1 with.
_SERVER_ERRORS = frozenset({"web_search", "web_fetch", "code_execution"})


def _server_error(call: Any, policy: Policy) -> dict[str, Any] | None:
    sid = call.get("id")
    if call.get("type") == "mcp_tool_use":
        return {
            "type": "mcp_tool_result",
            "tool_use_id": sid,
            "is_error": True,
            "content": [{"type": "text", "text": policy.placeholder}],
        }
    name = call.get("name")
    if call.get("type") == "server_tool_use" and name in _SERVER_ERRORS:
        return {
            "type": f"{name}_tool_result",
            "tool_use_id": sid,
            "content": {"type": f"{name}_tool_result_error", "error_code": "unavailable"},
        }
    return None


class Anthropic(Profile):
    name = "anthropic"
    #: Whitespace-only text beside a tool use in its message is accepted (a recorded
    #: 200 on claude-haiku-4-5); threads report the 400 without the request, so only the
    #: strict set (no model) holds it.
    blank_beside_calls: ClassVar[bool] = False

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # A server tool left pending (S1): its error result goes right after the call in
        # the same assistant turn, where the API itself puts the result it returns.
        out, fixes = _move_systems(natives, left) if fmt == "anthropic" else (natives, [])
        for v in left:
            if v.code != "anthropic.server_tool_pending" or fmt != "anthropic" or not v.ids:
                continue
            if not 0 <= v.index < len(out) or not isinstance(out[v.index], dict):
                continue
            m = out[v.index]
            content = m.get("content")
            if not isinstance(content, list):
                continue
            at = next(
                (
                    j
                    for j, b in enumerate(content)
                    if isinstance(b, dict) and b.get("id") == v.ids[0]
                ),
                None,
            )
            result = None if at is None else _server_error(content[at], policy)
            if at is None or result is None:
                continue
            if out is natives:
                out = list(natives)
            out[v.index] = {**m, "content": [*content[: at + 1], result, *content[at + 1 :]]}
            fixes.append(
                Fix(
                    "server_result_added",
                    v.index,
                    v.ids,
                    f"{result['type']} with an error right after its call, as the API reports "
                    "a failed server tool",
                )
            )
        return out, fixes

    def for_model(self, model: str) -> Profile:
        return _NAMED if type(self) is Anthropic else self

    id_pattern = re.compile(r"[a-zA-Z0-9_-]+")
    # The length limit is UNVERIFIED (docs/rules.md A6); 64 is what the ecosystem assumes
    # and what Bedrock enforces, so rewritten ids stay within it.
    id_max = 64

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        ts = turns(messages, "all", ctx.shape)
        out: list[Violation] = []
        add = out.append
        seen_calls: set[str] = set()
        seen_servers: set[str] = set()
        toolsets: dict[str, str] = {}
        for k, t in enumerate(ts):
            if t.role == "assistant":
                self._assistant(ts, k, t, seen_calls, seen_servers, toolsets, add)
            else:
                self._user(ts, k, t, toolsets, add)
            _blank_text(t, ctx, add, self.blank_beside_calls)
            for it in t.items:
                b = it.block
                if b.kind == "thinking" and b.sub == "thinking":
                    sig = b.native.get("signature") if isinstance(b.native, dict) else None
                    if not isinstance(sig, str) or not sig:
                        add(
                            Violation(
                                "anthropic.invalid_signature",
                                H3.format(i=it.msg, j=it.pos),
                                it.msg,
                                (),
                                f"messages.{it.msg}.content.{it.pos}",
                            )
                        )
        if ts and ts[-1].role == "assistant" and ts[-1].items:
            last = ts[-1].items[-1]
            if (
                last.block.kind == "text"
                and (last.block.text or "") != (last.block.text or "").rstrip()
            ):
                add(
                    Violation(
                        "anthropic.trailing_whitespace", A10_TRAILING, last.msg, (), "messages"
                    )
                )
        if ctx.thinking:
            v = thinking_start_violation(ts)
            if v is not None:
                add(Violation("anthropic." + v.code, v.message, v.index, v.ids, v.path))
        elif ctx.thinking is False and messages and messages[-1].role == "assistant":
            last_msg = messages[-1]
            for j, b in enumerate(last_msg.blocks):
                if b.kind == "thinking":
                    add(
                        Violation(
                            "anthropic.thinking_disabled",
                            H2.format(i=last_msg.index, j=j),
                            last_msg.index,
                            (),
                            f"messages.{last_msg.index}.content.{j}",
                        )
                    )
                    break
        if ctx.tools is not None:
            out.extend(self._tools(ctx.tools))
        for m in messages:
            if m.role != "assistant":
                continue
            for j, b in enumerate(m.blocks):
                if b.kind == "call" and b.name is not None and len(b.name) > 200:
                    add(
                        Violation(
                            "anthropic.tool_use_name_too_long",
                            A12_NAME.format(i=m.index, j=j),
                            m.index,
                            (pid(b),),
                            f"messages.{m.index}.content.{j}.tool_use.name",
                        )
                    )
        if ctx.format == "anthropic":
            # A framework's system messages go to the top-level system prompt; only the
            # wire format sends them inside ``messages``.
            _system_turns(messages, add)
        return out

    def _assistant(
        self,
        ts: Sequence[Turn],
        k: int,
        t: Turn,
        seen_calls: set[str],
        seen_servers: set[str],
        toolsets: dict[str, str],
        emit: Callable[[Violation], None],
    ) -> None:
        calls: list[Item] = []
        after_call: list[Item] = []
        pending: dict[str, Item] = {}
        for it in t.items:
            b = it.block
            if b.kind == "call":
                calls.append(it)
                cid = pid(b)
                if b.toolset:
                    toolsets[cid] = b.toolset
                path = f"messages.{it.msg}.content.{it.pos}"
                if b.id is not None and self.id_pattern.fullmatch(cid) is None:
                    emit(
                        Violation(
                            "anthropic.invalid_tool_use_id",
                            A6.format(i=it.msg, j=it.pos),
                            it.msg,
                            (cid,),
                            path + ".tool_use.id",
                        )
                    )
                if b.id is not None and cid in seen_calls:
                    emit(
                        Violation(
                            "anthropic.duplicate_tool_use_id",
                            A4.format(i=it.msg, j=it.pos),
                            it.msg,
                            (cid,),
                            path,
                        )
                    )
                seen_calls.add(cid)
            elif b.kind == "server_call":
                if b.id is not None:
                    if b.sub == "server_tool_use" and not _SERVER_ID.fullmatch(b.id):
                        emit(
                            Violation(
                                "anthropic.invalid_server_tool_use_id",
                                A7.format(i=it.msg, j=it.pos),
                                it.msg,
                                (b.id,),
                                f"messages.{it.msg}.content.{it.pos}.server_tool_use.id",
                            )
                        )
                    seen_servers.add(b.id)
                    pending[b.id] = it
                if calls:
                    after_call.append(it)
            elif b.kind == "server_result":
                if b.id is not None and b.id not in seen_servers:
                    emit(
                        Violation(
                            "anthropic.unexpected_server_result",
                            S4.format(i=it.msg, j=it.pos, kind=b.sub, id=b.id),
                            it.msg,
                            (b.id,),
                            f"messages.{it.msg}.content.{it.pos}",
                        )
                    )
                if b.id is not None:
                    pending.pop(b.id, None)
                if calls:
                    after_call.append(it)
            elif b.kind not in ("thinking", "reasoning") and calls:
                after_call.append(it)
        nxt = ts[k + 1] if k + 1 < len(ts) else None
        if calls:
            leading: set[str] = set()
            anywhere: set[str] = set()
            if nxt is not None and nxt.role == "user":
                in_front = True
                for it in nxt.items:
                    if it.block.kind == "result":
                        anywhere.add(pid(it.block))
                        if in_front:
                            leading.add(pid(it.block))
                    else:
                        in_front = False
            missing = [c for c in calls if pid(c.block) not in leading]
            if missing:
                at = missing[0].msg
                ids = tuple(dict.fromkeys(pid(c.block) for c in missing))
                code = (
                    "anthropic.results_not_first"
                    if all(i in anywhere for i in ids)
                    else "anthropic.missing_result"
                )
                emit(
                    Violation(code, A1.format(i=at, ids=", ".join(ids)), at, ids, f"messages.{at}")
                )
            if after_call:
                first = after_call[0]
                before = tuple(
                    pid(c.block) for c in calls if (c.msg, c.pos) < (first.msg, first.pos)
                )
                emit(
                    Violation(
                        "anthropic.content_after_tool_use",
                        A1.format(i=first.msg, ids=", ".join(before)),
                        first.msg,
                        before,
                        f"messages.{first.msg}.content.{first.pos}",
                    )
                )
        # A server tool still pending when the turn ends: every later turn may hold only
        # results (S1; measured on claude-sonnet-4-5: refused as soon as any turn with other
        # content follows, not only the next one), and a pause_turn at the very end is fine
        # (S3).
        if pending and any(
            it.block.kind != "result" for later in ts[k + 1 :] for it in later.items
        ):
            for sid, it in pending.items():
                tool = it.block.name or "server_tool"
                emit(
                    Violation(
                        "anthropic.server_tool_pending",
                        S1.format(tool=tool, id=sid),
                        it.msg,
                        (sid,),
                        f"messages.{it.msg}",
                    )
                )

    def _user(
        self,
        ts: Sequence[Turn],
        k: int,
        t: Turn,
        toolsets: dict[str, str],
        emit: Callable[[Violation], None],
    ) -> None:
        prev = ts[k - 1] if k > 0 else None
        prev_calls = (
            {pid(it.block) for it in prev.items if it.block.kind == "call"}
            if prev is not None and prev.role == "assistant"
            else set()
        )
        seen: set[str] = set()
        for it in t.items:
            b = it.block
            if b.kind != "result":
                continue
            path = f"messages.{it.msg}.content.{it.pos}"
            if b.missing_id:
                emit(
                    Violation(
                        "anthropic.result_without_id",
                        A_NO_ID.format(i=it.msg, j=it.pos),
                        it.msg,
                        (),
                        path + ".tool_result.tool_use_id",
                    )
                )
                continue
            rid = pid(b)
            if rid not in prev_calls:
                emit(
                    Violation(
                        "anthropic.unexpected_result",
                        A3.format(i=it.msg, j=it.pos, id=rid),
                        it.msg,
                        (rid,),
                        path,
                    )
                )
            elif rid in seen:
                emit(
                    Violation(
                        "anthropic.duplicate_result",
                        A5.format(i=it.msg, j=it.pos, id=rid),
                        it.msg,
                        (rid,),
                        path,
                    )
                )
            seen.add(rid)
            if b.is_error and b.empty:
                emit(
                    Violation(
                        "anthropic.empty_error_result",
                        A9.format(i=it.msg, j=it.pos),
                        it.msg,
                        (rid,),
                        path + ".tool_result",
                    )
                )
            toolset = toolsets.get(rid)
            if toolset and not b.toolset and rid in prev_calls:
                emit(
                    Violation(
                        "anthropic.missing_toolset_name",
                        T2.format(i=it.msg, j=it.pos, toolset=toolset),
                        it.msg,
                        (rid,),
                        path,
                    )
                )

    def _tools(self, tools: Sequence[object]) -> list[Violation]:
        out = []
        names: set[str] = set()
        for k, tool in enumerate(tools):
            if not isinstance(tool, dict) or "name" not in tool:
                continue
            name = tool["name"]
            if tool.get("type") in (None, "custom") and (
                not isinstance(name, str) or not _NAME.fullmatch(name)
            ):
                out.append(
                    Violation(
                        "anthropic.invalid_tool_name",
                        A8_NAME.format(k=k),
                        0,
                        (),
                        f"tools.{k}.custom.name",
                    )
                )
            if name in names:
                out.append(Violation("anthropic.duplicate_tool_name", A8_UNIQUE, 0, (), "tools"))
            names.add(name)
        return out


#: System turns repair moves forward, past the user turns after them, to stand before
#: the next assistant turn (or last): out from between a call and its results rather
#: than answering the call behind them.
_MOVABLE = frozenset(
    {
        "anthropic.system_between_call_and_result",
        "anthropic.system_not_before_assistant",
        "anthropic.system_first",
    }
)


def _move_systems(natives: list[Any], left: Sequence[Violation]) -> tuple[list[Any], list[Fix]]:
    out, fixes = natives, []
    # From the last one back, so each move leaves the earlier indices where they were.
    for v in sorted((v for v in left if v.code in _MOVABLE), key=lambda v: -v.index):
        i = v.index
        if not 0 <= i < len(out) or not isinstance(out[i], dict) or out[i].get("role") != "system":
            continue
        j = i + 1
        while j < len(out) and isinstance(out[j], dict) and out[j].get("role") == "user":
            j += 1
        if j == i + 1:
            continue  # nothing to move past: another system turn, or an assistant turn
        out = [*out[:i], *out[i + 1 : j], out[i], *out[j:]]
        fixes.append(
            Fix(
                "system_moved",
                i,
                v.ids,
                "a system turn moved past the user turns after it"
                + (", out from between the calls and their results" if v.ids else ""),
            )
        )
    return out, fixes


def _system_turns(messages: Sequence[Message], add: Callable[[Violation], None]) -> None:
    """Where a mid-conversation system message may stand (Y1-Y3): not first, after a
    user turn (or an assistant turn ending in a server tool use), and last or before an
    assistant turn; so never two in a row, and never between a tool_use and its result.
    The directive-only form (``content: []``) may stand anywhere."""
    n = len(messages)
    for k, m in enumerate(messages):
        if m.role != "system" or (isinstance(m.native, dict) and m.native.get("content") == []):
            continue
        i = m.index
        where = f"messages.{i}.role"
        if k == 0:
            add(Violation("anthropic.system_first", Y1_FIRST, i, (), where))
            continue
        prev = messages[k - 1]
        nxt = messages[k + 1] if k + 1 < n else None
        calls = [b for b in prev.blocks if b.kind == "call"] if prev.role == "assistant" else []
        answered = {b.id for b in nxt.blocks if b.kind == "result"} if nxt is not None else set()
        split = tuple(pid(b) for b in calls if b.id in answered)
        if split:
            # Its results come after it: the system turn splits the pair.
            add(
                Violation(
                    "anthropic.system_between_call_and_result",
                    Y2_BEFORE.format(i=i),
                    i,
                    split,
                    where,
                )
            )
            continue
        if prev.role == "assistant" and not (prev.blocks and prev.blocks[-1].kind == "server_call"):
            add(Violation("anthropic.system_after_assistant", Y3_AFTER.format(i=i), i, (), where))
        if nxt is not None and nxt.role != "assistant":
            add(
                Violation(
                    "anthropic.system_not_before_assistant", Y2_BEFORE.format(i=i), i, (), where
                )
            )


class _Named(Anthropic):
    blank_beside_calls = True


_NAMED = _Named()
