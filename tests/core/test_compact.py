"""Compaction: units, safe cuts, trim, clear_tool_results, prune, offload.

Examples in every wire format, and the shapes that broke real trimmers (LangChain's
trim_messages, LlamaIndex's memory buffer, agno's history window) rebuilt as wire
histories that must come out whole.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import toolpair
from toolpair import Block, Message
from toolpair._model import Role

FORMATS = ("anthropic", "bedrock", "openai", "openai-responses", "gemini", "mistral")


# --------------------------------------------------------------------------- builders
# A tiny abstract history: ("user", text) ("system", text) ("assistant", [parts])
# ("results", [(id, name, content)]); parts: ("text", s) ("think", sig) ("call", id, name).


def render(abstract: Sequence[tuple[str, Any]], fmt: str) -> list[Any]:
    out: list[Any] = []
    for role, body in abstract:
        if role == "system":
            if fmt in ("openai", "mistral"):
                out.append({"role": "system", "content": body})
            elif fmt == "openai-responses":
                out.append({"role": "developer", "content": body})
        elif role == "user":
            out.append(_user(body, fmt))
        elif role == "assistant":
            out.extend(_assistant(body, fmt))
        else:
            out.extend(_results(body, fmt))
    return out


def _user(text: str, fmt: str) -> Any:
    if fmt == "anthropic":
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    if fmt == "bedrock":
        return {"role": "user", "content": [{"text": text}]}
    if fmt == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    return {"role": "user", "content": text}


#: Per format, how a text, a thinking and a call part of an assistant turn are written.
_PARTS: dict[str, tuple[Callable[[tuple[str, ...]], Any], ...]] = {
    "anthropic": (
        lambda p: {"type": "text", "text": p[1]},
        lambda p: {"type": "thinking", "thinking": "hm", "signature": p[1]},
        lambda p: {"type": "tool_use", "id": p[1], "name": p[2], "input": {"q": p[1]}},
    ),
    "bedrock": (
        lambda p: {"text": p[1]},
        lambda p: {"reasoningContent": {"reasoningText": {"text": "hm", "signature": p[1]}}},
        lambda p: {"toolUse": {"toolUseId": p[1], "name": p[2], "input": {"q": p[1]}}},
    ),
    "gemini": (
        lambda p: {"text": p[1]},
        lambda p: {"text": "hm", "thought": True},
        lambda p: {"functionCall": {"id": p[1], "name": p[2], "args": {"q": p[1]}}},
    ),
    "openai-responses": (
        lambda p: {
            "type": "message",
            "id": "msg_" + p[1],
            "role": "assistant",
            "content": [{"type": "output_text", "text": p[1]}],
        },
        lambda p: {"type": "reasoning", "id": "rs_" + p[1], "summary": []},
        lambda p: {
            "type": "function_call",
            "id": "fc_" + p[1],
            "call_id": p[1],
            "name": p[2],
            "arguments": json.dumps({"q": p[1]}),
        },
    ),
}


def _assistant(parts: Sequence[tuple[str, ...]], fmt: str) -> list[Any]:
    if fmt in _PARTS:
        text, think, call = _PARTS[fmt]
        out = [{"text": text, "think": think}.get(p[0], call)(p) for p in parts]
        if fmt == "openai-responses":
            return out
        if fmt == "gemini":
            return [{"role": "model", "parts": out}]
        return [{"role": "assistant", "content": out}]
    texts = [p[1] for p in parts if p[0] == "text"]
    msg: dict[str, Any] = {"role": "assistant", "content": " ".join(texts) if texts else None}
    calls = [
        {
            "id": p[1],
            "type": "function",
            "function": {"name": p[2], "arguments": json.dumps({"q": p[1]})},
        }
        for p in parts
        if p[0] == "call"
    ]
    if calls:
        msg["tool_calls"] = calls
    return [msg]


def _results(results: Sequence[tuple[str, str, str]], fmt: str) -> list[Any]:
    if fmt == "anthropic":
        return [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": c} for i, _, c in results
                ],
            }
        ]
    if fmt == "bedrock":
        return [
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": i, "content": [{"text": c}]}}
                    for i, _, c in results
                ],
            }
        ]
    if fmt == "gemini":
        return [
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": i, "name": n, "response": {"result": c}}}
                    for i, n, c in results
                ],
            }
        ]
    if fmt == "openai-responses":
        return [{"type": "function_call_output", "call_id": i, "output": c} for i, _, c in results]
    return [{"role": "tool", "tool_call_id": i, "name": n, "content": c} for i, n, c in results]


#: The case LangChain's trim_messages cuts in half, ids Mistral-safe.
WEATHER = [
    ("system", "sys"),
    ("user", "what's the weather in SF and NYC?"),
    ("assistant", [("call", "call00001", "weather"), ("call", "call00002", "weather")]),
    ("results", [("call00001", "weather", "sunny"), ("call00002", "weather", "rainy")]),
    ("assistant", [("text", "SF sunny, NYC rainy")]),
    ("user", "thanks"),
]


def loop(
    steps: int, size: int = 10, ask: str = "do the task", tag: str = "lp"
) -> list[tuple[str, Any]]:
    """One user turn and a tool loop of ``steps`` calls, then an answer."""
    out: list[tuple[str, Any]] = [("user", ask)]
    for k in range(steps):
        cid = f"{tag}{k:07d}"
        out.append(("assistant", [("text", f"step {k}"), ("call", cid, "search")]))
        out.append(("results", [(cid, "search", f"result {k} " + "x" * size)]))
    out.append(("assistant", [("text", "done")]))
    out.append(("user", "next"))
    return out


def one_call(cid: str, name: str, result: str, ask: str = "q") -> list[tuple[str, Any]]:
    """A user turn, one call and its result."""
    return [("user", ask), ("assistant", [("call", cid, name)]), ("results", [(cid, name, result)])]


def ids_of(history: Any, fmt: str) -> tuple[list[str], list[str]]:
    codec_msgs = _decode(history, fmt)
    calls = [b.id or "" for m in codec_msgs for b in m.blocks if b.kind == "call"]
    results = [b.id or "" for m in codec_msgs for b in m.blocks if b.kind == "result"]
    return calls, results


def _decode(history: Any, fmt: str) -> list[Message]:
    from toolpair.formats import get_codec

    raw = history
    if isinstance(history, dict):
        raw = history.get("messages") or history.get("input") or history.get("contents")
    return get_codec(fmt).decode(raw)


def assert_whole(history: Any, fmt: str) -> None:
    """Every call has its result and every result its call."""
    calls, results = ids_of(history, fmt)
    assert sorted(calls) == sorted(results), (calls, results)


def valid_where_it_was(history: Any, out: Any, fmt: str, *why: Any) -> None:
    """Every provider that accepted the history accepts what came out."""
    for p in toolpair.PROVIDERS:
        if not toolpair.validate(history, p, format=fmt):
            assert toolpair.validate(out, p, format=fmt) == [], (p, *why)


def same_objects_in_order(out: Sequence[Any], inp: Sequence[Any]) -> None:
    pos = {id(m): k for k, m in enumerate(inp)}
    at = [pos[id(m)] for m in out if id(m) in pos]
    assert at == sorted(at)
    for m in out:
        if id(m) not in pos:
            assert not any(m == x for x in inp), f"rebuilt an untouched message: {m}"


def one_each(_: Any) -> int:
    return 1


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize("fmt", FORMATS)
def test_units_tile_the_history_and_hold_whole_pairs(fmt: str) -> None:
    h = render(WEATHER, fmt)
    us = toolpair.units(h, format=fmt)
    assert us[0].start == 0 and us[-1].stop == len(h)
    assert all(a.stop == b.start for a, b in itertools.pairwise(us))
    tool = [u for u in us if u.kind == "tool"]
    assert len(tool) == 1 and tool[0].ids == ("call00001", "call00002")
    assert sorted(tool[0].results) == ["call00001", "call00002"]
    kinds = [u.kind for u in us]
    expected = ["user", "tool", "assistant", "user"]
    if fmt in ("openai", "mistral", "openai-responses"):
        expected = ["system", *expected]
    assert kinds == expected


def test_units_in_items_shape_keep_reasoning_with_its_call() -> None:
    h = render(
        [
            ("user", "q"),
            ("assistant", [("think", "a1"), ("call", "c1", "f"), ("call", "c2", "f")]),
            ("results", [("c1", "f", "x"), ("c2", "f", "y")]),
            ("assistant", [("think", "a2"), ("text", "ok")]),
        ],
        "openai-responses",
    )
    us = toolpair.units(h, format="openai-responses")
    assert [(u.start, u.stop, u.kind) for u in us] == [
        (0, 1, "user"),
        (1, 6, "tool"),
        (6, 8, "assistant"),
    ]


def test_responses_output_far_from_its_call_merges_units() -> None:
    h = [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": "meanwhile"},
        {"role": "user", "content": "and?"},
        {"type": "function_call_output", "call_id": "c1", "output": "late"},
    ]
    assert toolpair.validate(h, "openai-responses") == []
    us = toolpair.units(h)
    assert [(u.start, u.stop) for u in us] == [(0, 1), (1, 5)]
    assert toolpair.safe_cut(h, 3) == 1
    assert toolpair.safe_cut(h, 3, keep="tail") == 5


def test_gemini_units_pair_id_less_calls_by_name() -> None:
    h = [
        {"role": "user", "parts": [{"text": "q"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "a", "args": {}}},
                {"functionCall": {"name": "b", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "a", "response": {"r": 1}}},
                {"functionResponse": {"name": "b", "response": {"r": 2}}},
            ],
        },
        {"role": "model", "parts": [{"text": "ok"}]},
    ]
    us = toolpair.units(h)
    assert [(u.kind, u.ids) for u in us] == [("user", ()), ("tool", ("a", "b")), ("assistant", ())]


def test_units_take_a_body_and_a_codec_instance() -> None:
    from toolpair.formats import get_codec

    body = {"model": "m", "max_tokens": 10, "system": "s", "messages": render(WEATHER, "anthropic")}
    assert toolpair.units(body) == toolpair.units(body["messages"], format=get_codec("anthropic"))


# --------------------------------------------------------------------------- safe_cut


@pytest.mark.parametrize("fmt", FORMATS)
def test_safe_cut_never_splits_a_pair(fmt: str) -> None:
    h = render(WEATHER, fmt)
    n = len(h)
    for i in range(-2, n + 3):
        b = toolpair.safe_cut(h, i, format=fmt)
        a = toolpair.safe_cut(h, i, keep="tail", format=fmt)
        j = min(max(i + n if i < 0 else i, 0), n)
        assert b <= j <= a
        assert_whole(h[:b], fmt)
        assert_whole(h[a:], fmt)
        bounds = {0} | {u.stop for u in toolpair.units(h, format=fmt)}
        assert a in bounds and b in bounds


def test_safe_cut_rejects_a_bad_keep() -> None:
    with pytest.raises(ValueError, match="keep"):
        toolpair.safe_cut(render(WEATHER, "openai"), 2, keep="middle")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- trim


@pytest.mark.parametrize("fmt", FORMATS)
def test_trim_under_budget_is_a_no_op(fmt: str) -> None:
    h = render(WEATHER, fmt)
    r = toolpair.trim(h, 10_000, format=fmt)
    assert r.fixes == [] and r.evicted == []
    assert all(a is b for a, b in zip(r.messages, h, strict=True))
    assert r.tokens_before == r.tokens_after == toolpair.count_tokens(h, format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_trim_last_starts_at_a_user_turn(fmt: str) -> None:
    h = render(WEATHER + loop(3), fmt)
    before = copy.deepcopy(h)
    r = toolpair.trim(h, 60, format=fmt)
    assert h == before
    same_objects_in_order(r.messages, h)
    assert_whole(r.messages, fmt)
    body = [m for m in r.messages if m.get("role") not in ("system", "developer")]
    assert (body[0].get("role") == "user" and "parts" not in body[0]) or body[0]["parts"]
    assert r.evicted and all(f.kind in ("unit_evicted",) for f in r.fixes)
    assert r.tokens_after <= 60
    valid_where_it_was(h, r.messages, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_trim_inside_a_long_tool_loop_keeps_the_task(fmt: str) -> None:
    h = render(loop(12, size=40)[:-2], fmt)  # the turn is still going: it ends in results
    r = toolpair.trim(h, 120, format=fmt)
    assert_whole(r.messages, fmt)
    kinds = [f.kind for f in r.fixes]
    assert "cut_inside_turn" in kinds
    assert r.messages[0] is h[0]  # the user message that opened the turn
    assert r.messages[-1] is h[-1]
    assert r.tokens_after <= 120
    valid_where_it_was(h, r.messages, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_trim_keeps_an_oversized_newest_unit_whole(fmt: str) -> None:
    h = render(one_call("big000001", "read", "z" * 4000), fmt)
    r = toolpair.trim(h, 50, format=fmt)
    assert_whole(r.messages, fmt)
    assert r.messages[-1] is h[-1]
    assert [f.kind for f in r.fixes if f.kind == "unrepaired"] == ["unrepaired"]
    assert "over budget" in r.unrepaired[0].detail


def test_trim_keep_system_and_first_user() -> None:
    h = render([("system", "rules"), *loop(2), ("system", "mid rules"), *loop(4)], "openai")
    r = toolpair.trim(h, 70, token_counter="approximate", keep_first_user=True)
    roles = [m["role"] for m in r.messages]
    assert r.messages[0] is h[0] and r.messages[1] is h[1]
    assert any(m is h[8] for m in r.messages)  # the mid-history system message
    assert roles.count("system") == 2
    assert_whole(r.messages, "openai")
    r2 = toolpair.trim(h, 70, keep_system=False)
    assert all(m["role"] != "system" for m in r2.messages[:1])


def test_trim_with_a_callable_counter_counts_each_message_once() -> None:
    h = render(WEATHER + loop(5), "anthropic")
    seen: list[int] = []

    def counter(m: Any) -> int:
        seen.append(id(m))
        return 1

    r = toolpair.trim(h, 6, token_counter=counter)
    assert len(seen) == len(h)
    assert len(r.messages) <= 6 or r.unrepaired
    assert_whole(r.messages, "anthropic")


def test_trim_first_ends_where_the_model_answers() -> None:
    h = render(WEATHER + loop(3), "mistral")
    r = toolpair.trim(h, 5, token_counter=one_each, strategy="first")
    assert_whole(r.messages, "mistral")
    assert r.messages[-1]["role"] in ("user", "tool")
    assert toolpair.validate(r.messages, "mistral") == []


def test_trim_with_provider_repairs_for_it() -> None:
    # A user turn right after the kept pinned first user: Bedrock wants alternation.
    # Text beside tool use: a Claude model on Bedrock takes it.
    claude = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    h = render(loop(2)[:-1] + loop(2, ask="again", tag="ag"), "bedrock")
    assert toolpair.validate(h, "bedrock", model=claude) == []
    r = toolpair.trim(
        h, 12, token_counter=one_each, keep_first_user=True, provider="bedrock", model=claude
    )
    assert toolpair.validate(r.messages, "bedrock", model=claude) == []
    assert r.provider == "bedrock"
    assert_whole(r.messages, "bedrock")


def test_trim_a_body_stays_a_body() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": render(WEATHER + loop(3), "anthropic")}
    r = toolpair.trim(body, 40)
    assert isinstance(r.messages, dict) and r.messages["model"] == "m"
    assert len(r.messages["messages"]) < len(body["messages"])
    assert len(body["messages"]) == len(render(WEATHER + loop(3), "anthropic"))


def test_trim_rejects_bad_arguments() -> None:
    h = render(WEATHER, "openai")
    with pytest.raises(ValueError, match="strategy"):
        toolpair.trim(h, 5, strategy="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens"):
        toolpair.trim(h, -1)
    with pytest.raises(ValueError, match="token_counter"):
        toolpair.trim(h, 5, token_counter="tiktoken")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="returned"):
        toolpair.trim(h, 5, token_counter=lambda m: -1)


# --------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("max_tokens", "kwargs"),
    [
        (2, {"token_counter": one_each}),  # LC: [Tool(call_2), AI] orphan
        (3, {"token_counter": one_each}),  # LC include_system: [System, Tool(call_2), AI]
        (3, {"token_counter": one_each, "strategy": "first"}),  # [Sys, Human, AI(calls)]
        (4, {"token_counter": one_each, "strategy": "first"}),  # half a parallel group
        (20, {}),  # approximate: [Tool(call_2), AI]
    ],
)
def test_langchain_trim_messages_orphans_come_out_whole(
    fmt: str, max_tokens: int, kwargs: dict[str, Any]
) -> None:
    h = render(WEATHER[:-1], fmt)
    r = toolpair.trim(h, max_tokens, **kwargs, format=fmt)
    assert_whole(r.messages, fmt)
    valid_where_it_was(h, r.messages, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_langchain_one_long_human_turn_is_not_dropped(fmt: str) -> None:
    # start_on="human" returned just [SystemMessage] (experiment E).
    h = render([("system", "sys"), *loop(8, size=30)[:-2]], fmt)
    r = toolpair.trim(h, 90, format=fmt)
    assert_whole(r.messages, fmt)
    ask = 1 if fmt in ("openai", "mistral", "openai-responses") else 0
    assert r.messages[ask] is h[ask]  # the human turn
    assert r.messages[-1] is h[-1] and len(r.messages) > ask + 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_llamaindex_memory_cuts_come_out_whole(fmt: str) -> None:
    # ChatMemoryBuffer case A: [user(40 tok), assistant(call), tool(2 tok)], limit 10 -> [tool].
    h = render(one_call("toolu0001", "f", "ok", ask="w" * 160), fmt)
    for limit in (1, 10, 25):
        r = toolpair.trim(h, limit, format=fmt)
        assert_whole(r.messages, fmt)
        assert r.messages[-1] is h[-1]
        valid_where_it_was(h, r.messages, fmt, limit)
    # Case B: the last message alone over the limit -> a lone TOOL; here its unit stays.
    hb = render(one_call("toolu0002", "f", "z" * 400), fmt)
    rb = toolpair.trim(hb, 10, format=fmt)
    assert_whole(rb.messages, fmt)
    assert rb.unrepaired


def test_llamaindex_memory_without_user_message() -> None:
    # A history with no user message at all (Memory archived it entirely).
    h = [{"role": "assistant", "content": "a" * 200}, {"role": "assistant", "content": "b"}]
    r = toolpair.trim(h, 10)
    assert r.messages == [h[1]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_agno_history_limits_come_out_whole(fmt: str) -> None:
    # get_messages(limit=3) over [system, ..., tool(B), assistant] kept an orphan tool.
    a = [
        ("system", "sys"),
        ("user", "q"),
        ("assistant", [("call", "toolu000A", "f")]),
        ("results", [("toolu000A", "f", "a")]),
        ("assistant", [("call", "toolu000B", "f")]),
        ("results", [("toolu000B", "f", "b")]),
        ("assistant", [("text", "done")]),
    ]
    h = render(a, fmt)
    for limit in range(1, len(h) + 1):
        cut = toolpair.safe_cut(h, len(h) - limit, keep="tail", format=fmt)
        assert_whole(h[cut:], fmt)
    # num_history_messages 2/3/4 over [user, asst(3 calls), tool x3, asst].
    b = [
        ("user", "q"),
        ("assistant", [("call", f"toolu000{k}", "f") for k in range(3)]),
        ("results", [(f"toolu000{k}", "f", str(k)) for k in range(3)]),
        ("assistant", [("text", "done")]),
    ]
    hb = render(b, fmt)
    for limit in (2, 3, 4):
        cut = toolpair.safe_cut(hb, len(hb) - limit, keep="tail", format=fmt)
        assert_whole(hb[cut:], fmt)


def test_agno_split_list_content_prunes_both_halves() -> None:
    # filter_tool_calls left list-shaped tool_use blocks whose results it dropped.
    h = render(
        [
            ("user", "q"),
            ("assistant", [("text", "let me"), ("call", "toolu0001", "f")]),
            ("results", [("toolu0001", "f", "x")]),
            ("user", "more"),
            ("assistant", [("call", "toolu0002", "g")]),
            ("results", [("toolu0002", "g", "y")]),
        ],
        "anthropic",
    )
    r = toolpair.prune(h, tool_calls=[{"type": "before-last-2-messages", "tools": ["f"]}])
    assert_whole(r.messages, "anthropic")
    assert ids_of(r.messages, "anthropic")[0] == ["toolu0002"]
    assert toolpair.validate(r.messages, "anthropic") == []


# --------------------------------------------------------------------------- clear


@pytest.mark.parametrize("fmt", FORMATS)
def test_clear_tool_results_keeps_the_skeleton(fmt: str) -> None:
    h = render(loop(5), fmt)
    before = copy.deepcopy(h)
    r = toolpair.clear_tool_results(h, keep=2, format=fmt)
    assert h == before
    assert ids_of(r.messages, fmt) == ids_of(h, fmt)
    assert len(r.messages) == len(h)
    cleared = [f for f in r.fixes if f.kind == "result_cleared"]
    assert [f.ids[0] for f in cleared] == [f"lp{k:07d}" for k in range(3)]
    dump = json.dumps(r.messages)
    assert dump.count(toolpair.CLEARED) == 3
    assert "result 4" in dump and "result 3" in dump and "result 0" not in dump
    for k, (a, b) in enumerate(zip(r.messages, h, strict=True)):
        if k not in {f.index for f in cleared}:
            assert a is b
    valid_where_it_was(h, r.messages, fmt)
    # idempotent
    again = toolpair.clear_tool_results(r.messages, keep=2, format=fmt)
    assert again.fixes == [] and all(
        a is b for a, b in zip(again.messages, r.messages, strict=True)
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_clear_inputs_and_exclude_tools(fmt: str) -> None:
    a = [("user", "q")]
    for k, name in enumerate(["read", "keepme", "read", "read"]):
        a += [
            ("assistant", [("call", f"cl{k:07d}", name)]),
            ("results", [(f"cl{k:07d}", name, f"out {k}")]),
        ]
    a.append(("user", "next"))
    h = render(a, fmt)
    r = toolpair.clear_tool_results(
        h, keep=1, exclude_tools=["keepme"], clear_inputs=True, placeholder="[gone]", format=fmt
    )
    cleared = {f.ids[0] for f in r.fixes if f.kind == "result_cleared"}
    assert cleared == {"cl0000000", "cl0000002"}
    inputs = {f.ids[0] for f in r.fixes if f.kind == "input_cleared"}
    assert inputs == {"cl0000000", "cl0000002"}
    dump = json.dumps(r.messages)
    assert "out 1" in dump and "out 3" in dump and "out 0" not in dump
    assert '"q": "cl0000000"' not in dump.replace('\\"', '"')
    assert_whole(r.messages, fmt)


def test_clear_trigger_and_clear_at_least() -> None:
    h = render(loop(5, size=200), "anthropic")
    total = toolpair.count_tokens(h)
    assert toolpair.clear_tool_results(h, keep=1, trigger=total).fixes == []
    assert toolpair.clear_tool_results(h, keep=1, trigger=total - 1).fixes
    assert toolpair.clear_tool_results(
        h, keep=1, trigger={"type": "input_tokens", "value": total - 1}
    ).fixes
    assert (
        toolpair.clear_tool_results(h, keep=1, trigger={"type": "tool_uses", "value": 5}).fixes
        == []
    )
    assert toolpair.clear_tool_results(h, keep=1, trigger={"type": "tool_uses", "value": 4}).fixes
    r = toolpair.clear_tool_results(h, keep=1, clear_at_least=10**6)
    assert r.fixes == [] and all(a is b for a, b in zip(r.messages, h, strict=True))
    r = toolpair.clear_tool_results(h, keep={"type": "tool_uses", "value": 1}, clear_at_least=100)
    assert len(r.fixes) == 4 and r.tokens_after < r.tokens_before - 100


@pytest.mark.parametrize("fmt", FORMATS)
def test_clear_counts_each_message_once(fmt: str) -> None:
    # A custom counter may be a tokenizer: untouched messages are not counted again.
    h = render(loop(6, size=200), fmt)
    calls: list[int] = []

    def counter(native: Any) -> int:
        calls.append(id(native))
        return len(json.dumps(native)) // 4

    r = toolpair.clear_tool_results(h, keep=2, token_counter=counter, format=fmt)
    rebuilt = [m for m in r.messages if not any(m is x for x in h)]
    assert rebuilt and r.fixes
    assert len(calls) == len(h) + len(rebuilt)
    assert r.tokens_before == toolpair.count_tokens(h, token_counter=counter, format=fmt)
    assert r.tokens_after == toolpair.count_tokens(r.messages, token_counter=counter, format=fmt)
    approx = toolpair.clear_tool_results(h, keep=2, format=fmt)
    assert approx.tokens_after == toolpair.count_tokens(approx.messages, format=fmt)
    assert approx.tokens_after < approx.tokens_before


# --------------------------------------------------------------------------- prune


@pytest.mark.parametrize("fmt", FORMATS)
def test_prune_tool_calls_before_last_messages(fmt: str) -> None:
    h = render(loop(4)[:-2], fmt)
    r = toolpair.prune(h, tool_calls="before-last-2-messages", format=fmt)
    assert_whole(r.messages, fmt)
    calls, _ = ids_of(r.messages, fmt)
    assert calls == ["lp0000003"]
    assert sum(f.kind == "pair_pruned" for f in r.fixes) == 3
    for p in toolpair.PROVIDERS:
        if not toolpair.validate(h, p, format=fmt):
            if p not in ("bedrock", "gemini", "vertex", "portable"):  # provider= merges turns
                assert toolpair.validate(r.messages, p, format=fmt) == [], p
            rp = toolpair.prune(h, tool_calls="before-last-2-messages", provider=p, format=fmt)
            assert toolpair.validate(rp.messages, p, format=fmt) == [], p
    assert toolpair.prune(h, tool_calls="before-last-0-messages", format=fmt).fixes == []
    assert toolpair.prune(h, format=fmt).fixes == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_prune_all_and_per_tool(fmt: str) -> None:
    a = [
        ("user", "q"),
        ("assistant", [("text", "both"), ("call", "pa0000001", "a"), ("call", "pb0000001", "b")]),
        ("results", [("pa0000001", "a", "ra"), ("pb0000001", "b", "rb")]),
        ("assistant", [("text", "done")]),
        ("user", "next"),
    ]
    h = render(a, fmt)
    r = toolpair.prune(h, tool_calls=[{"type": "all", "tools": ["a"]}], format=fmt)
    assert ids_of(r.messages, fmt) == (["pb0000001"], ["pb0000001"])
    r = toolpair.prune(h, tool_calls="all", format=fmt)
    assert ids_of(r.messages, fmt) == ([], [])
    dump = json.dumps(r.messages)
    assert "both" in dump and "done" in dump and "next" in dump
    for p in ("anthropic", "openai", "openai-responses", "gemini", "mistral"):
        if not toolpair.validate(h, p, format=fmt):
            assert toolpair.validate(r.messages, p, format=fmt) == [], p
    for p in toolpair.PROVIDERS:
        if not toolpair.validate(h, p, format=fmt):
            rp = toolpair.prune(h, tool_calls="all", provider=p, format=fmt)
            assert toolpair.validate(rp.messages, p, format=fmt) == [], p


@pytest.mark.parametrize("fmt", ["anthropic", "bedrock", "gemini", "openai-responses"])
def test_prune_reasoning(fmt: str) -> None:
    a = [
        ("user", "q"),
        ("assistant", [("think", "s1"), ("call", "rz0000001", "f")]),
        ("results", [("rz0000001", "f", "x")]),
        ("assistant", [("think", "s2"), ("text", "answer")]),
        ("user", "more"),
        ("assistant", [("think", "s3"), ("text", "again")]),
    ]
    h = render(a, fmt)
    r = toolpair.prune(h, reasoning="all", format=fmt)
    dec = _decode(r.messages, fmt)
    assert not any(b.kind in ("thinking", "reasoning") for m in dec for b in m.blocks)
    assert_whole(r.messages, fmt)
    r = toolpair.prune(h, reasoning="before-last-message", format=fmt)
    dec = _decode(r.messages, fmt)
    kept = [m.index for m in dec for b in m.blocks if b.kind in ("thinking", "reasoning")]
    assert kept == [len(dec) - 2] if fmt == "openai-responses" else kept == [len(dec) - 1]
    if fmt == "openai-responses":
        assert any(f.kind == "item_id_dropped" for f in toolpair.prune(h, reasoning="all").fixes)
        assert toolpair.validate(r.messages, "openai-responses") == []


def test_prune_keeps_the_thinking_a_tool_loop_needs() -> None:
    a = [
        ("user", "q"),
        ("assistant", [("think", "s1"), ("call", "th0000001", "f")]),
        ("results", [("th0000001", "f", "x")]),
    ]
    body = {
        "model": "m",
        "max_tokens": 9,
        "thinking": {"type": "enabled", "budget_tokens": 9},
        "messages": render(a, "anthropic"),
    }
    assert toolpair.validate(body, "anthropic") == []
    r = toolpair.prune(body, reasoning="all")
    assert toolpair.validate(r.messages, "anthropic") == []
    assert r.fixes == []


def test_prune_drops_a_reasoning_item_with_nothing_to_precede() -> None:
    h = render(
        [
            ("user", "q"),
            ("assistant", [("think", "s1"), ("call", "rr0000001", "f")]),
            ("results", [("rr0000001", "f", "x")]),
            ("assistant", [("text", "ok")]),
        ],
        "openai-responses",
    )
    r = toolpair.prune(h, tool_calls="all")
    assert [m.get("type", "message") for m in r.messages] == ["message", "message"]
    assert toolpair.validate(r.messages, "openai-responses") == []


def test_prune_rejects_bad_arguments() -> None:
    h = render(WEATHER, "openai")
    with pytest.raises(ValueError, match="tool_calls"):
        toolpair.prune(h, tool_calls="some")
    with pytest.raises(ValueError, match="reasoning"):
        toolpair.prune(h, reasoning="most")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- offload


@pytest.mark.parametrize("fmt", FORMATS)
def test_offload_round_trips_through_the_file_store(fmt: str, tmp_path: Path) -> None:
    h = render(loop(3, size=500), fmt)
    before = copy.deepcopy(h)
    store = toolpair.FileStore(tmp_path / "store")
    r = toolpair.offload(h, store, threshold_bytes=300, format=fmt)
    assert h == before
    fixes = [f for f in r.fixes if f.kind == "result_offloaded"]
    assert len(fixes) == 3
    assert ids_of(r.messages, fmt) == ids_of(h, fmt)
    for f in fixes:
        locator = f.detail.split(" stored at ")[1]
        original = store.get(locator)
        assert "result " in original and "x" * 500 in original
    dump = json.dumps(r.messages)
    assert "tool result offloaded" in dump and "x" * 400 not in dump
    valid_where_it_was(h, r.messages, fmt)
    again = toolpair.offload(r.messages, store, threshold_bytes=10, format=fmt)
    assert again.fixes == []


def test_file_store_refuses_paths_outside_it(tmp_path: Path) -> None:
    store = toolpair.FileStore(tmp_path / "s")
    loc = store.put("a/b", "hello")
    assert store.get(loc) == "hello" and store.get(Path(loc).name) == "hello"
    (tmp_path / "secret.txt").write_text("no")
    with pytest.raises(ValueError, match="not in this store"):
        store.get(str(tmp_path / "secret.txt"))
    assert isinstance(store, toolpair.Store)


# --------------------------------------------------------------------------- codecs


class _Bare(toolpair.Codec):
    """A framework-like codec without the editing methods."""

    name = "bare"
    shape = "chat"

    def __init__(self) -> None:
        from toolpair.formats import get_codec

        self.inner = get_codec("openai")

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        return self.inner.decode(messages)

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        return self.inner.build(role, blocks, template)

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        return self.inner.make_result(call, text, is_error=is_error)

    def make_text(self, text: str, role: Role) -> Block:
        return self.inner.make_text(text, role)

    def with_id(self, block: Block, new_id: str) -> Block:
        return self.inner.with_id(block, new_id)

    def result_as_text(self, block: Block) -> Block:
        return self.inner.result_as_text(block)


def test_a_codec_without_editing_methods_fails_clearly(tmp_path: Path) -> None:
    h = render(loop(4), "openai")
    codec = _Bare()
    assert toolpair.units(h, format=codec) == toolpair.units(h, format="openai")
    assert toolpair.trim(h, 30, format=codec).evicted
    assert toolpair.prune(h, tool_calls="all", format=codec).fixes
    with pytest.raises(toolpair.UnsupportedCodec, match=r"content_of.*'bare'"):
        toolpair.clear_tool_results(h, keep=1, format=codec)
    with pytest.raises(toolpair.UnsupportedCodec, match="_Bare"):
        toolpair.offload(h, toolpair.FileStore(tmp_path), threshold_bytes=1, format=codec)


def test_count_tokens_counts_arguments_results_and_images() -> None:
    text = [{"role": "user", "content": "x" * 40}]
    assert toolpair.count_tokens(text) == 3 + 10
    img = [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "A" * 10_000},
                }
            ],
        }
    ]
    assert toolpair.count_tokens(img, format="anthropic") == 3 + 85
    call = render([("assistant", [("call", "c" * 8, "f")])], "anthropic")
    assert toolpair.count_tokens(call) > 3
