"""Hypothesis strategies: abstract histories carrying every defect repair handles,
rendered into every wire format, plus a deliberately simple pairing checker written
independently of the rule engine (a few lines per provider family).

The conformance suite (`toolpair.conformance`) builds each framework's native histories
from the same abstract ones. This module imports hypothesis, so only test code imports
it; nothing in the library does at import time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

FORMATS = ("anthropic", "bedrock", "openai", "openai-responses", "gemini", "mistral")
PROVIDERS = (
    "anthropic",
    "bedrock",
    "openai",
    "openai-responses",
    "gemini",
    "mistral",
    "vertex",
    "deepseek",
    "deepseek-responses",
    "moonshot",
    "zhipu",
    "portable",
)

# An abstract part: ("text", s) ("image", s) ("thinking", sig) ("call", id, name)
# ("result", id, name, content, is_error)
Part = tuple[Any, ...]


@dataclass
class Abs:
    role: str
    parts: list[Part] = field(default_factory=list)


DEFECTS = (
    "drop_result",
    "result_behind_text",
    "split_batch",
    "user_between",
    "result_further_back",
    "orphan",
    "duplicate",
    "dup_call_id",
    "bad_id",
    "text_after_call",
    "empty_message",
    "system_anywhere",
)


@st.composite
def abstract_history(draw: st.DrawFn, max_exchanges: int = 4) -> list[Abs]:
    counter = itertools.count()

    def uniq(prefix: str) -> str:
        return f"{prefix}{next(counter)}"

    msgs: list[Abs] = []
    for _ in range(draw(st.integers(1, max_exchanges))):
        parts: list[Part] = [("text", uniq("ask "))]
        if draw(st.booleans()) and draw(st.booleans()):
            parts.append(("image", uniq("img")))
        msgs.append(Abs("user", parts))
        for _step in range(draw(st.integers(0, 3))):
            a: list[Part] = []
            if draw(st.booleans()):
                a.append(("thinking", uniq("sig")))
            if draw(st.booleans()):
                a.append(("text", uniq("say ")))
            calls = [
                ("call", uniq("toolu"), draw(st.sampled_from(["weather", "search"])))
                for _ in range(draw(st.integers(1, 3)))
            ]
            msgs.append(Abs("assistant", a + calls))
            msgs.append(
                Abs(
                    "user",
                    [
                        (
                            "result",
                            c[1],
                            c[2],
                            uniq("out "),
                            draw(st.booleans()) and draw(st.booleans()),
                        )
                        for c in calls
                    ],
                )
            )
        msgs.append(Abs("assistant", [("text", uniq("answer "))]))
    msgs.append(Abs("user", [("text", uniq("next "))]))
    if draw(st.booleans()) and draw(st.booleans()):
        msgs.append(Abs("assistant", [("call", uniq("toolu"), "weather")]))
    return msgs


def _calls_at(msgs: list[Abs]) -> list[int]:
    return [i for i, m in enumerate(msgs) if any(p[0] == "call" for p in m.parts)]


def _results_at(msgs: list[Abs]) -> list[int]:
    return [i for i, m in enumerate(msgs) if any(p[0] == "result" for p in m.parts)]


@st.composite
def defective(draw: st.DrawFn, max_exchanges: int = 4) -> tuple[list[Abs], list[str]]:
    msgs = draw(abstract_history(max_exchanges))
    applied = draw(st.lists(st.sampled_from(DEFECTS), max_size=4))
    counter = itertools.count(1000)
    for d in applied:
        res = _results_at(msgs)
        calls = _calls_at(msgs)
        if d == "drop_result" and res:
            m = msgs[draw(st.sampled_from(res))]
            k = draw(st.sampled_from([j for j, p in enumerate(m.parts) if p[0] == "result"]))
            del m.parts[k]
        elif d == "result_behind_text" and res:
            msgs[draw(st.sampled_from(res))].parts.insert(0, ("text", f"hurry {next(counter)}"))
        elif d == "split_batch" and res:
            i = draw(st.sampled_from(res))
            m = msgs[i]
            if len(m.parts) > 1:
                msgs[i : i + 1] = [Abs("user", m.parts[:1]), Abs("user", m.parts[1:])]
        elif d == "user_between" and calls:
            i = draw(st.sampled_from(calls))
            msgs.insert(i + 1, Abs("user", [("text", f"hello? {next(counter)}")]))
        elif d == "result_further_back" and len(res) > 1:
            i = draw(st.sampled_from(res[:-1]))
            later = draw(st.sampled_from([r for r in res if r > i]))
            ks = [j for j, p in enumerate(msgs[i].parts) if p[0] == "result"]
            part = msgs[i].parts.pop(draw(st.sampled_from(ks)))
            msgs[later].parts.append(part)
        elif d == "orphan":
            users = [i for i, m in enumerate(msgs) if m.role == "user"]
            i = draw(st.sampled_from(users))
            n = next(counter)
            msgs[i].parts.append(("result", f"ghost{n}", "weather", f"boo {n}", False))
        elif d == "duplicate" and res:
            i = draw(st.sampled_from(res))
            p = draw(st.sampled_from([p for p in msgs[i].parts if p[0] == "result"]))
            dup = ("result", p[1], p[2], f"dup {next(counter)}", draw(st.booleans()))
            target = draw(st.sampled_from([r for r in _results_at(msgs) if r >= i]))
            msgs[target].parts.append(dup)
        elif d == "dup_call_id" and len(calls) > 1:
            a, b = sorted(
                draw(st.lists(st.sampled_from(calls), min_size=2, max_size=2, unique=True))
            )
            old = next(p for p in msgs[b].parts if p[0] == "call")[1]
            new = next(p for p in msgs[a].parts if p[0] == "call")[1]
            _rename(msgs, old, new, start=b)
        elif d == "bad_id" and calls:
            i = draw(st.sampled_from(calls))
            old = next(p for p in msgs[i].parts if p[0] == "call")[1]
            new = draw(st.sampled_from([f"functions.get:{old}", "x" * 70 + old, f"call {old}"]))
            _rename(msgs, old, new, start=i)
        elif d == "text_after_call" and calls:
            msgs[draw(st.sampled_from(calls))].parts.append(("text", f"then {next(counter)}"))
        elif d == "empty_message":
            i = draw(st.integers(1, len(msgs)))
            msgs.insert(i, Abs("assistant", []))
        elif d == "system_anywhere":
            # Not last: a history ending on a system message has no truthful repair (M5).
            i = draw(st.integers(0, len(msgs) - 1))
            msgs.insert(i, Abs("system", [("text", f"rule {next(counter)}")]))
    return msgs, applied


def _rename(msgs: list[Abs], old: str, new: str, start: int) -> None:
    """Rename the call ``old`` at or after ``start`` and every result after it."""
    for m in msgs[start:]:
        m.parts = [
            (p[0], new, *p[2:]) if p[0] in ("call", "result") and p[1] == old else p
            for p in m.parts
        ]


# Rendering -----------------------------------------------------------------------------
def render(msgs: list[Abs], fmt: str, gemini_ids: bool = True) -> list[Any]:
    out: list[Any] = []
    for m in msgs:
        if m.role == "system":
            if fmt in ("openai", "mistral"):
                out.append({"role": "system", "content": m.parts[0][1]})
            elif fmt == "openai-responses":
                out.append({"role": "developer", "content": m.parts[0][1]})
            continue
        out.extend(_RENDER[fmt](m, gemini_ids))
    return out


def _anthropic(m: Abs, _: bool) -> list[Any]:
    blocks = []
    for p in m.parts:
        if p[0] == "text":
            blocks.append({"type": "text", "text": p[1]})
        elif p[0] == "image":
            blocks.append({"type": "image", "source": {"type": "url", "url": p[1]}})
        elif p[0] == "thinking":
            blocks.append({"type": "thinking", "thinking": "hm", "signature": p[1]})
        elif p[0] == "call":
            blocks.append({"type": "tool_use", "id": p[1], "name": p[2], "input": {"q": 1}})
        else:
            r = {"type": "tool_result", "tool_use_id": p[1], "content": p[3]}
            if p[4]:
                r["is_error"] = True
            blocks.append(r)
    return [{"role": m.role, "content": blocks}]


def _bedrock(m: Abs, _: bool) -> list[Any]:
    blocks: list[Any] = []
    for p in m.parts:
        if p[0] == "text":
            blocks.append({"text": p[1]})
        elif p[0] == "image":
            blocks.append({"image": {"format": "png", "source": {"bytes": p[1]}}})
        elif p[0] == "thinking":
            blocks.append(
                {"reasoningContent": {"reasoningText": {"text": "hm", "signature": p[1]}}}
            )
        elif p[0] == "call":
            blocks.append({"toolUse": {"toolUseId": p[1], "name": p[2], "input": {"q": 1}}})
        else:
            r: dict[str, Any] = {"toolUseId": p[1], "content": [{"text": p[3]}]}
            if p[4]:
                r["status"] = "error"
            blocks.append({"toolResult": r})
    return [{"role": m.role, "content": blocks}]


def _chat(m: Abs, _: bool) -> list[Any]:
    if m.role == "assistant":
        texts = [p[1] for p in m.parts if p[0] == "text"]
        msg: dict[str, Any] = {"role": "assistant", "content": " ".join(texts) if texts else None}
        calls = [
            {"id": p[1], "type": "function", "function": {"name": p[2], "arguments": "{}"}}
            for p in m.parts
            if p[0] == "call"
        ]
        if calls:
            msg["tool_calls"] = calls
        return [msg]
    out: list[Any] = []
    pending: list[Any] = []
    for p in m.parts:
        if p[0] == "result":
            if pending:
                out.append({"role": "user", "content": pending})
                pending = []
            out.append({"role": "tool", "tool_call_id": p[1], "content": p[3]})
        elif p[0] == "text":
            pending.append({"type": "text", "text": p[1]})
        elif p[0] == "image":
            pending.append({"type": "image_url", "image_url": {"url": p[1]}})
    if pending or not m.parts:
        out.append({"role": "user", "content": pending})
    return out


def _responses(m: Abs, _: bool) -> list[Any]:
    out: list[Any] = []
    for p in m.parts:
        if p[0] == "text":
            if m.role == "assistant":
                out.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": p[1]}],
                    }
                )
            else:
                out.append({"role": "user", "content": p[1]})
        elif p[0] == "image":
            out.append({"role": "user", "content": [{"type": "input_image", "image_url": p[1]}]})
        elif p[0] == "thinking":
            out.append({"type": "reasoning", "id": "rs_" + p[1], "summary": []})
        elif p[0] == "call":
            out.append({"type": "function_call", "call_id": p[1], "name": p[2], "arguments": "{}"})
        else:
            out.append({"type": "function_call_output", "call_id": p[1], "output": p[3]})
    return out


def _gemini(m: Abs, ids: bool) -> list[Any]:
    parts: list[Any] = []
    for p in m.parts:
        if p[0] == "text":
            parts.append({"text": p[1]})
        elif p[0] == "image":
            parts.append({"fileData": {"fileUri": p[1], "mimeType": "image/png"}})
        elif p[0] == "thinking":
            parts.append({"text": "hm", "thought": True})
        elif p[0] == "call":
            fc: dict[str, Any] = {"name": p[2], "args": {"q": 1}}
            if ids:
                fc["id"] = p[1]
            parts.append({"functionCall": fc})
        else:
            fr: dict[str, Any] = {
                "name": p[2],
                "response": {"error": p[3]} if p[4] else {"r": p[3]},
            }
            if ids:
                fr["id"] = p[1]
            parts.append({"functionResponse": fr})
    return [{"role": "model" if m.role == "assistant" else "user", "parts": parts}]


_RENDER = {
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "openai": _chat,
    "mistral": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
}


# The independent checker -------------------------------------------------------------
def skeleton(history: list[Any], fmt: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """(role, [(kind, key)]) per message, read without toolpair's codecs."""
    out = []
    for m in history:
        items: list[tuple[str, str]] = []
        if fmt in ("anthropic", "bedrock"):
            role = m["role"]
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") == "tool_use" or "toolUse" in b:
                    items.append(("call", b["id"] if "id" in b else b["toolUse"]["toolUseId"]))
                elif b.get("type") == "tool_result" or "toolResult" in b:
                    items.append(("result", b.get("tool_use_id") or b["toolResult"]["toolUseId"]))
                else:
                    items.append(("other", ""))
        elif fmt in ("openai", "mistral"):
            role = m["role"]
            if role == "tool":
                items.append(("result", m["tool_call_id"]))
            else:
                if m.get("content"):
                    items.append(("other", ""))
                items += [("call", c["id"]) for c in m.get("tool_calls") or []]
        elif fmt == "openai-responses":
            t = m.get("type")
            if m.get("role") in ("system", "developer"):
                continue
            role = (
                "assistant"
                if t in ("function_call", "reasoning") or m.get("role") == "assistant"
                else "user"
            )
            if t == "function_call_output":
                role = "tool"
                items.append(("result", m["call_id"]))
            elif t == "function_call":
                items.append(("call", m["call_id"]))
            else:
                items.append(("other", ""))
        else:
            role = "assistant" if m["role"] == "model" else "user"
            for p in m["parts"]:
                if "functionCall" in p:
                    items.append(("call", p["functionCall"].get("id") or p["functionCall"]["name"]))
                elif "functionResponse" in p:
                    fr = p["functionResponse"]
                    items.append(("result", fr.get("id") or fr["name"]))
                else:
                    items.append(("other", ""))
        if role in ("system", "developer"):
            continue
        out.append((role, items))
    return out


