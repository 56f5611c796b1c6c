"""The Chat Completions no-op check: whatever it calls certainly valid, the core's full
``openai`` rules accept (a property over random item lists), and the SDK's own shapes
take it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from oa_harness import fc, history_with_tools, out, rs, user

import toolpair
from toolpair.integrations.openai_agents._fast import chat_items_valid

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


@settings(max_examples=3000, deadline=None)
@given(st.lists(ITEM, max_size=12))
def test_certainly_valid_means_the_full_rules_agree(items):
    if chat_items_valid(items):
        assert toolpair.validate(items, "openai", format="openai-responses") == []


def test_sdk_shaped_histories_take_the_fast_path():
    assert chat_items_valid(history_with_tools(5))
    parallel = [user("q"), fc("a"), fc("b"), out("b"), out("a"), user("r")]
    assert chat_items_valid(parallel)
    assert not chat_items_valid([user("q"), fc("a"), user("r"), out("a")])
    assert not chat_items_valid([out("a")])
