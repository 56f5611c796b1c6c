"""The Chat Completions no-op check (the Responses format's checker for Chat's rules):
the SDK's own shapes take it, and repairing a piece at a time gives the full path's
answer. (That whatever it calls certainly valid the
full ``openai`` rules accept is the conformance suite's fast path property, run on
`ChatItemsCodec` with SDK item shapes by `adapter`.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import toolpair
from toolpair._api import parse
from toolpair.integrations.openai_agents._codec import CHAT_CODEC

from .harness import fc, history_with_tools, out, rs, user

IDS = st.sampled_from(["a", "b", "c", "x" * 40, "y" * 41, ""])
ITEM = st.one_of(
    st.builds(user, st.just("u")),
    st.just({"type": "message", "role": "assistant", "content": "t", "id": "msg_1"}),
    st.just({"role": "system", "content": "s"}),
    st.builds(lambda: rs("rs_1")),
    st.builds(fc, IDS),
    st.builds(out, IDS),
    st.builds(lambda i: {"type": "custom_tool_call", "call_id": i, "name": "c", "input": ""}, IDS),
    st.builds(lambda i: {"type": "custom_tool_call_output", "call_id": i, "output": "o"}, IDS),
    st.just({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
)


def chat_items_valid(items: list[dict]) -> bool:
    """The no-op verdict repair takes for items bound for Chat Completions."""
    return parse(items, "openai", CHAT_CODEC, {}).certainly_valid()


def test_sdk_shaped_histories_take_the_fast_path():
    assert chat_items_valid(history_with_tools(5))
    parallel = [user("q"), fc("a"), fc("b"), out("b"), out("a"), user("r")]
    assert chat_items_valid(parallel)
    assert not chat_items_valid([user("q"), fc("a"), user("r"), out("a")])
    assert not chat_items_valid([out("a")])


def _exchanges(draw_defects: list[int], turns: int) -> list[dict]:
    """A long SDK-shaped history; the turns listed in ``draw_defects`` are broken in
    one of three ways (a dangling call, an output moved behind the next user message,
    an orphan output)."""
    items: list[dict] = []
    for t in range(turns):
        items.append(user(f"q{t}"))
        items.append(rs(f"rs_{t}"))
        a, b = f"a{t}", f"b{t}"
        items += [fc(a), fc(b)]
        kind = draw_defects[t] if t < len(draw_defects) else 0
        if kind == 1:
            items.append(out(a))
        elif kind == 2:
            items += [out(a), user("hm"), out(b)]
        elif kind == 3:
            items += [out(a), out(b), out(f"gone{t}")]
        else:
            items += [out(b), out(a)]
        items.append({"type": "message", "role": "assistant", "content": f"r{t}", "id": f"m{t}"})
    return items


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2, 3]), min_size=60, max_size=60))
def test_piecewise_chat_repair_gives_the_full_paths_answer(defects):
    items = _exchanges(defects, 60)
    fast = toolpair.repair(items, "openai", format=CHAT_CODEC)
    full = toolpair.repair(items, "openai", format="openai-responses")
    assert fast.messages == full.messages
    assert toolpair.validate(fast.messages, "openai", format="openai-responses") == []
    untouched = [m for m in fast.messages if any(m is i for i in items)]
    assert len(untouched) >= len(items) - 8 * sum(1 for d in defects if d)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(ITEM, max_size=12),
    # Not "portable": there the core's repair of items can leave text beside a call
    # that a second pass moves (Bedrock's strict rule), so it is not idempotent yet.
    st.sampled_from(["openai", "openai-responses", "anthropic", "gemini", "mistral"]),
)
def test_repair_items_is_pure_idempotent_and_valid(items, provider):
    """What the filter and the model wrapper send: the caller's items untouched,
    a second repair changes nothing, and the provider's rules accept the result (or a
    fix says what could not be repaired)."""
    import copy

    from toolpair.integrations.openai_agents import repair_items

    given_items = copy.deepcopy(items)
    once = repair_items(items, provider)
    assert items == given_items
    twice = repair_items(once, provider)
    assert twice is once  # nothing left to fix: the same list back
    rep = toolpair.repair(items, provider, format="openai-responses")
    if not rep.unrepaired:
        assert toolpair.validate(once, provider, format="openai-responses") == []
