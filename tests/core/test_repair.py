# ruff: noqa: F405
"""Every repair shape, input and exact expected output, in every format it applies to."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

import toolpair
from toolpair.formats import _checks as fast
from toolpair.formats.anthropic import AnthropicCodec
from toolpair.providers import get_profile

# The tables use most of the wire vocabulary, by its short names (F405: those names).
from .wire import *  # noqa: F403

PH = "No result was recorded for this tool call."
IMG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}


def err(id: str) -> dict[str, Any]:
    return tr(id, [txt(PH)], is_error=True)


def b_err(id: str) -> dict[str, Any]:
    return b_res(id, PH, "error")


def o_err(id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": id, "content": PH}


def g_err(name: str) -> dict[str, Any]:
    return g_res(name, response={"error": PH})


def fixed(history: Any, provider: str, **kw: Any) -> toolpair.Repaired:
    """Repair, and hold it to every guarantee: the input is untouched, the output is
    valid, a second repair changes nothing."""
    before = copy.deepcopy(history)
    result = toolpair.repair(history, provider, **kw)
    assert history == before, "repair mutated its input"
    model = kw.get("model")
    assert toolpair.validate(result.messages, provider, model=model) == []
    again = toolpair.repair(result.messages, provider, model=model)
    assert again.fixes == [] and again.messages == result.messages
    msgs = again.messages if isinstance(again.messages, list) else again.messages["messages"]
    first = result.messages if isinstance(result.messages, list) else result.messages["messages"]
    assert all(a is b for a, b in zip(msgs, first, strict=True))
    return result


def kinds(r: toolpair.Repaired) -> list[str]:
    return [f.kind for f in r.fixes]


# 1. Dangling calls -------------------------------------------------------------------
class TestDangling:
    def test_anthropic_mid_history(self) -> None:
        h = [U("q"), A(tu("toolu_1")), U("never mind"), A("ok"), U("bye")]
        r = fixed(h, "anthropic")
        assert r.messages == [
            U("q"),
            A(tu("toolu_1")),
            U(err("toolu_1"), txt("never mind")),
            A("ok"),
            U("bye"),
        ]
        assert kinds(r) == ["synthetic_result"] and r.fixes[0].ids == ("toolu_1",)
        assert r.fixes[0].index == 1
        assert r.messages[0] is h[0] and r.messages[1] is h[1] and r.messages[3] is h[3]

    def test_anthropic_trailing_gets_one_answering_turn(self) -> None:
        h = [U("q"), A(tu("toolu_1"), tu("toolu_2"))]
        r = fixed(h, "anthropic")
        assert r.messages == [
            U("q"),
            A(tu("toolu_1"), tu("toolu_2")),
            {"role": "user", "content": [err("toolu_1"), err("toolu_2")]},
        ]

    def test_trailing_keep_policy(self) -> None:
        h = [U("q"), A(tu("toolu_1"))]
        r = toolpair.repair(h, "anthropic", policy=toolpair.Policy(trailing="keep"))
        assert r.messages == h
        assert kinds(r) == ["unrepaired"]

    def test_toolset_name_copied_and_never_echoes_input(self) -> None:
        h = [U("q"), A(tu("toolu_1", "screenshot", toolset_name="computer")), U("stop")]
        r = fixed(h, "anthropic")
        result = r.messages[2]["content"][0]
        assert result["toolset_name"] == "computer"
        assert result["is_error"] is True
        assert "Paris" not in str(result)

    def test_bedrock(self) -> None:
        h = [BU(b_txt("q")), BA(b_use("t1")), BU(b_txt("never mind"))]
        r = fixed(h, "bedrock")
        assert r.messages == [
            BU(b_txt("q")),
            BA(b_use("t1")),
            BU(b_err("t1")),
            BA(b_txt("Understood.")),
            BU(b_txt("never mind")),
        ]

    def test_openai_mid_history(self) -> None:
        h = [OS(), OU("q"), OA(call("call_1")), OU("never mind")]
        r = fixed(h, "openai")
        assert r.messages == [OS(), OU("q"), OA(call("call_1")), o_err("call_1"), OU("never mind")]
        assert all(r.messages[i] is h[i] for i in range(3)) and r.messages[4] is h[3]

    def test_responses(self) -> None:
        h = [RU("q"), fc("call_1", "fc_1"), RU("never mind")]
        r = fixed(h, "openai-responses", model="gpt-4.1")
        assert r.messages == [
            RU("q"),
            fc("call_1", "fc_1"),
            {"type": "function_call_output", "call_id": "call_1", "output": PH},
            RU("never mind"),
        ]

    def test_gemini(self) -> None:
        h = [GU(g_txt("q")), GM(g_call()), GU(g_txt("never mind"))]
        r = fixed(h, "gemini")
        assert r.messages == [
            GU(g_txt("q")),
            GM(g_call()),
            GU(g_err("weather"), g_txt("never mind")),
        ]

    def test_mistral(self) -> None:
        h = [OU("q"), OA(call("abc123XYZ")), OU("never mind")]
        r = fixed(h, "mistral")
        assert r.messages == [
            OU("q"),
            OA(call("abc123XYZ")),
            {**o_err("abc123XYZ"), "name": "weather"},
            {"role": "assistant", "content": "Understood."},
            OU("never mind"),
        ]


# The canonical fixture in every format: an orphaned call plus a user message whose
# result sits behind a text block. It comes back answered and leading.
CANONICAL = {
    "anthropic": (
        [U("q"), A(tu("toolu_1"), tu("toolu_2")), U(txt("hurry"), tr("toolu_2"))],
        [U("q"), A(tu("toolu_1"), tu("toolu_2")), U(err("toolu_1"), tr("toolu_2"), txt("hurry"))],
    ),
    "bedrock": (
        [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_txt("hurry"), b_res("t2"))],
        [
            BU(b_txt("q")),
            BA(b_use("t1"), b_use("t2")),
            BU(b_err("t1"), b_res("t2")),
            BA(b_txt("Understood.")),
            BU(b_txt("hurry")),
        ],
    ),
    "openai": (
        [OU("q"), OA(call("call_1"), call("call_2")), OU("hurry"), OT("call_2")],
        [OU("q"), OA(call("call_1"), call("call_2")), o_err("call_1"), OT("call_2"), OU("hurry")],
    ),
    "openai-responses": (
        [RU("q"), fc("call_1"), fc("call_2"), RU("hurry"), fco("call_2")],
        [
            RU("q"),
            fc("call_1"),
            fc("call_2"),
            {"type": "function_call_output", "call_id": "call_1", "output": PH},
            fco("call_2"),
            RU("hurry"),
        ],
    ),
    "gemini": (
        [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_txt("hurry"), g_res("b"))],
        [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_err("a"), g_res("b"), g_txt("hurry"))],
    ),
    "mistral": (
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OU("hurry"), OT("def456XYZ")],
        [
            OU("q"),
            OA(call("abc123XYZ"), call("def456XYZ")),
            {**o_err("abc123XYZ"), "name": "weather"},
            OT("def456XYZ"),
            {"role": "assistant", "content": "Understood."},
            OU("hurry"),
        ],
    ),
}


@pytest.mark.parametrize("provider", list(CANONICAL))
def test_canonical_fixture(provider: str) -> None:
    history, expected = CANONICAL[provider]
    assert toolpair.validate(history, provider) != []
    r = fixed(history, provider)
    assert r.messages == expected
    assert "synthetic_result" in kinds(r)


@pytest.mark.parametrize("provider", list(CANONICAL))
def test_canonical_fixture_is_portable_after_repair(provider: str) -> None:
    history, _ = CANONICAL[provider]
    r = fixed(history, "portable")
    assert toolpair.validate(r.messages, "portable") == []


# 2. Results behind text or images ---------------------------------------------------
def test_results_first_anthropic_with_image() -> None:
    h = [U("q"), A(tu("toolu_1")), U(IMG, txt("see"), tr("toolu_1"))]
    r = fixed(h, "anthropic")
    assert r.messages[2] == U(tr("toolu_1"), IMG, txt("see"))
    assert kinds(r) == ["results_first"]


# 3. A parallel batch split over several messages ------------------------------------
def test_split_batch_bedrock_becomes_one_turn() -> None:
    h = [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_res("t1")), BU(b_res("t2"))]
    r = fixed(h, "bedrock")
    assert r.messages == [
        BU(b_txt("q")),
        BA(b_use("t1"), b_use("t2")),
        BU(b_res("t1"), b_res("t2")),
    ]


def test_split_batch_anthropic_assistant_side_is_one_turn() -> None:
    # Two assistant messages holding one batch are merged by the API; only the results
    # have to be brought into one turn.
    h = [U("q"), A(tu("toolu_1")), A(tu("toolu_2")), U(tr("toolu_1")), A("..."), U(tr("toolu_2"))]
    r = fixed(h, "anthropic")
    assert r.messages == [
        U("q"),
        A(tu("toolu_1")),
        A(tu("toolu_2")),
        U(tr("toolu_1"), tr("toolu_2")),
        A("..."),
    ]
    assert kinds(r) == ["result_moved"]


def test_split_batch_openai_text_between_results() -> None:
    h = [OU("q"), OA(call("c1"), call("c2")), OT("c1"), OU("hm"), OT("c2")]
    r = fixed(h, "openai")
    assert r.messages == [OU("q"), OA(call("c1"), call("c2")), OT("c1"), OT("c2"), OU("hm")]


def test_split_batch_gemini() -> None:
    h = [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_res("a")), GU(g_res("b"))]
    r = fixed(h, "gemini")
    assert r.messages == [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_res("a"), g_res("b"))]


# 4. User content between the call turn and its results ------------------------------
def test_user_between_call_and_results_anthropic() -> None:
    h = [U("q"), A(tu("toolu_1")), U("hello?"), U(tr("toolu_1"))]
    r = fixed(h, "anthropic")
    assert r.messages == [
        U("q"),
        A(tu("toolu_1")),
        {"role": "user", "content": [tr("toolu_1"), txt("hello?")]},
    ]


def test_user_between_call_and_results_bedrock_no_text_in_result_turn() -> None:
    h = [BU(b_txt("q")), BA(b_use("t1")), BU(b_txt("hello?")), BU(b_res("t1"))]
    r = fixed(h, "bedrock")
    assert r.messages == [
        BU(b_txt("q")),
        BA(b_use("t1")),
        {"role": "user", "content": [b_res("t1")]},
        BA(b_txt("Understood.")),
        BU(b_txt("hello?")),
    ]


def test_user_between_call_and_results_mistral_bridge() -> None:
    h = [OU("q"), OA(call("abc123XYZ")), OU("hello?"), OT("abc123XYZ")]
    r = fixed(h, "mistral")
    assert r.messages == [
        OU("q"),
        OA(call("abc123XYZ")),
        OT("abc123XYZ"),
        {"role": "assistant", "content": "Understood."},
        OU("hello?"),
    ]


def test_user_between_call_and_results_gemini_one_response_turn() -> None:
    h = [GU(g_txt("q")), GM(g_call("a")), GU(g_txt("hello?")), GU(g_res("a"))]
    r = fixed(h, "gemini")
    assert r.messages == [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"), g_txt("hello?"))]


# 5. A result answering a call further back ------------------------------------------
def test_result_moved_home_not_duplicated() -> None:
    h = [U("q"), A(tu("toolu_1")), U("wait"), A(tu("toolu_2")), U(tr("toolu_1"), tr("toolu_2"))]
    r = fixed(h, "anthropic")
    assert r.messages == [
        U("q"),
        A(tu("toolu_1")),
        U(tr("toolu_1"), txt("wait")),
        A(tu("toolu_2")),
        U(tr("toolu_2")),
    ]
    assert "synthetic_result" not in kinds(r)


def test_result_moved_home_openai() -> None:
    h = [OU("q"), OA(call("c1")), OU("wait"), OA(call("c2")), OT("c1"), OT("c2")]
    r = fixed(h, "openai")
    assert r.messages == [OU("q"), OA(call("c1")), OT("c1"), OU("wait"), OA(call("c2")), OT("c2")]


# 6. Orphans --------------------------------------------------------------------------
def test_orphan_dropped_and_reported() -> None:
    h = [U("q"), A("hi"), U(tr("toolu_9"), txt("more"))]
    r = fixed(h, "anthropic")
    assert r.messages == [U("q"), A("hi"), {"role": "user", "content": [txt("more")]}]
    assert [(f.kind, f.index, f.ids) for f in r.fixes] == [
        ("orphan_result_dropped", 2, ("toolu_9",))
    ]


def test_orphan_kept_as_text_by_policy() -> None:
    h = [OU("q"), OA(content="hi"), OT("call_9", "42 degrees")]
    r = fixed(h, "openai", policy=toolpair.Policy(orphans="text"))
    assert r.messages[2] == {
        "role": "user",
        "content": "[tool result for call call_9 (its call is not in this history)]: 42 degrees",
    }


def test_orphan_output_is_legal_with_previous_response_id() -> None:
    body = {"previous_response_id": "resp_1", "input": [fco("call_1")]}
    r = toolpair.repair(body, "openai-responses")
    assert r.fixes == [] and r.messages == body


@pytest.mark.parametrize("conversation", ["conv_1", {"id": "conv_1"}])
def test_orphan_output_is_legal_in_a_conversation(conversation: object) -> None:
    body = {"conversation": conversation, "input": [fco("call_1")]}
    assert toolpair.validate(body, "openai-responses") == []
    r = toolpair.repair(body, "openai-responses")
    assert r.fixes == [] and r.messages == body
    # Without the server state the same output is an orphan.
    codes = [v.code for v in toolpair.validate({"input": [fco("call_1")]}, "openai-responses")]
    assert "openai-responses.orphan_output" in codes


# 7. Duplicate results ---------------------------------------------------------------
def test_duplicate_real_result_beats_error() -> None:
    h = [
        U("q"),
        A(tu("toolu_1")),
        U(tr("toolu_1", "interrupted", is_error=True), tr("toolu_1", "sunny")),
    ]
    r = fixed(h, "anthropic")
    assert r.messages[2] == {"role": "user", "content": [tr("toolu_1", "sunny")]}
    assert [f.kind for f in r.fixes] == ["duplicate_result_dropped"]
    assert r.fixes[0].ids == ("toolu_1",)


def test_duplicate_tool_messages_openai() -> None:
    h = [OU("q"), OA(call("c1")), OT("c1", "first"), OT("c1", "second")]
    r = fixed(h, "openai")
    assert r.messages == [OU("q"), OA(call("c1")), OT("c1", "first")]


# 8. Ids ------------------------------------------------------------------------------
def test_duplicate_call_ids_rewritten_on_both_halves() -> None:
    # Bedrock wants toolUseIds unique over the conversation.
    h = [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1")), BA(b_use("t1")), BU(b_res("t1", "b"))]
    r = fixed(h, "bedrock")
    new = r.messages[3]["content"][0]["toolUse"]["toolUseId"]
    assert new != "t1" and new.startswith("t1_")
    assert r.messages[4]["content"][0]["toolResult"]["toolUseId"] == new
    assert r.messages[4]["content"][0]["toolResult"]["content"] == [{"text": "b"}]
    assert r.id_map == {new: "t1"}
    assert r.messages[1] is h[1] and r.messages[2] is h[2]


def test_anthropic_rewrites_a_call_id_repeated_inside_its_turn_only() -> None:
    # A4 is about one turn: a later turn reusing the id is left as it is.
    later = [U("q"), A(tu("call_0")), U(tr("call_0", "a")), A(tu("call_0")), U(tr("call_0", "b"))]
    assert toolpair.repair(later, "anthropic").fixes == []
    h = [U("q"), A(tu("call_0"), tu("call_0")), U(tr("call_0", "a"), tr("call_0", "b"))]
    r = fixed(h, "anthropic")
    ids = [b["id"] for b in r.messages[1]["content"]]
    assert len(set(ids)) == 2 and "call_0" in ids
    assert sorted(b["tool_use_id"] for b in r.messages[2]["content"]) == sorted(ids)
    assert list(r.id_map.values()) == ["call_0"]


def test_anthropic_id_pattern() -> None:
    h = [U("q"), A(tu("functions.get:0")), U(tr("functions.get:0"))]
    r = fixed(h, "anthropic")
    assert r.messages[1]["content"][0]["id"] == "functions_get_0"
    assert r.messages[2]["content"][0]["tool_use_id"] == "functions_get_0"
    assert r.id_map == {"functions_get_0": "functions.get:0"}


def test_openai_id_length() -> None:
    long = "call_" + "x" * 50
    r = fixed([OU("q"), OA(call(long)), OT(long)], "openai")
    new = r.messages[1]["tool_calls"][0]["id"]
    assert len(new) <= 40 and r.messages[2]["tool_call_id"] == new and r.id_map[new] == long


def test_mistral_ids_nine_alphanumerics_deterministic() -> None:
    h = [OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OT("call_2")]
    r1 = fixed(h, "mistral")
    r2 = toolpair.repair(h, "mistral")
    ids = [c["id"] for c in r1.messages[1]["tool_calls"]]
    assert all(len(i) == 9 and i.isalnum() for i in ids) and len(set(ids)) == 2
    assert ids == [c["id"] for c in r2.messages[1]["tool_calls"]]
    assert [m["tool_call_id"] for m in r1.messages[2:4]] == ids


def test_bedrock_id_pattern_and_collisions() -> None:
    # "a.b" sanitises to "a_b", which another call already uses: no collision.
    h = [BU(b_txt("q")), BA(b_use("a.b"), b_use("a_b")), BU(b_res("a.b", "1"), b_res("a_b", "2"))]
    r = fixed(h, "bedrock")
    uses = [b["toolUse"]["toolUseId"] for b in r.messages[1]["content"]]
    res = [b["toolResult"]["toolUseId"] for b in r.messages[2]["content"]]
    assert uses[1] == "a_b" and uses[0] != "a_b" and res == uses


# 9. Text or server blocks after a client tool_use -----------------------------------
def test_text_after_tool_use_reordered_thinking_first() -> None:
    srv = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    srv_res = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    h = [U("q"), A(think(), tu("toolu_1"), srv, srv_res, txt("done")), U(tr("toolu_1"))]
    r = fixed(h, "anthropic")
    assert r.messages[1] == A(think(), srv, srv_res, txt("done"), tu("toolu_1"))
    assert r.messages[1]["content"][0] is h[1]["content"][0]


# 10. Responses reasoning -------------------------------------------------------------
def test_responses_reasoning_interleaved() -> None:
    h = [RU("q"), rs("rs_1"), rs("rs_2"), fc("c1", "fc_1"), fc("c2", "fc_2"), fco("c1"), fco("c2")]
    r = fixed(h, "openai-responses")
    assert r.messages == [
        RU("q"),
        rs("rs_1"),
        fc("c1", "fc_1"),
        rs("rs_2"),
        fc("c2", "fc_2"),
        fco("c1"),
        fco("c2"),
    ]


def test_responses_call_losing_its_reasoning_drops_fc_id() -> None:
    # The reasoning item has nothing after it that it could belong to once the call
    # moved: it is dropped, and the call keeps its call_id without its fc_ id.
    h = [RU("q"), rs("rs_1"), RU("interjection"), rs("rs_2"), fc("c1", "fc_1"), fco("c1")]
    r = fixed(h, "openai-responses")
    assert r.messages == [RU("q"), RU("interjection"), rs("rs_2"), fc("c1", "fc_1"), fco("c1")]
    assert "reasoning_dropped" in kinds(r)


# 11. Gemini ---------------------------------------------------------------------------
def test_gemini_history_starting_with_a_call() -> None:
    h = [GM(g_call()), GU(g_res()), GM(g_txt("sunny"))]
    r = fixed(h, "gemini")
    assert r.messages == [GU(g_txt("(conversation continues)")), *h]
    assert all(a is b for a, b in zip(r.messages[1:], h, strict=True))


def test_gemini_empty_parts_removed() -> None:
    h = [GU(g_txt("q")), GM(), GU(g_txt("q2"))]
    r = fixed(h, "gemini")
    # Gemini rejects consecutive turns of one role in practice: the two user turns merge.
    assert r.messages == [GU(g_txt("q"), g_txt("q2"))]
    assert kinds(r) == ["empty_message_removed", "turns_merged"]


# Thinking prefix binding (H4) and what cannot be repaired ----------------------------
def test_prefix_binding_reported_and_strip_policy() -> None:
    h = [U("q"), A(tu("toolu_1")), U("hm"), A(think(), tu("toolu_2")), U(tr("toolu_2"))]
    r = toolpair.repair(h, "anthropic")
    assert "prefix_binding" in kinds(r)
    assert r.messages[3] is h[3]
    s = toolpair.repair(h, "anthropic", policy=toolpair.Policy(bound_thinking="strip"))
    assert s.messages[3] == A(tu("toolu_2"))
    assert "thinking_stripped" in kinds(s)


@pytest.mark.parametrize("name", ["web_search", "web_fetch", "code_execution"])
def test_server_tool_pending_gets_the_tools_own_error_result(name: str) -> None:
    srv = {"type": "server_tool_use", "id": "srvtoolu_1", "name": name, "input": {}}
    h = [U("q"), A(srv, tu("toolu_1")), U(tr("toolu_1"), txt("and?"))]
    r = toolpair.repair(h, "anthropic")
    assert [f.kind for f in r.fixes] == ["server_result_added"]
    assert r.messages[1]["content"] == [
        srv,
        {
            "type": f"{name}_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {"type": f"{name}_tool_result_error", "error_code": "unavailable"},
        },
        tu("toolu_1"),
    ]
    assert r.messages[0] is h[0] and r.messages[2] is h[2] and r.messages[1] is not h[1]
    assert h[1] == A(srv, tu("toolu_1"))  # the input is not mutated
    assert toolpair.validate(r.messages, "anthropic") == []
    assert toolpair.repair(r.messages, "anthropic").fixes == []  # idempotent


def test_mcp_tool_pending_gets_an_error_result() -> None:
    srv = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask", "server_name": "s"}
    h = [U("q"), A(srv), U(txt("and?"))]
    r = toolpair.repair(h, "anthropic")
    assert [f.kind for f in r.fixes] == ["server_result_added"]
    added = r.messages[1]["content"][1]
    assert added["type"] == "mcp_tool_result" and added["is_error"] is True
    assert added["tool_use_id"] == "mcptoolu_1"
    assert toolpair.validate(r.messages, "anthropic") == []


def test_server_tool_pending_with_no_known_error_shape_is_reported_unrepaired() -> None:
    srv = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}}
    h = [U("q"), A(srv, tu("toolu_1")), U(tr("toolu_1"), txt("and?"))]
    r = toolpair.repair(h, "anthropic")
    assert [f.kind for f in r.fixes] == ["unrepaired"]
    assert "anthropic.server_tool_pending" in r.fixes[0].detail
    assert r.changed is False


def test_server_tool_pending_is_refused_when_any_later_turn_holds_other_content() -> None:
    # Measured on claude-sonnet-4-5 (pydantic-ai test_unpaired_native_tool_calls): only
    # results may follow a pending server tool, in the next turn and every later one.
    srv = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    only_results = [U("q"), A(srv, tu("toolu_1")), U(tr("toolu_1"))]
    assert toolpair.validate(only_results, "anthropic") == []
    later = [*only_results, A(txt("done")), U(txt("and?"))]
    (v,) = toolpair.validate(later, "anthropic")
    assert (v.code, v.index, v.ids) == ("anthropic.server_tool_pending", 1, ("srvtoolu_1",))
    assert v.message == (
        "`web_search` tool use with id `srvtoolu_1` was found without a corresponding "
        "`web_search_tool_result` block"
    )


def test_strict_policy_raises() -> None:
    with pytest.raises(toolpair.HistoryError) as e:
        toolpair.repair(
            [U("q"), A(tu("toolu_1"))], "anthropic", policy=toolpair.Policy(strict=True)
        )
    assert e.value.violations[0].code == "anthropic.missing_result"


def test_body_in_body_out() -> None:
    body = {
        "model": "claude",
        "max_tokens": 100,
        "system": "s",
        "messages": [U("q"), A(tu("toolu_1"))],
    }
    r = fixed(body, "anthropic")
    assert set(r.messages) == set(body) and r.messages["system"] == "s"
    assert r.messages["messages"][2] == {"role": "user", "content": [err("toolu_1")]}


def test_valid_history_comes_back_unchanged() -> None:
    h = [U("q"), A(tu("toolu_1")), U(tr("toolu_1")), A("done")]
    r = toolpair.repair(h, "anthropic")
    assert r.fixes == [] and not r.changed
    assert r.messages == h and r.messages is not h
    assert all(a is b for a, b in zip(r.messages, h, strict=True))


def test_one_warning_per_repair_with_every_id(caplog: pytest.LogCaptureFixture) -> None:
    h = [U("q"), A(tu("toolu_1"), tu("toolu_2")), U(tr("toolu_9"))]
    with caplog.at_level(logging.WARNING, logger="toolpair"):
        toolpair.repair(h, "anthropic")
    records = [r for r in caplog.records if r.name == "toolpair"]
    assert len(records) == 1
    for i in ("toolu_1", "toolu_2", "toolu_9"):
        assert i in records[0].getMessage()


def test_the_warning_shortens_long_ids(caplog: pytest.LogCaptureFixture) -> None:
    huge = "toolu_" + "x" * 1_000_000
    h = [U("q"), A(tu(huge)), U("next")]
    with caplog.at_level(logging.WARNING, logger="toolpair"):
        r = toolpair.repair(h, "anthropic")
    line = next(r.getMessage() for r in caplog.records if r.name == "toolpair")
    assert len(line) < 300
    assert "(1000006 chars)" in line and huge[:40] in line
    assert huge in [i for f in r.fixes for i in f.ids]  # the report keeps it whole


# Shapes 5-7 in the remaining formats: exact expected output -------------------------
BRIDGE = BA(b_txt("Understood."))
M_BRIDGE = {"role": "assistant", "content": "Understood."}
SHAPES: dict[str, tuple[Any, Any, list[str]]] = {
    "moved home, bedrock": (
        [
            BU(b_txt("q")),
            BA(b_use("t1")),
            BU(b_txt("wait")),
            BA(b_use("t2")),
            BU(b_res("t1"), b_res("t2")),
        ],
        [
            BU(b_txt("q")),
            BA(b_use("t1")),
            BU(b_res("t1")),
            BRIDGE,
            BU(b_txt("wait")),
            BA(b_use("t2")),
            BU(b_res("t2")),
        ],
        ["result_moved", "content_moved", "bridge_inserted"],
    ),
    "moved home, openai-responses": (
        [RU("q"), fc("c1"), RU("wait"), fco("c0"), fc("c2"), fco("c2"), fco("c1")],
        [RU("q"), fc("c1"), fco("c1"), RU("wait"), fc("c2"), fco("c2")],
        ["orphan_result_dropped", "result_moved"],
    ),
    "moved home, gemini": (
        [
            GU(g_txt("q")),
            GM(g_call("a", "i1")),
            GU(g_txt("wait")),
            GM(g_call("b", "i2")),
            GU(g_res("a", "i1"), g_res("b", "i2")),
        ],
        [
            GU(g_txt("q")),
            GM(g_call("a", "i1")),
            GU(g_res("a", "i1"), g_txt("wait")),
            GM(g_call("b", "i2")),
            GU(g_res("b", "i2")),
        ],
        ["result_moved"],
    ),
    "moved home, mistral": (
        [
            OU("q"),
            OA(call("abc123XYZ")),
            OU("wait"),
            OA(call("def456XYZ")),
            OT("abc123XYZ"),
            OT("def456XYZ"),
        ],
        [
            OU("q"),
            OA(call("abc123XYZ")),
            OT("abc123XYZ"),
            M_BRIDGE,
            OU("wait"),
            OA(call("def456XYZ")),
            OT("def456XYZ"),
        ],
        ["result_moved", "bridge_inserted"],
    ),
    "orphan, bedrock": (
        [BU(b_txt("q")), BA(b_txt("hi")), BU(b_res("t9"), b_txt("more"))],
        [BU(b_txt("q")), BA(b_txt("hi")), BU(b_txt("more"))],
        ["orphan_result_dropped"],
    ),
    "orphan, openai-responses": (
        [RU("q"), RA("hi"), fco("c9"), RU("more")],
        [RU("q"), RA("hi"), RU("more")],
        ["orphan_result_dropped"],
    ),
    "orphan, gemini": (
        [GU(g_txt("q")), GM(g_txt("hi")), GU(g_res("w"), g_txt("more"))],
        [GU(g_txt("q")), GM(g_txt("hi")), GU(g_txt("more"))],
        ["orphan_result_dropped"],
    ),
    "orphan, mistral": (
        [OU("q"), OA(content="hi"), OU("more"), OT("abc123XYZ")],
        [OU("q"), OA(content="hi"), OU("more")],
        ["orphan_result_dropped"],
    ),
    "duplicate, bedrock": (
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1", "lost", "error"), b_res("t1"))],
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
        ["duplicate_result_dropped"],
    ),
    "duplicate, openai-responses": (
        [RU("q"), fc("c1"), fco("c1", "first"), fco("c1", "second")],
        [RU("q"), fc("c1"), fco("c1", "first")],
        ["duplicate_result_dropped"],
    ),
    "duplicate, gemini": (
        [GU(g_txt("q")), GM(g_call("a", "i1")), GU(g_res("a", "i1"), g_res("a", "i1", {"r": 2}))],
        [GU(g_txt("q")), GM(g_call("a", "i1")), GU(g_res("a", "i1"))],
        ["duplicate_result_dropped"],
    ),
    "duplicate, mistral": (
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ", "first"), OT("abc123XYZ", "second")],
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ", "first")],
        ["duplicate_result_dropped"],
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shapes_in_every_format(name: str) -> None:
    history, expected, fix_kinds = SHAPES[name]
    r = fixed(history, name.split(", ")[1])
    assert r.messages == expected
    assert kinds(r) == fix_kinds


# Long histories are repaired in pieces ------------------------------------------------
def _long(fmt: str) -> list[Any]:
    h: list[Any] = []
    for i in range(80):
        if fmt == "anthropic":
            h += [U(f"q{i}"), A(tu(f"t{i}")), U(tr(f"t{i}")), A(f"a{i}")]
        elif fmt == "bedrock":
            h += [BU(b_txt(f"q{i}")), BA(b_use(f"t{i}")), BU(b_res(f"t{i}")), BA(b_txt(f"a{i}"))]
        elif fmt == "openai-responses":
            h += [RU(f"q{i}"), fc(f"t{i}"), fco(f"t{i}"), RA(f"a{i}")]
        elif fmt == "gemini":
            h += [GU(g_txt(f"q{i}")), GM(g_call(id=f"t{i}")), GU(g_res(id=f"t{i}"))]
            h += [GM(g_txt(f"a{i}"))]
        else:
            cid = f"abc{i:06d}"
            h += [OU(f"q{i}"), OA(call(cid)), OT(cid), OA(content=f"a{i}")]
    return [*h, h[0]]  # ending on a user turn, as a request does


@pytest.mark.parametrize(
    "fmt", ["anthropic", "bedrock", "openai", "openai-responses", "mistral", "gemini"]
)
def test_pieces_give_the_full_answer(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolpair.engine import chunked

    h = _long(fmt)
    del h[102]  # a dangling call mid-history
    orphan = {
        "anthropic": U(tr("ghost")),
        "bedrock": BU(b_res("ghost")),
        "openai-responses": fco("ghost"),
        "gemini": GU(g_res(id="ghost")),
    }.get(fmt, OT("ghost0000"))
    h.insert(200, orphan)  # a result whose call is nowhere
    r = toolpair.repair(h, fmt)
    assert chunked.repair(h, *_codec_profile(fmt), toolpair.Policy(), _ctx()) is not None
    monkeypatch.setattr(chunked, "MIN_MESSAGES", 10**9)
    full = toolpair.repair(h, fmt)
    assert r.messages == full.messages
    assert sorted(map(str, r.fixes)) == sorted(map(str, full.fixes))
    assert sum(a is b for a, b in zip(r.messages, h, strict=False)) >= 100


def _codec_profile(fmt: str) -> tuple[Any, Any]:
    from toolpair.formats import get_codec
    from toolpair.providers import get_profile

    return get_codec(fmt), get_profile(fmt)


def _ctx() -> Any:
    from toolpair.providers import Context

    return Context()


@pytest.mark.parametrize("where", ["clean", "repaired"])
def test_pieces_report_thinking_bound_to_an_edited_prefix(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pieces skip the H4 scan where no part of the result holds thinking; where one
    # does (an untouched exchange, or a repaired piece), the report is the full one.
    from toolpair.engine import chunked

    h = _long("anthropic")
    thought = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    at = 301 if where == "clean" else 101
    h[at] = {"role": "assistant", "content": [thought, *h[at]["content"]]}
    del h[102]  # a dangling call
    r = toolpair.repair(h, "anthropic")
    assert chunked.repair(h, *_codec_profile("anthropic"), toolpair.Policy(), _ctx()) is not None
    monkeypatch.setattr(chunked, "MIN_MESSAGES", 10**9)
    full = toolpair.repair(h, "anthropic")
    assert r.messages == full.messages
    assert sorted(map(str, r.fixes)) == sorted(map(str, full.fixes))
    assert "prefix_binding" in {f.kind for f in r.fixes}


class _SidedAnthropic(AnthropicCodec):
    """The Anthropic wire codec with the two methods a framework codec brings to be
    repaired in pieces: the core's framework piece path, without a framework."""

    name = "sided-anthropic"
    # A framework codec's view: no thinking read off natives, pieces follow a user turn.
    reads_thinking = False

    def role_before(self, native: Any) -> str | None:
        return "user"

    def side(self, m: Any) -> str:
        return "a" if m["role"] == "assistant" else "u"

    def certainly_valid(self, msgs: Any, provider: str, ctx: Any, frag: Any = None) -> Any:
        return fast.anthropic(msgs, ctx, frag) if provider == "anthropic" else None


