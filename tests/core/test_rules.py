# ruff: noqa: F405
"""Every provider rule: a rejected fixture (code, index, ids, exact message) and its
accepted twin. Rule numbers are those of docs/rules.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import toolpair
from tests.support.histories import CITED, NOTE
from toolpair._model import Block
from toolpair.formats.anthropic import AnthropicCodec
from toolpair.providers.anthropic import BLANK_TEXT

# The tables use most of the wire vocabulary, by its short names (F405: those names).
from .wire import *  # noqa: F403

A10_BLANK = BLANK_TEXT.text


@dataclass
class Case:
    rule: str
    provider: str
    bad: Any
    good: Any
    code: str
    index: int
    ids: tuple[str, ...]
    message: str
    path: str | None = None
    ctx: dict[str, Any] = field(default_factory=dict)


A1 = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
H1_TAIL = (
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable "
    "`thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
JSON_LIST_RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"json": [1, 2]}]}}
JSON_OBJECT_RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"json": {"items": [1, 2]}}]}}


def SY(text: str) -> dict[str, Any]:
    """An Anthropic mid-conversation system message."""
    return {"role": "system", "content": text}


# Responses call families of 2026 (openai-python 3.57's input item types).
SHELL = {"type": "shell_call", "call_id": "call_sh", "action": {"commands": ["ls"]}}
#: A tool search the application runs (``execution: "client"``), and its documented answer.
SEARCH = {
    "type": "tool_search_call",
    "call_id": "search_1",
    "execution": "client",
    "arguments": {"queries": ["rate"]},
    "status": "completed",
}
SEARCH_OUT = {
    "type": "tool_search_output",
    "call_id": "search_1",
    "execution": "client",
    "tools": [{"type": "function", "name": "rate", "parameters": {"type": "object"}}],
}
SHELL_OUT = {
    "type": "shell_call_output",
    "call_id": "call_sh",
    "output": [{"stdout": "a", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
}
LOCAL_SHELL = {
    "type": "local_shell_call",
    "id": "lsh_1",
    "call_id": "call_lsh",
    "action": {"type": "exec", "command": ["ls"], "env": {}},
    "status": "completed",
}
LOCAL_SHELL_OUT = {"type": "local_shell_call_output", "id": "call_lsh", "output": "{}"}
PATCH = {
    "type": "apply_patch_call",
    "call_id": "call_ap",
    "status": "completed",
    "operation": {"type": "create_file", "path": "a.txt", "diff": "+a"},
}
PATCH_OUT = {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed"}
PROGRAM = {
    "type": "program",
    "id": "prog_1",
    "call_id": "call_prog",
    "code": "await tools.weather()",
    "fingerprint": "fp_1",
}
PROGRAM_OUT = {
    "type": "program_output",
    "id": "po_1",
    "call_id": "call_prog",
    "result": "ok",
    "status": "completed",
}
CALLER = {"type": "program", "caller_id": "call_prog"}
PTC_CALL = {**fc("call_c1"), "caller": CALLER}
PTC_OUT = {**fco("call_c1"), "caller": CALLER}
srv = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"q": "x"}}
srv_res = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []}

CASES = [
    # --- Anthropic -------------------------------------------------------------------
    Case(
        "A1",
        "anthropic",
        [U("q"), A(tu("toolu_1"), tu("toolu_2")), U("next")],
        [U("q"), A(tu("toolu_1"), tu("toolu_2")), U(tr("toolu_1"), tr("toolu_2"))],
        "anthropic.missing_result",
        1,
        ("toolu_1", "toolu_2"),
        A1.format(i=1, ids="toolu_1, toolu_2"),
        "messages.1",
    ),
    Case(
        "A1 trailing",
        "anthropic",
        [U("q"), A(tu("toolu_1"))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.missing_result",
        1,
        ("toolu_1",),
        A1.format(i=1, ids="toolu_1"),
    ),
    Case(
        "A2",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U(txt("also"), tr("toolu_1"))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"), txt("also"))],
        "anthropic.results_not_first",
        1,
        ("toolu_1",),
        A1.format(i=1, ids="toolu_1"),
    ),
    Case(
        "A3",
        "anthropic",
        [U("q"), A("hi"), U(tr("toolu_9"))],
        [U("q"), A("hi"), U("more")],
        "anthropic.unexpected_result",
        2,
        ("toolu_9",),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
        "messages.2.content.0",
    ),
    Case(
        "A3 first",
        "anthropic",
        [U(tr("toolu_9")), A("hi"), U("q")],
        [U("q")],
        "anthropic.unexpected_result",
        0,
        ("toolu_9",),
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
        "messages.0.content.0",
    ),
    # A4 is about one turn (the threads' `messages.1.content.1`); the accepted twin is
    # the recorded shape (pydantic-ai, claude-sonnet-4-5): an id reused by a later turn.
    Case(
        "A4",
        "anthropic",
        [U("q"), A(tu("call_0"), tu("call_0")), U(tr("call_0"), tr("call_1"))],
        [U("q"), A(tu("call_0")), U(tr("call_0")), A(tu("call_0")), U(tr("call_0"))],
        "anthropic.duplicate_tool_use_id",
        1,
        ("call_0",),
        "messages.1.content.1: `tool_use` ids must be unique",
        "messages.1.content.1",
    ),
    Case(
        "A4 across merged assistant messages",
        "anthropic",
        [U("q"), A(tu("call_0")), A(tu("call_0")), U(tr("call_0"), tr("call_1"))],
        [U("q"), A(tu("call_0")), A(tu("call_1")), U(tr("call_0"), tr("call_1"))],
        "anthropic.duplicate_tool_use_id",
        2,
        ("call_0",),
        "messages.2.content.0: `tool_use` ids must be unique",
        "messages.2.content.0",
    ),
    Case(
        "A5",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"), tr("toolu_1", "again"))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.duplicate_result",
        2,
        ("toolu_1",),
        "messages.2.content.1: each tool_use must have a single result. Found multiple "
        "`tool_result` blocks with id: toolu_1",
    ),
    Case(
        "A6",
        "anthropic",
        [U("q"), A(txt("x"), tu("fc.1:2")), U(tr("fc.1:2"))],
        [U("q"), A(txt("x"), tu("fc_1_2")), U(tr("fc_1_2"))],
        "anthropic.invalid_tool_use_id",
        1,
        ("fc.1:2",),
        "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        "messages.1.content.1.tool_use.id",
    ),
    Case(
        "A7",
        "anthropic",
        [U("q"), A({**srv, "id": "ws_1"}, {**srv_res, "tool_use_id": "ws_1"}, txt("found"))],
        [U("q"), A(srv, srv_res, txt("found"))],
        "anthropic.invalid_server_tool_use_id",
        1,
        ("ws_1",),
        "messages.1.content.0.server_tool_use.id: String should match pattern "
        "'^srvtoolu_[a-zA-Z0-9_]+$'",
    ),
    Case(
        "A8 name",
        "anthropic",
        {
            "model": "m",
            "max_tokens": 1,
            "tools": [{"name": "get weather", "input_schema": {}}],
            "messages": [U("q")],
        },
        {
            "model": "m",
            "max_tokens": 1,
            "tools": [{"name": "get_weather", "input_schema": {}}],
            "messages": [U("q")],
        },
        "anthropic.invalid_tool_name",
        0,
        (),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        "tools.0.custom.name",
    ),
    Case(
        "A8 unique",
        "anthropic",
        {
            "max_tokens": 1,
            "system": "s",
            "tools": [{"name": "w"}, {"name": "w"}],
            "messages": [U("q")],
        },
        {
            "max_tokens": 1,
            "system": "s",
            "tools": [{"name": "w"}, {"name": "v"}],
            "messages": [U("q")],
        },
        "anthropic.duplicate_tool_name",
        0,
        (),
        "tools: Tool names must be unique.",
    ),
    Case(
        "A9",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1", [], is_error=True))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1", [], is_error=False))],
        "anthropic.empty_error_result",
        2,
        ("toolu_1",),
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true",
    ),
    Case(
        "A10",
        "anthropic",
        [U("q"), A(txt(""), tu("toolu_1")), U(tr("toolu_1"))],
        [U("q"), A(txt("ok"), tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.empty_text",
        1,
        (),
        "messages: text content blocks must be non-empty",
    ),
    Case(
        "A10 whitespace-only text",
        "anthropic",
        [U("q"), A(txt(" \n"), tu("toolu_1")), U(tr("toolu_1"))],
        # Beside non-blank text in its message, a blank block is accepted (UNVERIFIED).
        [U("q"), A(txt(" \n"), txt("ok"), tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.empty_text",
        1,
        (),
        "messages: text content blocks must contain non-whitespace text",
        "messages",
    ),
    Case(
        "A10 whitespace-only string content",
        "anthropic",
        [U("q"), A("ok"), U("  ")],
        [U("q"), A("ok"), U("and?")],
        "anthropic.empty_text",
        2,
        (),
        "messages: text content blocks must contain non-whitespace text",
        "messages",
    ),
    Case(
        "A10 trailing whitespace",
        "anthropic",
        [U("q"), A(txt("The answer is "))],
        [U("q"), A(txt("The answer is"))],
        "anthropic.trailing_whitespace",
        1,
        (),
        "messages: final assistant content cannot end with trailing whitespace",
    ),
    Case(
        "A11 merged user turns",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U("wait"), U(tr("toolu_1"))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1")), U("wait")],
        "anthropic.results_not_first",
        1,
        ("toolu_1",),
        A1.format(i=1, ids="toolu_1"),
    ),
    Case(
        "assistant text after tool_use",
        "anthropic",
        [U("q"), A(tu("toolu_1"), txt("done")), U(tr("toolu_1"))],
        [U("q"), A(txt("done"), tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.content_after_tool_use",
        1,
        ("toolu_1",),
        A1.format(i=1, ids="toolu_1"),
        "messages.1.content.1",
    ),
    Case(
        "S1",
        "anthropic",
        [U("q"), A(srv, tu("toolu_1")), U(tr("toolu_1"), txt("and?"))],
        [U("q"), A(srv, tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.server_tool_pending",
        1,
        ("srvtoolu_01",),
        "`web_search` tool use with id `srvtoolu_01` was found without a corresponding "
        "`web_search_tool_result` block",
    ),
    Case(
        "S4",
        "anthropic",
        [U("q"), A({**srv_res, "tool_use_id": "srvtoolu_09"}, txt("x"))],
        [U("q"), A(srv, srv_res, txt("x"))],
        "anthropic.unexpected_server_result",
        1,
        ("srvtoolu_09",),
        "messages.1.content.0: unexpected `tool_use_id` found in `web_search_tool_result` "
        "blocks: srvtoolu_09. Each `web_search_tool_result` block must have a corresponding "
        "`server_tool_use` block before it.",
    ),
    Case(
        "T2",
        "anthropic",
        [U("q"), A(tu("toolu_1", "screenshot", toolset_name="computer")), U(tr("toolu_1"))],
        [
            U("q"),
            A(tu("toolu_1", "screenshot", toolset_name="computer")),
            U(tr("toolu_1", toolset_name="computer")),
        ],
        "anthropic.missing_toolset_name",
        2,
        ("toolu_1",),
        "messages.2.content.0.tool_result: `toolset_name` is required: the `tool_use` it "
        "answers belongs to the `computer` toolset",
    ),
    Case(
        "H1",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))],
        [U("q"), A(think(), tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.thinking_not_first",
        1,
        (),
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        "`tool_use`. " + H1_TAIL,
        "messages.1.content.0.type",
        {"thinking": True},
    ),
    Case(
        "H2",
        "anthropic",
        {"max_tokens": 5, "system": "s", "messages": [U("q"), A(think(), txt("hi"))]},
        {
            "max_tokens": 5,
            "system": "s",
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [U("q"), A(think(), txt("hi"))],
        },
        "anthropic.thinking_disabled",
        1,
        (),
        "messages.1.content.0: When thinking is disabled, an `assistant` message in the final "
        "position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your "
        "request.",
    ),
    Case(
        "H3",
        "anthropic",
        [U("q"), A({"type": "thinking", "thinking": "hm"}, txt("x")), U("more")],
        [U("q"), A(think(), txt("x")), U("more")],
        "anthropic.invalid_signature",
        1,
        (),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    # --- Bedrock ---------------------------------------------------------------------
    Case(
        "B1",
        "bedrock",
        [
            BU(b_txt("q")),
            BA(b_use("t1"), b_use("t2")),
            BU(b_res("t1")),
            BA(b_txt("..")),
            BU(b_res("t2")),
        ],
        [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_res("t1"), b_res("t2"))],
        "bedrock.missing_result",
        2,
        ("t2",),
        "Expected toolResult blocks at messages.2.content for the following Ids: t2",
        "messages.2.content",
    ),
    Case(
        "B2",
        "bedrock",
        [BU(b_txt("q")), BA(b_txt("hi")), BU(b_res("t7"))],
        [BU(b_txt("q")), BA(b_txt("hi")), BU(b_txt("ok"))],
        "bedrock.too_many_results",
        2,
        ("t7",),
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse "
        "blocks of previous turn.",
    ),
    Case(
        "B3",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"), b_txt("and?"))],
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1")), BA(b_txt("ok")), BU(b_txt("and?"))],
        "bedrock.mixed_result_turn",
        2,
        (),
        "messages.2.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn.",
    ),
    Case(
        "B4",
        "bedrock",
        [BU(b_txt("q")), BU(b_txt("q2"))],
        [BU(b_txt("q"), b_txt("q2"))],
        "bedrock.roles_not_alternating",
        1,
        (),
        "A conversation must alternate between user and assistant roles. Make sure the "
        "conversation alternates between user and assistant roles and try again.",
    ),
    Case(
        "B5",
        "bedrock",
        [BA(b_txt("hello")), BU(b_txt("q"))],
        [BU(b_txt("hi")), BA(b_txt("hello")), BU(b_txt("q"))],
        "bedrock.first_not_user",
        0,
        (),
        "A conversation must start with a user message. Try again with a conversation that "
        "starts with a user message.",
    ),
    Case(
        "B6",
        "bedrock",
        {"modelId": "m", "messages": [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))]},
        {
            "modelId": "m",
            "toolConfig": {"tools": []},
            "messages": [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
        },
        "bedrock.missing_tool_config",
        0,
        (),
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    ),
    Case(
        "B7 error",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1", "", "error"))],
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1", "boom", "error"))],
        "bedrock.empty_error_result",
        2,
        ("t1",),
        "The content field at messages.2.content.0.toolResult cannot be empty when status "
        "value is error.",
    ),
    Case(
        "B7 blank",
        "bedrock",
        [BU(b_txt(" ")), BA(b_txt("x"))],
        [BU(b_txt("q")), BA(b_txt("x"))],
        "bedrock.blank_text",
        0,
        (),
        "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text "
        "to the text field, and try again.",
    ),
    Case(
        "B8",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("call.1")), BU(b_res("call.1"))],
        [BU(b_txt("q")), BA(b_use("call_1")), BU(b_res("call_1"))],
        "bedrock.invalid_tool_use_id",
        1,
        ("call.1",),
        "1 validation error detected: Value 'call.1' at 'messages.1.member.content.0.member."
        "toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular "
        "expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64",
    ),
    Case(
        "B9",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1"), b_use("t1")), BU(b_res("t1"), b_res("t1"))],
        [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_res("t1"), b_res("t2"))],
        "bedrock.duplicate_tool_use_id",
        1,
        ("t1",),
        "messages.1.content.1: Duplicate toolUseId t1. Tool use ids must be unique.",
    ),
    Case(
        "B10",
        "bedrock",
        {
            "modelId": "m",
            "toolConfig": {},
            "additionalModelRequestFields": {"thinking": {"type": "enabled"}},
            "messages": [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
        },
        {
            "modelId": "m",
            "toolConfig": {},
            "additionalModelRequestFields": {"thinking": {"type": "enabled"}},
            "messages": [
                BU(b_txt("q")),
                BA(
                    {"reasoningContent": {"reasoningText": {"text": "r", "signature": "s"}}},
                    b_use("t1"),
                ),
                BU(b_res("t1")),
            ],
        },
        "bedrock.thinking_not_first",
        1,
        (),
        "The model returned the following errors: messages.1.content.0.type: Expected "
        "`thinking` or `redacted_thinking`, but found `tool_use`. " + H1_TAIL,
    ),
    # --- OpenAI Chat -----------------------------------------------------------------
    Case(
        "O1",
        "openai",
        [OS(), OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OU("next")],
        [OS(), OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OT("call_2"), OU("n")],
        "openai.missing_result",
        2,
        ("call_2",),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2",
        "messages.[2].role",
    ),
    Case(
        "O2",
        "openai",
        [OU("q"), OA(content="hi"), OT("call_1")],
        [OU("q"), OA(content="hi"), OU("more")],
        "openai.unexpected_tool_message",
        2,
        ("call_1",),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        "messages.[2].role",
    ),
    Case(
        "O3",
        "openai",
        [OU("q"), OA(call("call_1")), OT("call_1"), OT("call_9")],
        [OU("q"), OA(call("call_1")), OT("call_1")],
        "openai.unknown_tool_call_id",
        3,
        ("call_9",),
        "Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of previous "
        "message.",
    ),
    Case(
        "O4",
        "openai",
        [OU("q"), OA(call("call_1")), OT("call_1"), OT("call_1")],
        [OU("q"), OA(call("call_1")), OT("call_1")],
        "openai.duplicate_result",
        3,
        ("call_1",),
        "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1' in messages[2] and "
        "messages[3].",
        "messages.[3].tool_call_id",
    ),
    Case(
        "O5",
        "openai",
        [OU("q"), OA(call("c" * 44)), OT("c" * 44)],
        [OU("q"), OA(call("c" * 40)), OT("c" * 40)],
        "openai.id_too_long",
        1,
        ("c" * 44,),
        "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with "
        "maximum length 40, but got a string with length 44 instead.",
    ),
    Case(
        "O5",
        "openai",
        [OU("q"), OA(call("")), OT("")],
        [OU("q"), OA(call("c1")), OT("c1")],
        "openai.empty_id",
        1,
        ("",),
        "Invalid 'messages[1].tool_calls[0].id': empty string. Expected a string with "
        "minimum length 1, but got an empty string instead.",
        "messages[1].tool_calls[0].id",
    ),
    Case(
        "O1 repeated id",
        "openai",
        [OU("q"), OA(call("call_1"), call("call_1")), OT("call_1")],
        [OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OT("call_2")],
        "openai.repeated_call_id",
        1,
        ("call_1",),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    ),
    Case(
        "B11",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1")), BU(JSON_LIST_RESULT)],
        [BU(b_txt("q")), BA(b_use("t1")), BU(JSON_OBJECT_RESULT)],
        "bedrock.result_json_not_object",
        2,
        ("t1",),
        "1 validation error detected: Value at 'messages.3.member.content.1.member.toolResult."
        "content.1.member.json' failed to satisfy constraint: Member must be a JSON object",
        "messages.2.content.0.toolResult.content.0.json",
    ),
    # --- Anthropic mid-conversation system messages (2026) ----------------------------
    Case(
        "Y1",
        "anthropic",
        [SY("be brief"), U("q"), A("a")],
        [U("q"), SY("be brief"), A("a")],
        "anthropic.system_first",
        0,
        (),
        "messages.0: use the top-level 'system' parameter for the initial system prompt; the "
        "directive-only form (content: [] with output_config) is accepted at any position",
        "messages.0.role",
    ),
    Case(
        "Y2",
        "anthropic",
        [U("q"), SY("be brief"), SY("and kind"), A("a")],
        [U("q"), SY("be brief"), A("a")],
        "anthropic.system_not_before_assistant",
        1,
        (),
        "messages.1: role 'system' must precede an 'assistant' message or end the array",
        "messages.1.role",
    ),
    Case(
        "Y2 between a call and its result",
        "anthropic",
        [U("q"), A(tu("toolu_1")), SY("be brief"), U(tr("toolu_1"))],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1")), SY("be brief")],
        "anthropic.system_between_call_and_result",
        2,
        ("toolu_1",),
        "messages.2: role 'system' must precede an 'assistant' message or end the array",
        "messages.2.role",
    ),
    Case(
        "Y3",
        "anthropic",
        [U("q"), A("a"), SY("be brief"), A("b")],
        [U("q"), A("a"), U("more"), SY("be brief"), A("b")],
        "anthropic.system_after_assistant",
        2,
        (),
        "messages.2: role 'system' must follow a 'user' message or an 'assistant' message "
        "ending in a server tool use",
        "messages.2.role",
    ),
    Case(
        "A12",
        "anthropic",
        [U("q"), A(txt("x"), tu("toolu_1", "n" * 201)), U(tr("toolu_1"))],
        [U("q"), A(txt("x"), tu("toolu_1", "n" * 200)), U(tr("toolu_1"))],
        "anthropic.tool_use_name_too_long",
        1,
        ("toolu_1",),
        "messages.1.content.1.tool_use.name: String should have at most 200 characters",
        "messages.1.content.1.tool_use.name",
    ),
    # --- OpenAI Responses ------------------------------------------------------------
    Case(
        "R1 shell_call",
        "openai-responses",
        [RU("q"), SHELL, RU("next")],
        [RU("q"), SHELL, SHELL_OUT, RU("next")],
        "openai-responses.missing_output",
        1,
        ("call_sh",),
        "No tool output found for function call call_sh.",
        "input",
    ),
    Case(
        "R1 client tool_search_call",
        "openai-responses",
        [RU("q"), SEARCH, RU("next")],
        [RU("q"), SEARCH, SEARCH_OUT, RU("next")],
        "openai-responses.missing_output",
        1,
        ("search_1",),
        "No tool output found for function call search_1.",
        "input",
    ),
    Case(
        "R2 tool_search_output of no client call",
        "openai-responses",
        [RU("q"), {**SEARCH, "execution": "server"}, SEARCH_OUT, RU("next")],
        # The recorded 200 (pydantic-ai, gpt-5.6): a function_call_output answers it too.
        [RU("q"), SEARCH, {"type": "function_call_output", "call_id": "search_1", "output": "x"}],
        "openai-responses.orphan_output",
        2,
        ("search_1",),
        "No tool call found for function call output with call_id search_1.",
        "input",
    ),
    Case(
        "R1 local_shell_call (its output names the call by id)",
        "openai-responses",
        [RU("q"), LOCAL_SHELL, RU("next")],
        [RU("q"), LOCAL_SHELL, LOCAL_SHELL_OUT, RU("next")],
        "openai-responses.missing_output",
        1,
        ("call_lsh",),
        "No tool output found for function call call_lsh.",
        "input",
    ),
    Case(
        "R2 apply_patch_call_output",
        "openai-responses",
        [RU("q"), PATCH_OUT],
        [RU("q"), PATCH, PATCH_OUT],
        "openai-responses.orphan_output",
        1,
        ("call_ap",),
        "No tool call found for function call output with call_id call_ap.",
        "input",
    ),
    Case(
        "R8 a program's call without its program",
        "openai-responses",
        [RU("q"), PTC_CALL, PTC_OUT],
        [RU("q"), PROGRAM, PTC_CALL, PTC_OUT, PROGRAM_OUT],
        "openai-responses.orphan_program_call",
        1,
        ("call_c1", "call_prog"),
        "No program found for call call_c1 with caller_id call_prog.",
        "input[1].caller",
    ),
    Case(
        "R8 the output echoes its call's caller",
        "openai-responses",
        [RU("q"), PROGRAM, PTC_CALL, fco("call_c1"), PROGRAM_OUT],
        [RU("q"), PROGRAM, PTC_CALL, PTC_OUT, PROGRAM_OUT],
        "openai-responses.caller_not_echoed",
        3,
        ("call_c1", "call_prog"),
        "Invalid 'input[3].caller': the output of call call_c1 must echo the caller of its call "
        "(program call_prog).",
        "input[3].caller",
    ),
    Case(
        "R1",
        "openai-responses",
        [RU("q"), rs("rs_1"), fc("call_1", "fc_1"), RU("next")],
        [RU("q"), rs("rs_1"), fc("call_1", "fc_1"), fco("call_1")],
        "openai-responses.missing_output",
        2,
        ("call_1",),
        "No tool output found for function call call_1.",
        "input",
    ),
    Case(
        "R2",
        "openai-responses",
        [RU("q"), fco("call_7")],
        [RU("q")],
        "openai-responses.orphan_output",
        1,
        ("call_7",),
        "No tool call found for function call output with call_id call_7.",
    ),
    Case(
        "R3",
        "openai-responses",
        [RU("q"), rs("rs_1"), rs("rs_2"), fc("c1", "fc_1"), fc("c2", "fc_2"), fco("c1"), fco("c2")],
        [RU("q"), rs("rs_1"), fc("c1", "fc_1"), rs("rs_2"), fc("c2", "fc_2"), fco("c1"), fco("c2")],
        "openai-responses.reasoning_without_following",
        1,
        ("rs_1",),
        "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
    ),
    Case(
        "R4",
        "openai-responses",
        [RU("q"), fc("c1", "fc_1"), fco("c1"), fc("c2", "fc_1"), fco("c2")],
        [RU("q"), fc("c1", "fc_1"), fco("c1"), fc("c2", "fc_2"), fco("c2")],
        "openai-responses.duplicate_item",
        3,
        ("fc_1",),
        "Duplicate item found with id fc_1. Remove duplicate items from your input and try again.",
        ctx={"model": "gpt-4.1"},
    ),
    Case(
        "R5",
        "openai-responses",
        [RU("q"), fc("call_1", "call_1"), fco("call_1")],
        [RU("q"), fc("call_1"), fco("call_1")],
        "openai-responses.bad_item_id",
        1,
        ("call_1",),
        "Invalid 'input[1].id': 'call_1'. Expected an ID that begins with 'fc'.",
        "input[1].id",
    ),
    Case(
        "R6",
        "openai-responses",
        [RU("q"), fc("x" * 70), fco("x" * 70)],
        [RU("q"), fc("x" * 64), fco("x" * 64)],
        "openai-responses.call_id_too_long",
        1,
        ("x" * 70,),
        "Invalid 'input[1].call_id': string too long. Expected a string with maximum length 64, "
        "but got a string with length 70 instead.",
    ),
    Case(
        "R6",
        "openai-responses",
        [RU("q"), fc(""), fco("")],
        [RU("q"), fc("call_1"), fco("call_1")],
        "openai-responses.empty_call_id",
        1,
        ("",),
        "Invalid 'input[1].call_id': empty string. Expected a string with minimum length 1, "
        "but got an empty string instead.",
        "input[1].call_id",
    ),
    Case(
        "R7",
        "openai-responses",
        {"store": False, "input": [RU("q"), rs("rs_1"), RA("hi", "msg_1")]},
        {
            "store": False,
            "input": [RU("q"), rs("rs_1", encrypted_content="gAAA"), RA("hi", "msg_1")],
        },
        "openai-responses.item_not_persisted",
        1,
        ("rs_1",),
        "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. "
        "Try again with `store` set to true, or remove this item from your input.",
    ),
    Case(
        "R8 needs previous_response_id",
        "openai-responses",
        {"input": [fco("call_1")]},
        {"previous_response_id": "resp_1", "input": [fco("call_1")]},
        "openai-responses.orphan_output",
        0,
        ("call_1",),
        "No tool call found for function call output with call_id call_1.",
    ),
    # --- Gemini ----------------------------------------------------------------------
    Case(
        "G1",
        "gemini",
        [GU(g_txt("q")), GM(g_call()), GU(g_txt("hm?"))],
        [GU(g_txt("q")), GM(g_call()), GU(g_res())],
        "gemini.missing_response",
        2,
        ("weather",),
        "Please ensure that function response turn comes immediately after a function call turn.",
        "contents[2]",
    ),
    Case(
        "G1 orphan response",
        "gemini",
        [GU(g_txt("q")), GM(g_txt("hi")), GU(g_res())],
        [GU(g_txt("q")), GM(g_txt("hi")), GU(g_txt("ok"))],
        "gemini.unexpected_response",
        2,
        ("weather",),
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    Case(
        "G2",
        "gemini",
        [
            GU(g_txt("q")),
            GM(g_call("a"), g_call("b")),
            GU(g_res("a")),
            GM(g_txt("..")),
            GU(g_res("b")),
        ],
        [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_res("a"), g_res("b"))],
        "gemini.response_count",
        2,
        ("a", "b"),
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
    ),
    Case(
        "G3",
        "gemini",
        [GM(g_call()), GU(g_res())],
        [GU(g_txt("q")), GM(g_call()), GU(g_res())],
        "gemini.call_turn_position",
        0,
        (),
        "Please ensure that function call turn comes immediately after a user turn or after a "
        "function response turn.",
    ),
    Case(
        "G4",
        "gemini",
        [GU(g_txt("q")), GM(g_call())],
        [GU(g_txt("q")), GM(g_call()), GU(g_res())],
        "gemini.ends_with_call",
        1,
        ("weather",),
        "Please ensure that multiturn requests ends with a user role or a function response.",
    ),
    Case(
        "G5",
        "gemini",
        [GU(g_txt("q")), GM(g_call()), GU(g_res())],
        [GU(g_txt("q")), GM(g_call(sig="c2ln")), GU(g_res())],
        "gemini.missing_thought_signature",
        1,
        ("weather",),
        "Function call is missing a thought_signature in functionCall parts. This is required "
        "for tools to work correctly, and missing thought_signature may lead to degraded model "
        "performance. Additional data, function call `default_api:weather` , position 1. Please "
        "refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
        ctx={"thought_signatures": True},
    ),
    Case(
        "G8",
        "gemini",
        [GU(g_txt("q")), GM(g_call(sig="c2lnLTMuNg")), GU(g_res())],
        [GU(g_txt("q")), GM(g_call(sig="c2lnLTMuNQ")), GU(g_res())],
        "gemini.foreign_thought_signature",
        1,
        ("weather",),
        "Invalid thought signature.",
        path="contents[1].parts[0].thoughtSignature",
        ctx={
            "model": "gemini-3.5-flash",
            "signature_models": {
                "c2lnLTMuNg": "gemini-3.6-flash",
                "c2lnLTMuNQ": "gemini-3.5-flash",
            },
        },
    ),
    Case(
        "G6",
        "gemini",
        [GU(g_txt("q")), GM(), GU(g_txt("q2"))],
        [GU(g_txt("q")), GM(g_txt("a")), GU(g_txt("q2"))],
        "gemini.empty_parts",
        1,
        (),
        "GenerateContentRequest.contents[1].parts: contents.parts must not be empty",
    ),
    Case(
        "G6",
        "vertex",
        [GU(g_txt("q")), GM(), GU(g_txt("q2"))],
        [GU(g_txt("q")), GM(g_txt("a")), GU(g_txt("q2"))],
        "gemini.empty_parts",
        1,
        (),
        "Unable to submit request because it must include at least one parts field, which "
        "describes the prompt input. Learn more: "
        "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
        "contents[1].parts",
    ),
    # --- Mistral ---------------------------------------------------------------------
    Case(
        "M1",
        "mistral",
        [OU("q"), OA(call("call_abc123")), OT("call_abc123")],
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ")],
        "mistral.invalid_id",
        1,
        ("call_abc123",),
        "Tool call id was call_abc123 but must be a-z, A-Z, 0-9, with a length of 9.",
    ),
    Case(
        "M2",
        "mistral",
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OT("abc123XYZ")],
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OT("abc123XYZ"), OT("def456XYZ")],
        "mistral.count_mismatch",
        1,
        ("abc123XYZ", "def456XYZ"),
        "Not the same number of function calls and responses",
    ),
    Case(
        "M3 unexpected",
        "mistral",
        [OU("q"), OA(call("abc123XYZ")), OT("zzz999ZZZ")],
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ")],
        "mistral.unexpected_id",
        2,
        ("zzz999ZZZ",),
        "Unexpected tool call id zzz999ZZZ in tool results",
    ),
    Case(
        "M3 duplicate result",
        "mistral",
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OT("abc123XYZ"), OT("abc123XYZ")],
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OT("abc123XYZ"), OT("def456XYZ")],
        "mistral.duplicate_result",
        3,
        ("abc123XYZ",),
        "Duplicate tool call id abc123XYZ in tool results",
    ),
    Case(
        "M3 duplicate call",
        "mistral",
        [OU("q"), OA(call("abc123XYZ"), call("abc123XYZ")), OT("abc123XYZ"), OT("abc123XYZ")],
        [OU("q"), OA(call("abc123XYZ"), call("def456XYZ")), OT("abc123XYZ"), OT("def456XYZ")],
        "mistral.duplicate_call_id",
        1,
        ("abc123XYZ",),
        "Duplicate tool call id abc123XYZ in assistant message",
    ),
    Case(
        "M4",
        "mistral",
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ"), OU("and?")],
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ"), OA(content="ok"), OU("and?")],
        "mistral.unexpected_role",
        3,
        (),
        "Unexpected role 'user' after role 'tool'",
        "messages.3.role",
    ),
    Case(
        "M5",
        "mistral",
        [OU("q"), OA(content="hi")],
        [OU("q"), OA(content="hi"), OU("q2")],
        "mistral.bad_last_role",
        1,
        (),
        "Expected last role User or Tool (or Assistant with prefix or continue_final_message "
        "set to True) for serving but got assistant",
    ),
    Case(
        "M6",
        "mistral",
        [OU("q"), OA(call("abc123XYZ"), content="let me"), OT("abc123XYZ")],
        [OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ")],
        "mistral.content_and_tool_calls",
        1,
        (),
        "Assistant message must have either content or tool_calls, but not both.",
        ctx={"tokenizer_version": 3},
    ),
    Case(
        "M7",
        "mistral",
        [OU("q"), OA(call("abc123XYZ", "get weather")), OT("abc123XYZ")],
        [OU("q"), OA(call("abc123XYZ", "get_weather")), OT("abc123XYZ")],
        "mistral.invalid_name",
        1,
        ("abc123XYZ",),
        "Function name was get weather but must be a-z, A-Z, 0-9, or contain underscores and "
        "dashes, with a maximum length of 64.",
    ),
    Case(
        "M8 empty",
        "mistral",
        [],
        [OU("q")],
        "mistral.empty",
        0,
        (),
        "Conversation must have at least one message",
    ),
    Case(
        "M8 start",
        "mistral",
        [OA(content="hi")],
        [OU("hi")],
        "mistral.bad_start",
        0,
        (),
        "Conversation must start with a user message or system message",
    ),
]

# --- Anthropic API version 2026-10-21 (a header: passed as api_version) ---------------
V2026 = {"api_version": "2026-10-21"}
PDF = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}
CASES += [
    Case(
        "A13 API 2026-10-21: a document in an assistant turn",
        "anthropic",
        [U("q"), A(txt("here"), NOTE), U("thanks")],
        [U(txt("q"), NOTE), A(txt("here")), U("thanks")],
        "anthropic.document_in_assistant",
        1,
        (),
        "messages.1.content.1: `document` blocks are not allowed in `assistant` messages",
        "messages.1.content.1",
        V2026,
    ),
    Case(
        "A14 API 2026-10-21: citations in a user text",
        "anthropic",
        [U(CITED), A(txt("ok")), U("more")],
        [U(txt("as the notes say")), A(txt("ok")), U("more")],
        "anthropic.citations_in_user_text",
        0,
        (),
        "messages.0.content.0.citations: `citations` are not allowed in `user` messages",
        "messages.0.content.0.citations",
        V2026,
    ),
]

# --- Zhipu (GLM): OpenAI's pairing, each answered with code 1214 ----------------------
Z1214 = "The messages parameter is illegal. Please check the documentation."
CASES += [
    Case(
        "Z1 O1",
        "zhipu",
        [OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OU("next")],
        [OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OT("call_2"), OU("n")],
        "zhipu.missing_result",
        1,
        ("call_2",),
        Z1214,
        "messages",
    ),
    Case(
        "Z1 O1 repeated id",
        "zhipu",
        [OU("q"), OA(call("call_1"), call("call_1")), OT("call_1")],
        [OU("q"), OA(call("call_1"), call("call_2")), OT("call_1"), OT("call_2")],
        "zhipu.repeated_call_id",
        1,
        ("call_1",),
        Z1214,
    ),
    Case(
        "Z1 O2",
        "zhipu",
        [OU("q"), OA(content="hi"), OT("call_1")],
        [OU("q"), OA(content="hi"), OU("more")],
        "zhipu.unexpected_tool_message",
        2,
        ("call_1",),
        Z1214,
    ),
    Case(
        "Z1 O2 no id",
        "zhipu",
        [OU("q"), OA(call("call_1")), {"role": "tool", "content": "sunny"}],
        [OU("q"), OA(call("call_1")), OT("call_1")],
        "zhipu.result_without_id",
        2,
        (),
        Z1214,
    ),
    Case(
        "Z1 O3",
        "zhipu",
        [OU("q"), OA(call("call_1")), OT("call_1"), OT("call_9")],
        [OU("q"), OA(call("call_1")), OT("call_1")],
        "zhipu.unknown_tool_call_id",
        3,
        ("call_9",),
        Z1214,
    ),
    Case(
        "Z1 O4",
        "zhipu",
        [OU("q"), OA(call("call_1")), OT("call_1"), OT("call_1")],
        [OU("q"), OA(call("call_1")), OT("call_1")],
        "zhipu.duplicate_result",
        3,
        ("call_1",),
        Z1214,
    ),
    Case(
        "Z1 O5 empty id",
        "zhipu",
        [OU("q"), OA(call("")), OT("")],
        [OU("q"), OA(call("c1")), OT("c1")],
        "zhipu.empty_id",
        1,
        ("",),
        Z1214,
    ),
    Case(
        "Z2 no user message",
        "zhipu",
        [OS(), OA(call("call_1")), OT("call_1")],
        [OS(), OU("q"), OA(call("call_1")), OT("call_1")],
        "zhipu.no_user_message",
        0,
        (),
        Z1214,
        "messages",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.provider}:{c.rule}")
def test_rejected(case: Case) -> None:
    found = [
        v for v in toolpair.validate(case.bad, case.provider, **case.ctx) if v.code == case.code
    ]
    assert found, f"{case.code} not reported; got {toolpair.validate(case.bad, case.provider)}"
    v = found[0]
    assert v.message == case.message
    assert v.index == case.index
    assert v.ids == case.ids
    if case.path is not None:
        assert v.path == case.path


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.provider}:{c.rule}")
def test_accepted_twin(case: Case) -> None:
    assert toolpair.validate(case.good, case.provider, **case.ctx) == []


def test_thinking_rules_need_thinking_on() -> None:
    h = [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))]
    assert toolpair.validate(h, "anthropic") == []
    assert toolpair.validate(h, "anthropic", thinking=False) == []
    body = {"max_tokens": 1, "system": "", "thinking": {"type": "adaptive"}, "messages": h}
    assert [v.code for v in toolpair.validate(body, "anthropic")] == [
        "anthropic.thinking_not_first"
    ]


def test_thinking_rule_reads_the_current_tool_loop() -> None:
    # Only the loop after the last real user prompt must start with thinking.
    h = [
        U("q"),
        A(tu("toolu_1")),
        U(tr("toolu_1")),
        A("done"),
        U("next"),
        A(think(), tu("toolu_2")),
        U(tr("toolu_2")),
        A(tu("toolu_3")),
        U(tr("toolu_3")),
    ]
    assert toolpair.validate(h, "anthropic", thinking=True) == []


def test_pause_turn_with_pending_server_tool_is_valid() -> None:
    assert toolpair.validate([U("q"), A(srv)], "anthropic") == []


def test_gemini_ids_are_optional_and_pair_by_name() -> None:
    h = [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_res("b"), g_res("a"))]
    assert toolpair.validate(h, "gemini") == []
    with_ids = [GU(g_txt("q")), GM(g_call("a", "i1")), GU(g_res("a", "i1"))]
    assert toolpair.validate(with_ids, "gemini") == []


def test_responses_pairs_by_call_id_anywhere() -> None:
    h = [RU("q"), fc("c1"), fc("c2"), fco("c2"), RA("one done"), fco("c1")]
    assert toolpair.validate(h, "openai-responses") == []


def test_portable_is_the_union_of_all_providers() -> None:
    h = [OU("q"), OA(call("call_1")), OT("call_1")]
    codes = {v.code for v in toolpair.validate(h, "portable")}
    assert codes == {"mistral.invalid_id"}
    assert toolpair.validate([OU("q"), OA(call("abc123XYZ")), OT("abc123XYZ")], "portable") == []


def test_framework_shaped_tool_messages_project_onto_each_provider() -> None:
    # OpenAI-chat-shaped history judged as Anthropic would see it after formatting:
    # consecutive tool messages become one user turn, a user message after them merges in.
    h = [OU("q"), OA(call("call_1")), OU("wait"), OT("call_1")]
    assert [v.code for v in toolpair.validate(h, "anthropic")] == ["anthropic.results_not_first"]
    assert [v.code for v in toolpair.validate(h, "bedrock")] == [
        "bedrock.missing_result",
        "bedrock.roles_not_alternating",
        "bedrock.too_many_results",
    ]


class _Dropping(AnthropicCodec):
    """Anthropic messages as a framework would hold them, whose formatter drops a blank
    text block unless it sits beside a call (what its ``sends_blank_text`` says)."""

    name = "dropping"

    def certainly_valid(self, *args: Any) -> None:
        return None  # judge by the rules, which this test is about

    def sends_blank_text(self, block: Block, provider: str) -> bool:
        return provider == "anthropic" and block.native.get("beside_call", False)


def test_a_codec_says_which_blank_text_its_formatter_sends() -> None:
    h = [U("q"), A(txt(" ")), U("and?")]
    assert [v.code for v in toolpair.validate(h, "anthropic")] == ["anthropic.empty_text"]
    assert toolpair.validate(h, "anthropic", format=_Dropping()) == []
    sent = [U("q"), A({**txt(" "), "beside_call": True}), U("and?")]
    found = toolpair.validate(sent, "anthropic", format=_Dropping())
    assert [(v.code, v.index, v.message) for v in found] == [("anthropic.empty_text", 1, A10_BLANK)]


def test_unknown_provider_and_context() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        toolpair.validate([], "cohere")
    with pytest.raises(TypeError, match="unknown context"):
        toolpair.validate([], "anthropic", thinkin=True)


def test_check_raises_with_every_violation() -> None:
    with pytest.raises(toolpair.HistoryError) as err:
        toolpair.check([U("q"), A(tu("toolu_1"), tu("toolu_1"))], "anthropic")
    codes = [v.code for v in err.value.violations]
    assert codes == ["anthropic.duplicate_tool_use_id", "anthropic.missing_result"]
    assert toolpair.check([U("q")], "anthropic") is None


def test_a4_repair_keeps_an_id_a_later_turn_reuses() -> None:
    # The recorded shape (claude-sonnet-4-5 took it): repair hands it back untouched.
    reused = [U("q"), A(tu("call_0")), U(tr("call_0")), A(tu("call_0")), U(tr("call_0"))]
    out = toolpair.repair(reused, "anthropic")
    assert out.fixes == []
    assert all(a is b for a, b in zip(out.messages, reused, strict=True))
    # Inside one turn the id is rewritten on the second call; the result keeps the first.
    twice = [U("q"), A(tu("call_0"), tu("call_0")), U(tr("call_0"))]
    fixed = toolpair.repair(twice, "anthropic")
    assert [f.kind for f in fixed.fixes][:1] == ["id_rewritten"]
    assert toolpair.validate(fixed.messages, "anthropic") == []
    ids = [b["id"] for b in fixed.messages[1]["content"]]
    assert ids[0] == "call_0" and ids[1] != "call_0"


def test_tool_search_pairs_only_when_the_client_runs_it() -> None:
    hosted = {**SEARCH, "execution": "server", "id": "tsc_1"}
    hosted_out = {**SEARCH_OUT, "execution": "server", "id": "tso_1"}
    # Hosted search: nothing is owed, with or without its output replayed.
    assert toolpair.validate([RU("q"), hosted, RU("next")], "openai-responses") == []
    assert toolpair.validate([RU("q"), hosted, hosted_out], "openai-responses") == []
    # A client search left open is answered the documented way.
    out = toolpair.repair([RU("q"), SEARCH, RU("next")], "openai-responses")
    assert out.messages[2] == {
        "type": "tool_search_output",
        "call_id": "search_1",
        "execution": "client",
        "tools": [],
    }
    assert toolpair.validate(out.messages, "openai-responses") == []
    again = toolpair.repair(out.messages, "openai-responses")
    assert again.fixes == [] and again.messages[2] is out.messages[2]
