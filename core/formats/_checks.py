"""The no-op checkers of the wire formats: one tight pass over the native messages
that answers "certainly valid" without decoding anything, per rule family. Each wire
codec offers the ones its messages can be read by (`Codec.certainly_valid`).

Each checker returns True only when the history breaks none of the rules of the
profiles that name it (`Profile.checker`); anything unusual (a rule that needs context,
a server tool, merged turns, malformed input) returns None and the caller takes the
full path, which decodes, names every violation and raises on bad input. A checker
never says True where the full rules would report something:
tests/core/test_properties.py holds it to that.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

from toolpair._model import Context, Frag
from toolpair.formats._common import content_is_empty

#: ``(messages, ctx, frag) -> True`` (certainly valid) or None/False (the full path).
Checker = Callable[[Sequence[Any], Context, "Frag | None"], "bool | None"]

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch
_ANTHROPIC_PLAIN = frozenset({"text", "image", "document"})
#: API version 2026-10-21 refuses a document block in an assistant message.
_ANTHROPIC_PLAIN_2026 = frozenset({"text", "image"})
_ROLES = frozenset({"user", "assistant", "system", "developer"})


def blank(text: Any) -> bool:
    return type(text) is not str or not text or text.isspace()


_ANTHROPIC_ID_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


def anthropic_ids_ok(ids: Collection[str]) -> bool:
    """Every id a non-empty string of [a-zA-Z0-9_-], checked over all ids at once by
    deleting the allowed bytes (a regex, per id or over them all, costs more than the
    rest of the pass)."""
    if not ids:
        return True
    joined = "\n".join(ids)  # TypeError on a non-string id: the caller's full path
    # What is left after deleting the allowed bytes must be the separators alone: a
    # newline inside an id leaves one too many.
    return (
        joined.isascii()
        and joined.encode().translate(None, _ANTHROPIC_ID_BYTES) == b"\n" * (len(ids) - 1)
        and "" not in ids
    )


#: How many call ids the Anthropic pass gathers before checking them: few enough that
#: they are still in cache, and that indices into them stay below 257 (CPython caches
#: those ints; every larger one it allocates).
_BATCH = 240


#: An index past the end of any list: a turn where no result may come any more.
_CLOSED = sys.maxsize


def _anthropic_turn_ids_unique(msgs: Sequence[Any]) -> bool:
    """No tool_use id twice inside one assistant turn (consecutive assistant messages are
    one). Only run once an id repeats somewhere: the bulk check above is cheaper."""
    turn: set[str] = set()
    prev = None
    for m in msgs:
        role = m["role"]
        if role != prev:
            turn = set()
            prev = role
        if role != "assistant" or type(m["content"]) is str:
            continue
        for b in m["content"]:
            if b["type"] == "tool_use":
                if b["id"] in turn:
                    return False
                turn.add(b["id"])
    return True


def anthropic(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    if ctx.thinking or ctx.tools is not None:
        return None
    # Under API version 2026-10-21 (or any later, or one not read as a date: the full
    # path decides) an assistant document or a user text's citations is refused.
    v2026 = ctx.api_version is not None and not ctx.api_version < "2026-10-21"
    plain = _ANTHROPIC_PLAIN_2026 if v2026 else _ANTHROPIC_PLAIN
    role_prev = frag.prev_role if frag is not None else None
    # Ids are checked in bulk, a batch at a time (unique, well formed), and results are
    # matched by position: per block, this pass does little more than a bare loop would.
    ids: list[str] = []
    seen: set[str] = set()  # the ids of the batches already checked
    total = 0  # how many ids those batches held
    add = ids.append
    start = 0  # where the current assistant turn's calls begin in ``ids``
    calling = False  # the current assistant turn has made a call
    # ids[due:end] are the calls still waiting for a result at the head of this user
    # turn. Anything else in the turn closes it: no result may follow.
    due = end = 0
    thought = False
    isspace = str.isspace  # TypeError where a text is not a string
    try:
        # Consecutive messages of one role are one turn: the API merges them (A11).
        for m in msgs:
            role = m["role"]
            content = m["content"]
            if role == "assistant":
                if role_prev != "assistant":
                    if due != end:
                        return None
                    start = len(ids)
                    if start > _BATCH:
                        if not anthropic_ids_ok(ids):
                            return None
                        seen.update(ids)
                        total += start
                        ids.clear()
                        start = due = end = 0
                    role_prev = role
                if type(content) is str:
                    if calling or not content or isspace(content):
                        return None
                    continue
                for b in content:
                    t = b["type"]
                    if t == "tool_use":
                        if "toolset_name" in b or len(b["name"]) > 200:
                            return None
                        add(b["id"])
                        calling = True
                    elif t == "text":
                        x = b["text"]
                        if calling or not x or isspace(x):
                            return None
                    elif t == "thinking":
                        if not b.get("signature"):
                            return None
                        thought = True
                    elif t == "redacted_thinking":
                        thought = True
                    elif calling or t not in plain:
                        return None
                continue
            if role != "user":
                return None
            if role_prev != "user":
                if calling:
                    due, end = start, len(ids)
                    calling = False
                role_prev = role
            if type(content) is str:
                if due != end or isspace(content):
                    return None
                due = end = _CLOSED
            else:
                for b in content:
                    t = b["type"]
                    if t == "tool_result":
                        # IndexError where nothing is due: ids[end] is past the end.
                        i = b["tool_use_id"]
                        if i != ids[due]:
                            # Out of call order: bring it forward (ValueError: not due).
                            j = ids.index(i, due + 1, end)
                            ids[due], ids[j] = i, ids[due]
                        due += 1
                        if (
                            "is_error" in b
                            and b["is_error"] is True
                            and content_is_empty(b.get("content"))
                        ):
                            return None
                        continue
                    if due != end:
                        return None
                    due = end = _CLOSED
                    if t == "text":
                        x = b["text"]
                        if not x or isspace(x) or (v2026 and b.get("citations")):
                            return None
                    elif t not in _ANTHROPIC_PLAIN:
                        return None
    except (KeyError, ValueError, IndexError, TypeError):
        return None  # a result that is not due, a missing key, a text not a string
    if due != end or (role_prev == "assistant" and calling):
        return None
    if not anthropic_ids_ok(ids):
        return None
    seen.update(ids)
    if len(seen) != total + len(ids) and not _anthropic_turn_ids_unique(msgs):
        return None  # A4: an id repeated inside a turn (a later turn may reuse one)
    if frag is not None:
        # ``frag.seen`` is shared by every fragment: an id a later fragment reuses sends
        # that fragment to the full rules, which allow it in another turn (A4).
        if not frag.accept(seen, thought):
            return None
        if not frag.last:
            return True
    if msgs and msgs[-1]["role"] == "assistant":
        last = msgs[-1]["content"]
        text = last if type(last) is str else (last[-1].get("text") if last else None)
        if type(text) is str and text != text.rstrip():
            return None
        if (
            ctx.thinking is False
            and type(last) is not str
            and any(b["type"] in ("thinking", "redacted_thinking") for b in last)
        ):
            return None
    return True


def bedrock(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    return _bedrock(msgs, ctx, frag, True, False)


def bedrock_claude(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Claude 3 behind Converse: text beside tool use is fine."""
    return _bedrock(msgs, ctx, frag, False, False)