@pytest.mark.parametrize("thought", [False, True])
def test_framework_codecs_are_repaired_in_pieces_too(
    thought: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolpair.engine import chunked

    codec = _SidedAnthropic()
    h = _long("anthropic")
    if thought:  # thinking in an untouched exchange: the full path reports H4
        h[301] = {"role": "assistant", "content": [think(), *h[301]["content"]]}
    del h[102]  # a dangling call
    h.insert(200, U(tr("ghost")))  # a result whose call is nowhere
    pieces = chunked.repair(h, codec, get_profile("anthropic"), toolpair.Policy(), _ctx())
    assert (pieces is None) is thought
    r = toolpair.repair(h, "anthropic", format=codec)
    monkeypatch.setattr(chunked, "MIN_MESSAGES", 10**9)
    full = toolpair.repair(h, "anthropic", format=codec)
    assert r.messages == full.messages
    assert sorted(map(str, r.fixes)) == sorted(map(str, full.fixes))
    assert sum(a is b for a, b in zip(r.messages, h, strict=False)) >= 100


def test_a_malformed_message_in_a_piece_is_named_by_its_own_index() -> None:
    h = _long("anthropic")
    del h[102]  # a dangling call, so the exchange around 150 is repaired as a piece
    h[150] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}
    with pytest.raises(toolpair.InvalidHistory) as e:
        toolpair.repair(h, "anthropic")
    assert e.value.index == 150


def test_deepseek_reasoning_content_goes_back_empty_when_it_was_not_kept() -> None:
    body = {"model": "deepseek-reasoner", "messages": [OU("q"), OA(call("c1")), OT("c1")]}
    r = toolpair.repair(body, "deepseek")
    assert [(f.kind, f.index) for f in r.fixes] == [("reasoning_content_added", 1)]
    out = r.messages["messages"]  # a body in, a body out
    assert out[1] == {**OA(call("c1")), "reasoning_content": ""}
    assert out[0] is body["messages"][0] and out[2] is body["messages"][2]
    assert "reasoning_content" not in body["messages"][1]  # the input is not mutated
    assert toolpair.validate(r.messages, "deepseek") == []
    assert toolpair.repair(r.messages, "deepseek").fixes == []  # idempotent
    # Thinking off (deepseek-chat): nothing is asked for, nothing is added.
    chat = {"model": "deepseek-chat", "messages": body["messages"]}
    assert toolpair.repair(chat, "deepseek").fixes == []