#: Each host profile and the API whose pairing it keeps.
HOST_BASES = {
    "vertex": "gemini",
    "deepseek": "openai",
    "deepseek-responses": "openai-responses",
    "moonshot": "openai",
    "zhipu": "openai",
}


def simple_problems(history: list[Any], fmt: str, provider: str) -> list[str]:
    """Every call answered once, right after its turn, results first; no orphan."""
    # A host pairs as the API it serves (its own extra rules are the profile's business).
    provider = HOST_BASES.get(provider, provider)
    sk = skeleton(history, fmt)
    calls = [k for _, items in sk for kind, k in items if kind == "call"]
    results = [k for _, items in sk for kind, k in items if kind == "result"]
    problems = []
    if sorted(calls) != sorted(results):
        problems.append(f"calls {sorted(calls)} != results {sorted(results)}")
    if provider == "anthropic" and fmt != "gemini":
        # A4: ids differ inside an assistant turn; a later turn may reuse one.
        turn: list[str] = []
        for n, (role, items) in enumerate(sk):
            if n == 0 or role != sk[n - 1][0]:
                turn = []
            if role == "assistant":
                turn += [k for kind, k in items if kind == "call"]
                if len(set(turn)) != len(turn):
                    problems.append("repeated call id")
                    break
    elif len(set(calls)) != len(calls) and fmt != "gemini" and provider in ("bedrock", "portable"):
        problems.append("repeated call id")
    if provider == "openai-responses":
        seen: set[str] = set()
        for _, items in sk:
            for kind, k in items:
                if kind == "call":
                    seen.add(k)
                elif kind == "result" and k not in seen:
                    problems.append(f"output {k} before its call")
        return problems
    if fmt in ("openai", "mistral", "openai-responses") or provider in ("openai", "mistral"):
        # Consecutive assistant items of a Responses run form one message; a user
        # message holding results becomes tool messages, as a converter makes it.
        chat_sk: list[tuple[str, list[tuple[str, str]]]] = []
        for role, items in sk:
            if role == "user" and any(kind == "result" for kind, _ in items):
                for kind, k in items:
                    if kind == "result":
                        chat_sk.append(("tool", [(kind, k)]))
                    elif chat_sk and chat_sk[-1][0] == "user":
                        chat_sk[-1][1].append((kind, k))
                    else:
                        chat_sk.append(("user", [(kind, k)]))
            else:
                chat_sk.append((role, items))
        turns: list[tuple[str, list[tuple[str, str]]]] = []
        for role, items in chat_sk:
            if provider == "anthropic" and not items and role == "user":
                continue  # an empty user message merges away
            merge = fmt == "openai-responses" or provider == "anthropic"  # the API merges
            if merge and turns and role == "assistant" == turns[-1][0]:
                turns[-1][1].extend(items)
            else:
                turns.append((role, list(items)))
        for i, (role, items) in enumerate(turns):
            want = [k for kind, k in items if kind == "call"]
            if role != "assistant" or not want:
                continue
            got = [t[1][0][1] for t in turns[i + 1 : i + 1 + len(want)] if t[0] == "tool"]
            if sorted(got) != sorted(want):
                problems.append(f"calls {want} answered by {got}")
            after = turns[i + 1 + len(want)] if i + 1 + len(want) < len(turns) else None
            if provider in ("mistral", "bedrock", "portable") and after and after[0] == "user":
                problems.append("user right after tool")
        return problems
    merged: list[tuple[str, list[tuple[str, str]]]] = []
    for role, items in sk:
        if provider == "anthropic" and merged and merged[-1][0] == role:
            merged[-1][1].extend(items)
        else:
            merged.append((role, list(items)))
    for i, (role, items) in enumerate(merged):
        want = [k for kind, k in items if kind == "call"]
        if role == "assistant" and want:
            nxt = merged[i + 1][1] if i + 1 < len(merged) and merged[i + 1][0] == "user" else []
            # Gemini counts the responses of the next turn; the others want them first.
            window = nxt if provider == "gemini" else nxt[: len(want)]
            head = [k for kind, k in window if kind == "result"]
            if sorted(head) != sorted(want):
                problems.append(f"calls {want} answered by {head}")
            if provider in ("bedrock", "portable") and any(kind != "result" for kind, _ in nxt):
                problems.append("text in a result turn")
    return problems