def bedrock_claude4(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Claude 4 behind Converse: and text, images and PDFs beside the results too."""
    return _bedrock(msgs, ctx, frag, False, True)


def _beside_results(b: Any) -> bool:
    if "text" in b:
        return type(b["text"]) is str and not blank(b["text"])
    if "image" in b:
        return True
    doc = b.get("document")
    return type(doc) is dict and doc.get("format") == "pdf"


def _bedrock_plain(msgs: Sequence[Any], calls_only: bool) -> list[str] | None:
    """The common valid history in fewer steps: alternating turns from a user one, of
    text blocks, calls after an assistant turn's text, and user turns holding exactly
    the results of the calls before them. Its call ids (unique and well formed: the
    caller's to check) where `_bedrock`'s loop would get through too; None: ask that
    loop."""
    ids: list[str] = []  # a non-string id fails the caller's `anthropic_ids_ok`
    add = ids.append
    start = due = 0  # ids[start:due]: the calls awaiting their results
    assistant = True  # the role of the message before
    for m in msgs:
        content = m["content"]
        if type(content) is not list or not content:
            return None
        role = m["role"]
        if role == "assistant":
            if assistant:
                return None
            assistant = True
            start = len(ids)
            spoken = False
            for b in content:
                if len(b) != 1:
                    return None
                if "toolUse" in b:
                    add(b["toolUse"]["toolUseId"])
                    continue
                if len(ids) > start:
                    return None  # text after a call
                x = b.get("text")
                if type(x) is not str or not x or x.isspace():
                    return None  # anything but text
                spoken = True
            due = len(ids)
            if calls_only and spoken and due > start:
                return None  # text beside tool use: the strict profile's question
        elif role == "user":
            if not assistant:
                return None
            assistant = False
            n = due - start
            if not n:
                for b in content:
                    if len(b) != 1:
                        return None
                    x = b.get("text")
                    if type(x) is not str or not x or x.isspace():
                        return None
                continue
            if len(content) != n:
                return None
            # Each result in place: the calls' ids in order, else as a set.
            k = start
            for b in content:
                r = b.get("toolResult")
                if r is None:
                    return None
                parts = r.get("content")
                if "status" in r and r["status"] == "error" and content_is_empty(parts):
                    return None
                if parts:
                    for p in parts:
                        if "json" in p and type(p["json"]) is not dict:
                            return None  # B11: a json block holds an object
                if r["toolUseId"] != ids[k]:
                    k = -1
                    break
                k += 1
            if k < 0:
                got = set()
                for b in content:
                    r = b.get("toolResult")
                    if r is None:
                        return None
                    parts = r.get("content")
                    if r.get("status") == "error" and content_is_empty(parts):
                        return None
                    for p in parts or ():
                        if "json" in p and type(p["json"]) is not dict:
                            return None
                    got.add(r["toolUseId"])
                if len(got) != n or not got.issuperset(ids[start:due]):
                    return None
            start = due
        else:
            return None
    if due > start:
        return None
    return ids


def _bedrock(
    msgs: Sequence[Any], ctx: Context, frag: Frag | None, calls_only: bool, media: bool
) -> bool | None:
    if ctx.thinking:
        return None
    plain = _bedrock_plain(msgs, calls_only) if frag is None else None
    if plain is not None:
        if len(set(plain)) != len(plain) or not anthropic_ids_ok(plain):
            return None  # an id repeated, or not [a-zA-Z0-9_-]
        if plain and (max(map(len, plain)) > 64 or ctx.tool_config is False):
            return None
        return True
    return _bedrock_loop(msgs, ctx, frag, calls_only, media)


def _bedrock_loop(
    msgs: Sequence[Any], ctx: Context, frag: Frag | None, calls_only: bool, media: bool
) -> bool | None:
    pending: list[str] | None = None
    seen: set[str] = set()
    # The first message must be a user one; a fragment continues its predecessor.
    prev_role = frag.prev_role or "assistant" if frag is not None else "assistant"
    tools = False
    thought = False
    for m in msgs:
        role = m["role"]
        if role == prev_role or role not in ("user", "assistant"):
            return None
        prev_role = role
        content = m["content"]
        if type(content) is not list:
            return None
        if role == "assistant":
            calls: list[str] | None = None
            spoken = reasoned = False
            for b in content:
                if "text" in b and len(b) == 1:
                    x = b["text"]  # the common block, read inline
                    if type(x) is not str or not x or x.isspace():
                        return None
                    spoken = True
                elif "toolUse" in b:
                    i = b["toolUse"]["toolUseId"]
                    if i in seen or type(i) is not str:
                        return None
                    seen.add(i)
                    if calls is None:
                        calls = [i]
                    else:
                        calls.append(i)
                elif "text" in b:
                    if blank(b["text"]):
                        return None
                    spoken = True
                elif "toolResult" in b:
                    return None
                elif "reasoningContent" in b:
                    thought = reasoned = True
                elif "image" in b or "document" in b or "video" in b:
                    spoken = True
            # The strict profile: no text beside tool use, unless reasoning says Claude.
            if calls_only and calls is not None and spoken and not reasoned:
                return None
            pending = calls
            tools = tools or calls is not None
        else:
            if pending is None:
                for b in content:
                    if "toolResult" in b or ("text" in b and blank(b["text"])):
                        return None
                continue
            if len(content) != len(pending) and not media:
                return None
            got = set()
            answers = 0
            for b in content:
                r = b.get("toolResult")
                if r is None:
                    # Claude 4: text, images and PDFs may sit beside the results.
                    if not media or not _beside_results(b):
                        return None
                    continue
                answers += 1
                parts = r.get("content")
                if r.get("status") == "error" and content_is_empty(parts):
                    return None
                for p in parts or ():
                    if "json" in p and type(p["json"]) is not dict:
                        return None  # B11: a json block holds an object
                got.add(r["toolUseId"])
            if answers != len(pending) or len(got) != answers or not got.issuperset(pending):
                return None
            pending = None
    if pending is not None:
        return None
    # Ids are [a-zA-Z0-9_-]{1,64}: checked over all of them at once, not one regex each.
    if not anthropic_ids_ok(seen) or (seen and max(map(len, seen)) > 64):
        return None
    if tools and ctx.tool_config is False:
        return None
    if frag is not None and not frag.accept(seen, thought):
        return None
    return True


def openai(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    if ctx.thinking:
        return None  # DeepSeek's thinking mode wants reasoning passed back: the full path
    return _chat(msgs, frag)


def _chat(msgs: Sequence[Any], frag: Frag | None) -> bool | None:
    """OpenAI Chat's rules (what every OpenAI and DeepSeek request pays): an assistant
    message's calls, ids unique, 1-40 characters, answered by the tool messages right
    after it, and no other tool message anywhere."""
    i = 0
    n = len(msgs)
    answered: list[str] | None = [] if frag is not None else None
    while i < n:
        m = msgs[i]
        i += 1
        role = m["role"]
        content = m.get("content")
        if content is not None and type(content) is not str:
            if type(content) is not list:
                return None
            for part in content:
                if type(part) is not dict:
                    return None
        if role != "assistant":
            if role not in _PLAIN_ROLES:
                return None  # a tool message not right after its calls, or a bad role
            continue
        calls = m.get("tool_calls")
        if not calls:
            continue
        ids = set()
        for c in calls:
            cid = c["id"]
            if type(cid) is not str or not cid or len(cid) > 40:
                return None
            ids.add(cid)
        if len(ids) != len(calls):
            return None
        got = set()
        while i < n:
            t = msgs[i]
            if t["role"] != "tool":
                break
            tid = t["tool_call_id"]
            if tid in got or tid not in ids:
                return None
            got.add(tid)
            i += 1
        if len(got) != len(ids):
            return None
        if answered is not None:
            answered.extend(ids)
    if frag is not None and answered is not None and not frag.accept(answered):
        return None
    return True


_PLAIN_ROLES = frozenset({"user", "system", "developer"})


def mistral(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """OpenAI Chat's rules as Mistral words them, and its own: ids of 9 ASCII
    alphanumerics, tool names of [a-zA-Z0-9_-], an assistant message without calls holds
    content, only a tool or an assistant message after a tool one, a system message only
    before them; the whole list starts with a user or system message and ends with a user
    or tool one (or an assistant ``prefix``)."""
    if ctx.tokenizer_version < 5 or not msgs:
        return None
    last = msgs[-1]
    if (frag is None or frag.first) and msgs[0]["role"] not in ("user", "system"):
        return None
    if (
        (frag is None or frag.last)
        and last["role"] not in ("user", "tool")
        and not (last["role"] == "assistant" and last.get("prefix") is True)
    ):
        return None
    i = 0
    n = len(msgs)
    prev = (frag.prev_role or "") if frag is not None else ""
    answered: list[str] | None = [] if frag is not None else None
    names: set[str] = set()  # tool names already found well formed
    while i < n:
        m = msgs[i]
        i += 1
        role = m["role"]
        content = m.get("content")
        if content is not None and type(content) is not str:
            if type(content) is not list:
                return None
            for part in content:
                if type(part) is not dict:
                    return None
        if role == "user":
            if prev == "tool":
                return None  # only a tool or an assistant message follows a tool one
        elif role == "system":
            if prev == "assistant" or prev == "tool":
                return None
        elif role != "assistant":
            return None  # developer, a tool message not right after its calls, a bad role
        prev = role
        if role != "assistant":
            continue
        calls = m.get("tool_calls")
        if not calls:
            if content is None:
                return None
            continue
        ids = set()
        for c in calls:
            cid = c["id"]
            # 9 ASCII alphanumerics; a tool name from a handful, checked once each.
            if type(cid) is not str or len(cid) != 9 or not cid.isascii() or not cid.isalnum():
                return None
            name = c["function"]["name"]
            if name not in names:
                if type(name) is not str or not _NAME(name):
                    return None
                names.add(name)
            ids.add(cid)
        if len(ids) != len(calls):
            return None
        got = set()
        while i < n:
            t = msgs[i]
            if t["role"] != "tool":
                break
            tid = t["tool_call_id"]
            if tid in got or tid not in ids:
                return None
            got.add(tid)
            i += 1
            prev = "tool"
        if len(got) != len(ids):
            return None
        if answered is not None:
            answered.extend(ids)
    if frag is not None and answered is not None and not frag.accept(answered):
        return None
    return True


def moonshot_thinking(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Kimi with thinking on by default: every assistant tool-call message carries a
    non-empty ``reasoning_content`` (moonshot K1), then OpenAI's rules."""
    if ctx.thinking is not False:
        for m in msgs:
            if m["role"] == "assistant" and m.get("tool_calls"):
                r = m.get("reasoning_content")
                if type(r) is not str or not r:
                    return None
    return _chat(msgs, frag)


def zhipu(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """GLM: OpenAI's rules, and a user message somewhere in the list (zhipu Z2); a
    fragment without one takes the full path."""
    for m in msgs:
        if m["role"] == "user":
            return _chat(msgs, frag)
    return None


_CHAT_CALLS = frozenset({"function_call", "custom_tool_call"})
_CHAT_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def responses_chat(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Responses items bound for Chat Completions (the Agents SDK's converter, any bridge
    from one API to the other), held to OpenAI Chat's rules: each run of assistant items
    (reasoning, messages, calls) followed by exactly one output per call of that run
    before anything else, call ids of 1-40 characters, none repeated in a run."""
    if ctx.thinking:
        return None  # DeepSeek's thinking mode wants reasoning passed back: the full path
    calls: list[str] = []
    pending: set[str] = set()
    turn_calls: set[str] = set()
    phase = "other"  # "assistant": inside a run of assistant items; "tools": its outputs
    for item in msgs:
        if type(item) is not dict:
            return None
        t = item.get("type")
        if t in _CHAT_CALLS or t == "reasoning":
            if phase != "assistant":
                if pending:
                    return None
                turn_calls = set()
                phase = "assistant"
            if t != "reasoning":
                cid = item.get("call_id")
                if type(cid) is not str or not 0 < len(cid) <= 40 or cid in turn_calls:
                    return None
                turn_calls.add(cid)
                pending.add(cid)
                calls.append(cid)
        elif t in _CHAT_OUTPUTS:
            if phase == "other":
                return None
            cid = item.get("call_id")
            if type(cid) is not str or cid not in pending:
                return None
            pending.discard(cid)
            phase = "tools"
        elif t is None or t == "message":
            role = item.get("role")
            if role == "assistant":
                if phase != "assistant":
                    if pending:
                        return None
                    turn_calls = set()
                    phase = "assistant"
            elif role in _PLAIN_ROLES:
                if pending:
                    return None
                phase = "other"
            else:
                return None
        else:
            return None
    if pending:
        return None
    # A fragment's calls join the ids seen so far; one reused across fragments sends the
    # history down the full path. Items carry no thinking bound to their prefix.
    return frag is None or frag.accept(calls, thinking=False) or None


def responses(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    if ctx.previous_response_id is not None or ctx.store is False:
        return None
    open_calls: set[str] = set()
    item_ids: set[str] = set()
    after_reasoning = False
    produced = False  # inside the run of calls right after a reasoning item
    for item in msgs:
        t = item.get("type")
        if t == "function_call":
            # An fc_ item id ties the call to its reasoning item (R3).
            if "id" in item and not (after_reasoning or produced):
                return None
            produced = after_reasoning or produced
        else:
            produced = False
        # A reasoning item must be followed by the assistant item it produced (R3).
        if after_reasoning and (t in ("reasoning", "function_call_output") or "role" in item):
            return None
        after_reasoning = t == "reasoning"
        iid = item.get("id")
        if iid is not None:
            if iid in item_ids:
                return None
            item_ids.add(iid)
        if t == "function_call":
            cid = item["call_id"]
            if cid in open_calls or type(cid) is not str or not cid or len(cid) > 64:
                return None
            if "caller" in item:
                return None  # a program's call: its linkage is the full path's (R8)
            if iid is not None and not iid.startswith("fc"):
                return None
            open_calls.add(cid)
        elif t == "function_call_output":
            cid = item["call_id"]
            if cid not in open_calls or "caller" in item:
                return None
            open_calls.discard(cid)
        elif t not in (None, "message", "reasoning") or (
            t != "reasoning" and item.get("role") not in _ROLES
        ):
            return None
    if after_reasoning or open_calls:
        return None
    if frag is not None:
        calls = [it["call_id"] for it in msgs if it.get("type") == "function_call"]
        if not frag.accept(calls):
            return None
    return True


def deepseek_responses(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """OpenAI's checker, and outputs right after the group of calls they answer: a
    group is closed (every call answered) before anything else comes."""
    open_ = 0  # calls of the current group not yet answered
    after_output = False
    for item in msgs:
        t = item.get("type")
        if t == "function_call":
            if open_ and after_output:
                return None
            open_ += 1
            after_output = False
        elif t == "function_call_output":
            open_ -= 1
            if open_ < 0:
                return None
            after_output = True
        else:
            if open_:
                return None
            after_output = False
    if open_:
        return None
    return responses(msgs, ctx, frag)


_GEMINI_ROLES = frozenset({"user", "model", "function"})
_NOTHING: list[Any] = []


def _answered_by_id(calls: list[Any], answers: list[Any]) -> bool:
    """True where every id is a non-empty string, no call id repeats and the answers
    are the calls' ids in some order (a sufficient test for what `_same` asks then)."""
    if len(calls) == 1:
        i = calls[0]
        return type(i) is str and i != "" and answers[0] == i
    ids = set(calls)
    if len(ids) != len(calls) or "" in ids or ids != set(answers):
        return False
    try:
        "".join(ids)  # TypeError where an id is not a string
    except TypeError:
        return False
    return True


def _same(a: list[Any], b: list[Any]) -> bool:
    return sorted(a) == sorted(b)


def gemini(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    return _gemini(msgs, ctx, frag, False, True)


def vertex(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Vertex AI's v1 API (the strict set): Gemini's rules, a turn answering calls
    holds nothing else, and no call or response carries an id."""
    return _gemini(msgs, ctx, frag, True, False)


def vertex_ids(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Vertex AI with a named model (v1beta1 takes ids)."""
    return _gemini(msgs, ctx, frag, True, True)


def _gemini_plain(msgs: Sequence[Any], ids_ok: bool) -> bool | None:
    """The common valid history in fewer steps: turns of text parts, model turns whose
    calls carry ids, and user turns answering all of them by id and holding nothing
    else. True only where `_gemini` says True too; None: ask `_gemini`."""
    if not ids_ok:
        return None
    due: list[str] | None = None  # the ids of the last model turn's calls
    prev_model = True  # a call turn may not open the history (G3)
    for c in msgs:
        parts = c["parts"]
        if type(parts) is not list or not parts:
            return None
        role = c.get("role", "user")
        if role == "model":
            if due is not None:
                return None
            calls: list[str] | None = None
            for p in parts:
                if type(p) is not dict or len(p) != 1:
                    return None
                if "text" in p:
                    continue
                call = p.get("functionCall")
                if type(call) is not dict or "name" not in call:
                    return None
                i = call.get("id")
                if type(i) is not str or not i:
                    return None
                if calls is None:
                    calls = [i]
                else:
                    calls.append(i)
            if calls is not None:
                if prev_model:
                    return None
                due = calls
            prev_model = True
        elif role == "user":
            prev_model = False
            if due is None:
                for p in parts:
                    if type(p) is not dict or len(p) != 1 or "text" not in p:
                        return None
                continue
            if len(parts) != len(due):
                return None
            got = set()
            for p in parts:
                resp = p.get("functionResponse") if type(p) is dict and len(p) == 1 else None
                if type(resp) is not dict or "name" not in resp:
                    return None
                got.add(resp.get("id"))
            if len(got) != len(due) or got != set(due):
                return None  # an id repeated, or an answer to no call
            due = None
        else:
            return None
    return None if due is not None else True


def _gemini(
    msgs: Sequence[Any], ctx: Context, frag: Frag | None, results_only: bool, ids_ok: bool
) -> bool | None:
    if ctx.thought_signatures:
        return None
    if frag is None and _gemini_plain(msgs, ids_ok):
        return True
    return _gemini_loop(msgs, frag, results_only, ids_ok)


def _gemini_loop(
    msgs: Sequence[Any], frag: Frag | None, results_only: bool, ids_ok: bool
) -> bool | None:
    pending: list[Any] = []  # the names of the last call turn's calls
    pending_ids: list[Any] = []
    # A call turn may not open the history (G3); a later fragment follows a user-side
    # turn (pieces start at a model turn after one).
    prev = "model" if frag is None or frag.first else "user"
    answered: list[Any] = []
    for c in msgs:
        role = c.get("role", "user")
        parts = c["parts"]
        if not parts or type(parts) is not list:
            return None
        for p in parts:
            if type(p) is not dict or "text" not in p or len(p) != 1:
                break
        else:
            # Text only (the common turn): no call may be due, and it makes none.
            if pending or role not in _GEMINI_ROLES:
                return None
            pending = pending_ids = _NOTHING
            prev = "model" if role == "model" else "user"
            continue
        names: list[Any] = []
        ids: list[Any] = []
        answers: list[Any] = []
        answer_ids: list[Any] = []
        for p in parts:
            if type(p) is not dict:
                return None
            if "functionCall" in p:
                call = p["functionCall"]
                names.append(call["name"])
                ids.append(call.get("id"))
                if not ids_ok and "id" in call:
                    return None
            elif "functionResponse" in p:
                resp = p["functionResponse"]
                answers.append(resp["name"])
                answer_ids.append(resp.get("id"))
                if not ids_ok and "id" in resp:
                    return None
            elif "function_call" in p or "function_response" in p:
                return None
        if results_only and answers and len(answers) != len(parts):
            return None
        if role == "model":
            if pending or answers or (names and prev == "model"):
                return None
        elif role in ("user", "function"):
            # With ids on both halves they pair by id, otherwise by name (G2, G7).
            if not pending and not answers:
                pass  # nothing to pair (the common user turn)
            elif len(answer_ids) == len(pending_ids) and _answered_by_id(pending_ids, answer_ids):
                answered += pending_ids  # the common case, without sorting
            elif all(type(i) is str and i for i in pending_ids + answer_ids):
                if not _same(answer_ids, pending_ids):
                    return None
                answered += pending_ids
            elif frag is not None:
                return None  # pieces are told apart by id: without ids, the full path
            elif any(i is not None and type(i) is not str for i in pending_ids + answer_ids):
                return None  # malformed: the full path names it
            elif not _same(answers, pending):
                return None
        else:
            return None
        pending = names
        pending_ids = ids
        prev = "model" if role == "model" else "user"
    if pending:
        return None
    if frag is not None and not frag.accept(answered):
        return None
    return True
