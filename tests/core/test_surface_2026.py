"""What the providers added in 2026, repaired: Anthropic's mid-conversation system turns,
the Responses call families of Codex's tools and Programmatic Tool Calling, and the
items that pass through. (The rules' fixture pairs are in test_rules.py.)"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import toolpair

from .test_rules import (
    CALLER,
    JSON_LIST_RESULT,
    LOCAL_SHELL,
    PATCH,
    PROGRAM,
    PROGRAM_OUT,
    PTC_CALL,
    PTC_OUT,
    SHELL,
    SY,
)
from .wire import BA, BU, RU, A, U, b_txt, b_use, fc, fco, think, tr, tu


def repaired(history: Any, provider: str, **kw: Any) -> toolpair.Repaired:
    before = copy.deepcopy(history)
    out = toolpair.repair(history, provider, **kw)
    assert history == before  # never mutated
    assert toolpair.validate(out.messages, provider, **kw) == []
    again = toolpair.repair(out.messages, provider, **kw)
    assert again.fixes == []
    assert all(a is b for a, b in zip(again.messages, out.messages, strict=True))
    return out


def test_a_system_turn_between_a_call_and_its_result_moves_after_the_result() -> None:
    thought = A(think(), tu("toolu_1"))
    system, result = SY("be brief"), U(tr("toolu_1"))
    h = [U("q"), thought, system, result]
    out = repaired(h, "anthropic")
    assert out.messages == [h[0], thought, result, system]
    # Every message is the very object it was: the result was not made up, the system
    # text did not become user content, the thinking turn is untouched.
    assert [id(m) for m in out.messages] == [id(h[0]), id(thought), id(result), id(system)]
    assert [f.kind for f in out.fixes] == ["system_moved"]
    assert out.fixes[0].index == 2 and out.fixes[0].ids == ("toolu_1",)


def test_a_dangling_call_is_answered_before_the_system_turn_after_it() -> None:
    h = [U("q"), A(tu("toolu_1")), SY("be brief")]
    out = repaired(h, "anthropic")
    roles = [m["role"] for m in out.messages]
    assert roles == ["user", "assistant", "user", "system"]
    assert out.messages[2]["content"][0]["tool_use_id"] == "toolu_1"
    assert out.messages[3] is h[2]
    assert [f.kind for f in out.fixes] == ["synthetic_result", "system_moved"]


def test_a_system_turn_moves_past_the_user_turns_to_the_next_assistant_turn() -> None:
    h = [U("q"), A("a"), SY("be brief"), U("more"), A("b")]
    out = repaired(h, "anthropic")
    assert out.messages == [h[0], h[1], h[3], h[2], h[4]]
    assert [f.kind for f in out.fixes] == ["system_moved"]


def test_what_moving_cannot_fix_is_reported() -> None:
    two = [U("q"), SY("a"), SY("b"), A("x")]
    out = toolpair.repair(two, "anthropic")
    assert [f.kind for f in out.fixes] == ["unrepaired"]
    assert "system_not_before_assistant" in out.fixes[0].detail


def test_the_directive_only_form_may_stand_anywhere() -> None:
    directive = {"role": "system", "content": [], "output_config": {"effort": "low"}}
    h = [directive, U("q"), A("a"), directive]
    assert toolpair.validate(h, "anthropic") == []


def test_system_rules_read_only_the_wire_format() -> None:
    # A framework's system messages go to the top-level system prompt.
    from toolpair.formats import get_codec

    h = [SY("first"), U("q"), A("a")]
    assert toolpair.validate(h, "anthropic") != []
    assert get_codec("anthropic").name == "anthropic"


def test_a_tool_removal_turn_is_placed_as_every_system_turn() -> None:
    # Beta mid-conversation-tool-changes-2026-07-01: the blocks ride in a system turn,
    # pass through as they are, and the turn sits right before an assistant turn or last.
    removal = {
        "role": "system",
        "content": [{"type": "tool_removal", "tool_names": ["weather"]}],
    }
    assert toolpair.validate([U("q"), removal, A("a")], "anthropic") == []
    assert toolpair.validate([U("q"), A("a"), U("b"), removal], "anthropic") == []
    (v,) = toolpair.validate([U("q"), removal, U("more"), A("a")], "anthropic")
    assert v.code == "anthropic.system_not_before_assistant" and v.index == 1
    out = repaired([U("q"), removal, U("more"), A("a")], "anthropic")
    assert out.messages[2] is removal


def test_a_tool_use_name_over_200_is_reported_not_renamed() -> None:
    h = [U("q"), A(tu("toolu_1", "n" * 201)), U(tr("toolu_1"))]
    out = toolpair.repair(h, "anthropic")
    assert [f.kind for f in out.fixes] == ["unrepaired"]
    assert out.messages == h


@pytest.mark.parametrize(
    ("call", "want"),
    [
        (
            SHELL,
            {
                "type": "shell_call_output",
                "call_id": "call_sh",
                "output": [{"stdout": "", "stderr": "", "outcome": {"type": "exit"}}],
            },
        ),
        (LOCAL_SHELL, {"type": "local_shell_call_output", "id": "call_lsh"}),
        (PATCH, {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "failed"}),
        (PTC_CALL, {"type": "function_call_output", "call_id": "call_c1", "caller": CALLER}),
    ],
    ids=["shell", "local_shell", "apply_patch", "program's call"],
)
def test_a_dangling_call_of_every_family_gets_its_own_output_type(
    call: dict[str, Any], want: dict[str, Any]
) -> None:
    program = [PROGRAM] if call is PTC_CALL else []
    tail = [PROGRAM_OUT] if call is PTC_CALL else []
    h = [RU("q"), *program, call, *tail, RU("next")]
    out = repaired(h, "openai-responses")
    made = out.messages[out.messages.index(call) + 1]
    assert made["type"] == want["type"]
    for key, value in want.items():
        if key == "output":
            chunk = made["output"][0]
            assert set(chunk) == {"stdout", "stderr", "outcome"}
            assert chunk["outcome"]["type"] == "exit"
        else:
            assert made[key] == value
    assert [f.kind for f in out.fixes] == ["synthetic_result"]


def test_an_output_gets_its_calls_caller_back() -> None:
    lost = fco("call_c1")
    h = [RU("q"), PROGRAM, PTC_CALL, lost, PROGRAM_OUT]
    out = repaired(h, "openai-responses")
    assert out.messages[3] == {**lost, "caller": CALLER}
    assert [m is x for m, x in zip(out.messages, h, strict=True)] == [True, True, True, False, True]
    assert [f.kind for f in out.fixes] == ["caller_echoed"]


def test_a_truncated_program_leaves_its_children_reported() -> None:
    h = [RU("q"), PTC_CALL, PTC_OUT]
    out = toolpair.repair(h, "openai-responses")
    assert [f.kind for f in out.fixes] == ["unrepaired"]
    assert "orphan_program_call" in out.fixes[0].detail
    # With the stored previous response holding the program, it is not an orphan.
    assert toolpair.validate(h, "openai-responses", previous_response_id="resp_1") == []


def test_additional_tools_pass_through_and_produce_nothing() -> None:
    more = {"type": "additional_tools", "role": "developer", "tools": [{"type": "function"}]}
    h = [RU("q"), more, fc("call_1"), fco("call_1")]
    assert toolpair.validate(h, "openai-responses") == []
    out = toolpair.repair([RU("q"), more, fc("call_1")], "openai-responses")
    assert out.messages[1] is more
    assert [f.kind for f in out.fixes] == ["synthetic_result"]


def test_an_id_less_reasoning_item_is_tied_to_nothing() -> None:
    # Recorded: gpt-5-nano took it with store false (crmne/ruby_llm's cassettes).
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
    said = {"role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
    h = [RU("q"), fc("call_1"), fco("call_1"), reasoning, said, RU("more")]
    assert toolpair.validate(h, "openai-responses", store=False) == []
    out = toolpair.repair([*h, fc("call_2")], "openai-responses", store=False)
    assert out.messages[3] is reasoning and out.messages[4] is said


def test_a_bedrock_json_result_that_is_no_object_goes_as_its_text() -> None:
    h = [BU(b_txt("q")), BA(b_use("t1")), BU(JSON_LIST_RESULT)]
    out = repaired(h, "bedrock")
    assert out.messages[:2] == h[:2] and out.messages[0] is h[0]
    assert out.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "[1, 2]"}]
    assert [f.kind for f in out.fixes] == ["result_json_as_text"]