def texts(history: Any) -> list[str]:
    """Every generated text, in order (unique strings made by the generators)."""
    found: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            if x.split(" ")[0] in (
                "ask",
                "say",
                "answer",
                "next",
                "hurry",
                "hello?",
                "then",
                "rule",
            ):
                found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(history)
    return found


def outputs(history: Any) -> list[str]:
    """Every generated tool output (``out N``, ``dup N``, ``boo``)."""
    found: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            if x.startswith(("out ", "dup ")):
                found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(history)
    return found


DROPS = ("duplicate_result_dropped", "orphan_result_dropped")


#: Fix kinds about one call and its results: each must name the call ids it touched.
PAIR_FIXES = frozenset(
    {
        "synthetic_result",
        "duplicate_result_dropped",
        "orphan_result_dropped",
        "orphan_result_as_text",
        "result_moved",
        "id_rewritten",
    }
)


def check_repair_properties(
    history: list[Any],
    provider: str,
    format: Any,
    *,
    simple: Callable[[list[Any]], list[str]] | None = None,
    dump: Callable[[list[Any]], Any] = lambda h: h,
    images: Callable[[list[Any]], list[Any]] = lambda h: [],
    model: str | None = None,
) -> Any:
    """The repair contract for one history, in any format or framework: the output is
    valid (and, given ``simple``, an independent checker agrees), the input is not
    mutated, untouched messages come back as the same objects, repair is idempotent,
    every pair fix names its ids, and no text, image or real result is lost. ``dump``
    turns messages into JSON-able data for the text and result checks."""
    import copy
    from collections import Counter

    import toolpair

    before = copy.deepcopy(history)
    r = toolpair.repair(history, provider, model=model, format=format)
    out = r.messages
    # the input is unchanged, and nothing is rebuilt that did not change
    assert history == before
    input_ids = {id(m) for m in history}
    for o in out:
        if id(o) not in input_ids:
            assert not any(o == m for m in history), f"rebuilt an untouched message: {o}"
    # valid for the provider, and the simple checker agrees
    left = toolpair.validate(out, provider, model=model, format=format)
    assert left == [], [str(v) for v in left]
    if simple is not None:
        assert simple(out) == []
    # idempotent
    again = toolpair.repair(out, provider, model=model, format=format)
    assert again.fixes == []
    assert all(a is b for a, b in zip(again.messages, out, strict=True))
    # every fix about a pair says which call it was about
    for f in r.fixes:
        assert f.kind not in PAIR_FIXES or f.ids, f"{f} names no call id"
    # nothing real is lost: every text in order (system messages, "rule N", may move
    # behind a user message), every image, every real result unless a fix reports it
    got, had = texts(dump(out)), texts(dump(history))
    assert [t for t in got if not t.startswith("rule")] == [
        t for t in had if not t.startswith("rule")
    ]
    assert Counter(got) == Counter(had)
    assert images(out) == images(history)
    lost = Counter(outputs(dump(history))) - Counter(outputs(dump(out)))
    assert not Counter(outputs(dump(out))) - Counter(outputs(dump(history)))
    assert sum(lost.values()) <= sum(f.kind in DROPS for f in r.fixes)
    return r


def blank_one_id(draw: st.DrawFn, msgs: list[Abs]) -> None:
    """Blank one call's id and its results' (frameworks that store ``""`` as it comes)."""
    ids = [p[1] for m in msgs for p in m.parts if p[0] == "call"]
    if ids:
        _rename(msgs, draw(st.sampled_from(ids)), "", start=0)


def answers_a_call(k: str, calls: Any, results: Any, provider: str) -> bool:
    """Whether a result for ``k`` answers a call made before it (counters of the calls
    and results seen so far). The Responses API pairs an output with any earlier call
    of its call_id."""
    return bool(calls[k] > 0 if provider == "openai-responses" else calls[k] > results[k])


#: Host profiles -> the provider whose pairing they share, for the independent checkers
#: (DeepSeek's Responses endpoint wants outputs right after their calls, as chat does).
HOSTED_ON = {
    "vertex": "gemini",
    "deepseek": "openai",
    "deepseek-responses": "openai",
    "moonshot": "openai",
    "zhipu": "openai",
}


def chat_problems(
    history: Sequence[Any],
    provider: str,
    *,
    role: Callable[[Any], str],
    call_ids: Callable[[Any], list[str]],
    result_id: Callable[[Any], str],
) -> list[str]:
    """An independent pairing checker for a framework whose results are tool messages
    (one per result, as chat formats have them), read through three accessors: ``role``
    ("assistant", "tool" or anything else), an assistant message's ``call_ids`` and a
    tool message's ``result_id``. Leave out messages the formatter does not send first.

    Every call is answered by exactly one tool message after it and no tool message
    answers nothing; except on the Responses API (a flat item list, where an output only
    has to follow its call), a call's results are the tool messages right after it
    (after the run of assistant messages, for Anthropic)."""
    from collections import Counter

    provider = HOSTED_ON.get(provider, provider)
    problems = []
    calls: Counter[str] = Counter()
    results: Counter[str] = Counter()
    run: list[str] = []
    for i, m in enumerate(history):
        if role(m) == "tool":
            k = result_id(m)
            if not answers_a_call(k, calls, results, provider):
                problems.append(f"result {k!r} at {i} answers no call")
            results[k] += 1
        elif role(m) == "assistant":
            want = call_ids(m)
            calls.update(want)
            want = run + want
            nxt = history[i + 1] if i + 1 < len(history) else None
            if provider == "anthropic" and nxt is not None and role(nxt) == "assistant":
                run = want  # the Messages API merges adjacent assistant turns
                continue
            run = []
            after = history[i + 1 : i + 1 + len(want)]
            got = [result_id(r) if role(r) == "tool" else None for r in after]
            if provider != "openai-responses" and Counter(got) != Counter(want):
                problems.append(f"calls {want} at {i} answered right after by {got}")
    if calls != results:
        problems.append(f"calls {sorted(calls.elements())}, results {sorted(results.elements())}")
    return problems
