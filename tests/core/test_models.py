# ruff: noqa: F405
"""Rules that depend on the model and the host: each a rejected fixture (code, index, ids,
exact message) and its accepted twin, the model ids as users write them, and repair
held to the same model (what it accepts is left alone, what it rejects is fixed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import toolpair
from toolpair.providers import get_profile
from toolpair.providers._models import bedrock_family, bedrock_model, gemini_family

from .test_rules import Case

# The tables use most of the wire vocabulary, by its short names (F405: those names).
from .wire import *  # noqa: F403

SONNET4 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
HAIKU35 = "anthropic.claude-3-5-haiku-20241022-v1:0"
LLAMA = "meta.llama3-3-70b-instruct-v1:0"
NOVA = "amazon.nova-pro-v1:0"
KIMI = "moonshot.kimi-k2-thinking"
SONNET46 = "us.anthropic.claude-sonnet-4-6"

A1_TEXT = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)

CASES = [
    # --- OpenAI Responses: reasoning ------------------------------------------------
    Case(
        "R3 an id-less assistant message is not the reasoning's item",
        "openai-responses",
        [RU("q"), rs("rs_1"), RA("hi")],
        [RU("q"), rs("rs_1"), RA("hi", "msg_1")],
        "openai-responses.reasoning_without_following",
        1,
        ("rs_1",),
        "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
    ),
    Case(
        "R3 fc_ item without its reasoning (the strict set, no model)",
        "openai-responses",
        [RU("q"), fc("call_1", "fc_1"), fco("call_1")],
        [RU("q"), rs("rs_1"), fc("call_1", "fc_1"), fco("call_1")],
        "openai-responses.call_without_reasoning",
        1,
        ("fc_1", "call_1"),
        "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item.",
    ),
    Case(
        "R3 parallel calls after one reasoning item",
        "openai-responses",
        [
            RU("q"),
            rs("rs_1"),
            fc("c1", "fc_1"),
            RA("x", "msg_1"),
            fc("c2", "fc_2"),
            fco("c1"),
            fco("c2"),
        ],
        [RU("q"), rs("rs_1"), fc("c1", "fc_1"), fc("c2", "fc_2"), fco("c1"), fco("c2")],
        "openai-responses.call_without_reasoning",
        4,
        ("fc_2", "c2"),
        "Item 'fc_2' of type 'function_call' was provided without its required 'reasoning' item.",
    ),
    # --- DeepSeek -------------------------------------------------------------------
    Case(
        "DeepSeek Responses: outputs directly after their call group",
        "deepseek-responses",
        [RU("q"), fc("c1"), RA("working", "msg_1"), fco("c1")],
        [RU("q"), fc("c1"), fco("c1"), RA("done", "msg_1")],
        "deepseek-responses.missing_output",
        1,
        ("c1",),
        "No tool output found for tool call c1.",
    ),
    Case(
        "DeepSeek Responses: reasoning between parallel calls ends their group",
        "deepseek-responses",
        [RU("q"), rs("rs_1"), fc("c1"), rs("rs_2"), fc("c2"), fco("c1"), fco("c2")],
        [RU("q"), rs("rs_1"), rs("rs_2"), fc("c1"), fc("c2"), fco("c1"), fco("c2")],
        "deepseek-responses.missing_output",
        2,
        ("c1",),
        "No tool output found for tool call c1.",
    ),
    Case(
        "DeepSeek Responses: an output away from its call",
        "deepseek-responses",
        [RU("q"), fc("c1"), fco("c1"), RU("and"), fco("c1")],
        [RU("q"), fc("c1"), fco("c1"), RU("and")],
        "deepseek-responses.orphan_output",
        4,
        ("c1",),
        "No tool call found for tool output with call_id c1.",
    ),
    Case(
        "DeepSeek reasoner (V4 since 2026): reasoning_content passed back, in V4's words",
        "deepseek",
        {"model": "deepseek-reasoner", "messages": [OU("q"), OA(call("c1")), OT("c1")]},
        {
            "model": "deepseek-reasoner",
            "messages": [OU("q"), {**OA(call("c1")), "reasoning_content": "hm"}, OT("c1")],
        },
        "deepseek.reasoning_not_passed_back",
        1,
        (),
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
    ),
    Case(
        "DeepSeek thinking switched on in the body: reasoning_content passed back",
        "deepseek",
        {
            "model": "deepseek-chat",
            "thinking": {"type": "enabled"},
            "messages": [OU("q"), OA(call("c1")), OT("c1")],
        },
        {
            "model": "deepseek-chat",
            "thinking": {"type": "enabled"},
            "messages": [OU("q"), {**OA(call("c1")), "reasoning_content": "hm"}, OT("c1")],
        },
        "deepseek.missing_reasoning_content",
        1,
        ("c1",),
        "Missing `reasoning_content` field in the assistant message at message index 1. For "
        "more information, please refer to "
        "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    ),
    # --- Gemini 3 and Vertex --------------------------------------------------------
    Case(
        "G5 Gemini 3: the first call of each step needs its signature",
        "gemini",
        [
            GU(g_txt("q")),
            GM(g_call("a", sig="s1")),
            GU(g_res("a")),
            GM(g_call("b")),
            GU(g_res("b")),
        ],
        [
            GU(g_txt("q")),
            GM(g_call("a", sig="s1")),
            GU(g_res("a")),
            GM(g_call("b", sig="s2")),
            GU(g_res("b")),
        ],
        "gemini.missing_thought_signature",
        3,
        ("b",),
        "Function call is missing a thought_signature in functionCall parts. This is required "
        "for tools to work correctly, and missing thought_signature may lead to degraded model "
        "performance. Additional data, function call `default_api:b` , position 3. Please "
        "refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
        ctx={"model": "gemini-3-pro-preview"},
    ),
    Case(
        "Vertex: a function response turn holds nothing else",
        "vertex",
        [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"), g_txt("and then?"))],
        [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"))],
        "vertex.mixed_response_turn",
        2,
        ("a",),
        "Requests ending with a model turn are not supported.",
    ),
    Case(
        "Vertex: no id on function calls",
        "vertex",
        [GU(g_txt("q")), GM(g_call("a", "i1")), GU(g_res("a", "i1"))],
        [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"))],
        "vertex.unknown_id_field",
        1,
        ("i1",),
        'Invalid JSON payload received. Unknown name "id" at '
        "'contents[1].parts[0].function_call': Cannot find field.",
    ),
    Case(
        "Vertex: Gemini 3 signature in Vertex's words",
        "vertex",
        [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"))],
        [GU(g_txt("q")), GM(g_call("a", sig="s1")), GU(g_res("a"))],
        "vertex.missing_thought_signature",
        1,
        ("a",),
        "Unable to submit request because function call `a` in the 1. content block is "
        "missing a `thought_signature`. Learn more: "
        "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures",
        ctx={"model": "gemini-3-flash"},
    ),
    # --- Bedrock by family ----------------------------------------------------------
    *(
        Case(
            f"B3 {who}: no text beside tool use",
            "bedrock",
            [BU(b_txt("q")), BA(b_txt("let me look"), b_use("t1")), BU(b_res("t1"))],
            [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
            "bedrock.mixed_tool_use_turn",
            1,
            ("t1",),
            "messages.1.content: Conversation blocks and tool use blocks cannot be provided in "
            "the same turn.",
            ctx=ctx,
        )
        for who, ctx in [("strict", {}), ("Llama", {"model": LLAMA})]
    ),
    Case(
        "B3 Claude 3: results alone",
        "bedrock",
        [BU(b_txt("q")), BA(b_txt("let me look"), b_use("t1")), BU(b_res("t1"), b_txt("ok?"))],
        [BU(b_txt("q")), BA(b_txt("let me look"), b_use("t1")), BU(b_res("t1"))],
        "bedrock.mixed_result_turn",
        2,
        (),
        "messages.2.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn.",
        ctx={"model": HAIKU35},
    ),
    Case(
        "B1 Claude behind Converse: Anthropic's words",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_txt("never mind"))],
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"), b_txt("never mind"))],
        "bedrock.missing_result",
        1,
        ("t1",),
        "The model returned the following errors: "
        + A1_TEXT.format(i=1, ids="t1")
        + " (reason: TOOL_USE_RESULT_MISMATCH)",
        ctx={"model": SONNET4},
    ),
    # The shapes of recorded exchanges (models.md-style verdicts settled by live 200s and
    # 400s): Kimi takes its own `functions.name:0` ids and text beside the toolUse.
    Case(
        "B8 Kimi: its own ids are taken, others still refused",
        "bedrock",
        [
            BU(b_txt("q")),
            BA(b_txt("checking"), b_use("functions/get_temperature 0")),
            BU(b_res("functions/get_temperature 0", status="success")),
        ],
        [
            BU(b_txt("q")),
            BA(b_txt("checking"), b_use("functions.get_temperature:0")),
            BU(b_res("functions.get_temperature:0", status="success")),
        ],
        "bedrock.invalid_tool_use_id",
        1,
        ("functions/get_temperature 0",),
        "1 validation error detected: Value 'functions/get_temperature 0' at 'messages.1."
        "member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: Member must "
        "satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64",
        ctx={"model": KIMI},
    ),
    # Claude Sonnet 4.6 through ConverseStream: a result turn holding one of two results
    # is refused by Converse itself, at the answering turn.
    Case(
        "B1 Claude behind Converse: a missing parallel result in Converse's words",
        "bedrock",
        [
            BU(b_txt("q")),
            BA(b_txt("let me look"), b_use("call_weather"), b_use("call_time", "time")),
            BU(b_res("call_weather"), b_txt("go on"), {"cachePoint": {"type": "default"}}),
        ],
        [
            BU(b_txt("q")),
            BA(b_txt("let me look"), b_use("call_weather"), b_use("call_time", "time")),
            BU(
                b_res("call_weather"),
                b_res("call_time"),
                b_txt("go on"),
                {"cachePoint": {"type": "default"}},
            ),
        ],
        "bedrock.missing_result",
        2,
        ("call_time",),
        "Expected toolResult blocks at messages.2.content for the following Ids: call_time",
        ctx={"model": SONNET46},
    ),
    Case(
        "Bedrock Ministral: 9-character ids",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("tooluse_abc")), BU(b_res("tooluse_abc"))],
        [BU(b_txt("q")), BA(b_use("abc123XYZ")), BU(b_res("abc123XYZ"))],
        "bedrock.invalid_tool_use_id",
        1,
        ("tooluse_abc",),
        "Tool call id was tooluse_abc but must be a-z, A-Z, 0-9, with a length of 9.",
        ctx={"model": "mistral.ministral-3-8b-instruct-v1:0"},
    ),
]


def _no_id_anthropic() -> Any:
    return {"type": "tool_result", "content": "sunny"}


# A result with no id at all is an orphan result, reported in each provider's words.
CASES += [
    Case(
        "A3 a tool_result without tool_use_id",
        "anthropic",
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"), _no_id_anthropic())],
        [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))],
        "anthropic.result_without_id",
        2,
        (),
        "messages.2.content.1.tool_result.tool_use_id: Field required",
    ),
    Case(
        "B8 a toolResult without toolUseId",
        "bedrock",
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"), {"toolResult": {"content": []}})],
        [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
        "bedrock.result_without_id",
        2,
        (),
        "1 validation error detected: Value null at 'messages.3.member.content.2.member."
        "toolResult.toolUseId' failed to satisfy constraint: Member must not be null",
    ),
    *(
        Case(
            f"{rule} a tool message without tool_call_id",
            provider,
            [OU("q"), OA(call(i)), OT(i), {"role": "tool", "content": "x"}],
            [OU("q"), OA(call(i)), OT(i)],
            f"{provider}.result_without_id",
            3,
            (),
            message,
        )
        for rule, provider, i, message in [
            (
                "O2",
                "openai",
                "c1",
                "Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                "'tool_call_id'.",
            ),
            ("M7", "mistral", "abc123XYZ", "Tool call id has to be defined."),
        ]
    ),
    Case(
        "R2 a function_call_output without call_id",
        "openai-responses",
        [RU("q"), fc("c1"), fco("c1"), {"type": "function_call_output", "output": "x"}],
        [RU("q"), fc("c1"), fco("c1")],
        "openai-responses.result_without_id",
        3,
        (),
        "Missing required parameter: 'input[3].call_id'.",
    ),
    Case(
        "S4 a server tool result with no server_tool_use",
        "anthropic",
        [
            U("q"),
            A(
                txt("searching"),
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9", "content": []},
            ),
            U("next"),
        ],
        [U("q"), A(txt("searching")), U("next")],
        "anthropic.unexpected_server_result",
        1,
        ("srvtoolu_9",),
        "messages.1.content.1: unexpected `tool_use_id` found in `web_search_tool_result` "
        "blocks: srvtoolu_9. Each `web_search_tool_result` block must have a corresponding "
        "`server_tool_use` block before it.",
    ),
]

# --- Moonshot (Kimi): thinking's reasoning_content on every tool-call message ---------
KIMI_CALL = "functions.weather:0"
CASES += [
    Case(
        "K1 Kimi K2.6: thinking on by default, reasoning_content passed back",
        "moonshot",
        {"model": "kimi-k2.6", "messages": [OS(), OU("q"), OA(call(KIMI_CALL)), OT(KIMI_CALL)]},
        {
            "model": "kimi-k2.6",
            "messages": [
                OS(),
                OU("q"),
                {**OA(call(KIMI_CALL)), "reasoning_content": "hm"},
                OT(KIMI_CALL),
            ],
        },
        "moonshot.missing_reasoning_content",
        2,
        (KIMI_CALL,),
        "thinking is enabled but reasoning_content is missing in assistant tool call message at "
        "index 2",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.provider}:{c.rule}")
def test_rejected(case: Case) -> None:
    found = [
        v for v in toolpair.validate(case.bad, case.provider, **case.ctx) if v.code == case.code
    ]
    assert found, toolpair.validate(case.bad, case.provider, **case.ctx)
    v = found[0]
    assert (v.message, v.index, v.ids) == (case.message, case.index, case.ids)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.provider}:{c.rule}")
def test_accepted_twin(case: Case) -> None:
    assert toolpair.validate(case.good, case.provider, **case.ctx) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.provider}:{c.rule}")
def test_repair_for_the_same_model(case: Case) -> None:
    """Repair leaves the accepted twin alone (the same objects, no fix) and makes the
    rejected fixture valid for the same model, or says what it could not."""
    model = case.ctx.get("model")
    good = toolpair.repair(case.good, case.provider, model=model)
    assert good.fixes == []
    raw = case.good["messages"] if isinstance(case.good, dict) else case.good
    out = good.messages["messages"] if isinstance(good.messages, dict) else good.messages
    assert all(a is b for a, b in zip(out, raw, strict=True))
    before = copy.deepcopy(case.bad)
    bad = toolpair.repair(case.bad, case.provider, model=model)
    assert case.bad == before
    left = toolpair.validate(bad.messages, case.provider, model=model)
    if bad.unrepaired:
        assert {f.detail.split("]")[0][1:] for f in bad.unrepaired} == {v.code for v in left}
    else:
        assert left == []
        assert toolpair.repair(bad.messages, case.provider, model=model).fixes == []


# --------------------------------------------------------------------------- model ids


@pytest.mark.parametrize(
    ("model", "found", "family"),
    [
        (SONNET4, "anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-4"),
        ("global.anthropic.claude-opus-4-1-20250805-v1:0", None, "claude-4"),
        (HAIKU35, None, "claude-3"),
        ("anthropic.claude-3-haiku-20240307-v1:0", None, "claude-3"),
        ("anthropic.claude-v2:1", None, "claude-3"),
        ("apac.amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0", "nova"),
        ("us-gov.meta.llama3-2-90b-instruct-v1:0", "meta.llama3-2-90b-instruct-v1:0", "llama"),
        ("mistral.mistral-large-2402-v1:0", None, "mistral"),
        ("us.mistral.pixtral-large-2502-v1:0", "mistral.pixtral-large-2502-v1:0", "mistral"),
        ("mistral.ministral-3-8b-instruct-v1:0", None, "ministral"),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "claude-3",
        ),
        (
            "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.meta.llama3-2-3b-instruct-v1:0",
            "meta.llama3-2-3b-instruct-v1:0",
            "llama",
        ),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3", "", None),
        ("cohere.command-r-plus-v1:0", None, None),
        ("bedrock/converse/us.meta.llama3-3-70b-instruct-v1:0", None, "llama"),
        ("bedrock/anthropic.claude-3-7-sonnet-20250219-v1:0", None, "claude-3"),
        ("no-dots-at-all", None, None),
    ],
)
def test_bedrock_model_ids_as_users_write_them(model: str, found: str | None, family: Any) -> None:
    if found == "":
        assert bedrock_model(model) is None
    elif found is not None:
        assert bedrock_model(model) == found
    assert bedrock_family(model) == family


def test_anthropic_whitespace_text_beside_tool_use_for_a_named_model() -> None:
    # claude-haiku-4-5 answered 200 to a text of one space beside two tool_use blocks.
    h = [
        U(txt("q")),
        A(txt(" "), tu("toolu_1"), tu("toolu_2")),
        U(tr("toolu_1"), tr("toolu_2")),
    ]
    assert toolpair.validate(h, "anthropic", model="claude-haiku-4-5-20251001") == []
    r = toolpair.repair(h, "anthropic", model="claude-haiku-4-5-20251001")
    assert r.fixes == [] and all(x is y for x, y in zip(r.messages, h, strict=True))
    # Without a model the strict set still reports it; alone in its message, so does the
    # named model.
    (v,) = toolpair.validate(h, "anthropic")
    assert (v.code, v.index, v.message) == (
        "anthropic.empty_text",
        1,
        "messages: text content blocks must contain non-whitespace text",
    )
    alone = [U(txt("q")), A(txt(" ")), U(txt("and?"))]
    (w,) = toolpair.validate(alone, "anthropic", model="claude-haiku-4-5-20251001")
    assert (w.code, w.index) == ("anthropic.empty_text", 1)


def test_kimi_on_bedrock_is_not_the_strict_set() -> None:
    # The recorded 200: text beside a toolUse whose id has `.` and `:`.
    h = [
        BU(b_txt("q")),
        BA(b_txt("checking"), b_use("functions.get_temperature:0")),
        BU(b_res("functions.get_temperature:0", status="success")),
    ]
    assert bedrock_family(KIMI) == bedrock_family("moonshotai.kimi-k2.5") == "kimi"
    assert toolpair.validate(h, "bedrock", model=KIMI) == []
    r = toolpair.repair(h, "bedrock", model=KIMI)
    assert r.fixes == [] and all(a is b for a, b in zip(r.messages, h, strict=True))
    # Without a model the strict set still splits the turn and rewrites both ids.
    codes = sorted(v.code for v in toolpair.validate(h, "bedrock"))
    assert codes == [
        "bedrock.invalid_tool_use_id",
        "bedrock.invalid_tool_use_id",
        "bedrock.mixed_tool_use_turn",
    ]


def test_claude_behind_converse_words_a_turn_with_no_result_as_anthropic() -> None:
    # A result turn with none of the results gets through Converse's check; the model
    # answers in Anthropic's words, naming the call turn (the Case above); one holding
    # some of them is Converse's to refuse, naming the answering turn.
    h = [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_res("t1"))]
    (v,) = toolpair.validate(h, "bedrock", model=SONNET46)
    assert (v.index, v.ids, v.path) == (2, ("t2",), "messages.2.content")
    h2 = [BU(b_txt("q")), BA(b_use("t1"), b_use("t2")), BU(b_txt("never mind"))]
    (v2,) = toolpair.validate(h2, "bedrock", model=SONNET46)
    assert (v2.index, v2.ids) == (1, ("t1", "t2"))
    assert v2.message.startswith("The model returned the following errors: messages.1: ")


def test_fc_item_without_reasoning_is_not_decidable_for_a_named_model() -> None:
    # The recorded gpt-5 200: an fc_ item with no reasoning before it, its output, a user
    # turn. Without a model the strict set still reports it and repair drops the id.
    h = [RU("q"), fc("call_1", "fc_1"), fco("call_1"), RU("thanks")]
    assert toolpair.validate(h, "openai-responses", model="gpt-5") == []
    r = toolpair.repair(h, "openai-responses", model="gpt-5")
    assert r.fixes == [] and all(a is b for a, b in zip(r.messages, h, strict=True))
    (v,) = toolpair.validate(h, "openai-responses")
    assert v.code == "openai-responses.call_without_reasoning"
    assert (v.index, v.ids) == (1, ("fc_1", "call_1"))


def test_unplaceable_ids_keep_the_strict_profile() -> None:
    for provider, model in [
        ("bedrock", "arn:aws:bedrock:us-east-1:1:application-inference-profile/x"),
        ("bedrock", "writer.palmyra-x5-v1:0"),
        ("openai-responses", "my-fine-tune"),
        ("gemini", "some-future-model"),
    ]:
        assert get_profile(provider, model) is get_profile(provider)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gemini-3-pro-preview", "gemini-3"),
        ("models/gemini-3-flash", "gemini-3"),
        ("publishers/google/models/gemini-3-pro", "gemini-3"),
        ("gemini-3-pro-image-preview", None),
        ("gemini-2.5-flash", "gemini-2.5"),
        ("gemini-2.0-flash", None),
        ("gemini-flash-latest", None),  # an alias that moves: the strict profile
        ("vertex_ai/gemini-3-pro-preview", "gemini-3"),
    ],
)
def test_gemini_model_ids(model: str, family: str | None) -> None:
    assert gemini_family(model) == family


@pytest.mark.parametrize(
    ("model", "flagged"),
    [
        (None, True),
        ("o3", False),
        ("gpt-5-mini-2025-08-07", False),
        ("openai/gpt-5", False),
        ("gpt-4.1", False),
        ("gpt-4o-2024-08-06", False),
        ("gpt-4o-mini", False),
        ("chatgpt-4o-latest", False),
        ("o4-mini-2025-04-16", False),
    ],
)
def test_only_the_strict_set_ties_fc_items_to_reasoning(model: str | None, flagged: bool) -> None:
    # gpt-5 took an fc_ item with no reasoning before it (an item a non-reasoning response
    # made): whether the server ties an fc_ item to reasoning is stored state, so a named
    # model toolpair can place is not held to it; an id it cannot place keeps it.
    h = [RU("q"), fc("call_1", "fc_1"), fco("call_1")]
    codes = [v.code for v in toolpair.validate(h, "openai-responses", model=model)]
    assert codes == (["openai-responses.call_without_reasoning"] if flagged else [])


# --------------------------------------------------------------------------- repairs


def test_an_unplaced_model_keeps_the_strict_fc_rule() -> None:
    h = [RU("q"), fc("c1", "fc_1"), fco("c1")]
    (v,) = toolpair.validate(h, "openai-responses", model="my-fine-tune")
    assert (v.code, v.index, v.ids) == (
        "openai-responses.call_without_reasoning",
        1,
        ("fc_1", "c1"),
    )
    # Bedrock's OpenAI-compatible endpoint writes OpenAI's ids with a vendor prefix.
    assert toolpair.validate(h, "openai-responses", model="openai.gpt-5.6-luna") == []


def test_fc_item_id_dropped_and_call_kept() -> None:
    h = [RU("q"), fc("call_1", "fc_1"), fco("call_1")]
    r = toolpair.repair(h, "openai-responses")
    assert r.messages[1] == fc("call_1") and r.messages[2] is h[2]
    assert [(f.kind, f.ids) for f in r.fixes] == [("item_id_dropped", ("call_1",))]


def test_idless_message_moves_in_front_of_the_reasoning() -> None:
    h = [RU("q"), rs("rs_1"), RA("let me check"), fc("c1", "fc_1"), fco("c1")]
    r = toolpair.repair(h, "openai-responses")
    assert r.messages == [h[0], h[2], h[1], h[3], h[4]]
    assert all(a is b for a, b in zip(r.messages, [h[0], h[2], h[1], h[3], h[4]], strict=True))
    assert toolpair.validate(r.messages, "openai-responses") == []


def test_responses_input_opening_with_messages_is_read_as_responses() -> None:
    h = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": "q"},
        rs("rs_1"),
        fc("c1", "fc_1"),
        fco("c1"),
    ]
    for provider in (None, "openai-responses"):
        assert toolpair.validate(h, provider or "openai-responses") == []
    assert toolpair.repair(h, "openai-responses").fixes == []


def test_gemini3_unsigned_call_gets_the_bypass_signature() -> None:
    h = [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"))]
    assert toolpair.validate(h, "gemini") == []  # unknown model: today's rules
    assert toolpair.validate(h, "gemini", model="gemini-2.0-flash") == []
    r = toolpair.repair(h, "gemini", model="gemini-3-pro-preview")
    assert r.messages[1]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
    assert [f.kind for f in r.fixes] == ["signature_bypassed"]
    assert toolpair.validate(r.messages, "gemini", model="gemini-3-pro-preview") == []


def test_gemini25_takes_an_unsigned_call_after_a_signed_round() -> None:
    # gemini-2.5-flash answered 200 to this shape (a signed first round, an unsigned
    # second): the thread reports of a 400 on 2.5 lose against the recording.
    unsigned = [GU(g_txt("q")), GM(g_call("a")), GU(g_res("a"))]
    assert toolpair.validate(unsigned, "gemini", model="gemini-2.5-flash") == []
    issued = [
        GU(g_txt("q")),
        GM(g_call("a", sig="s1")),
        GU(g_res("a")),
        GM(g_call("b")),
        GU(g_res("b")),
    ]
    assert toolpair.validate(issued, "gemini", model="gemini-2.5-flash") == []
    r = toolpair.repair(issued, "gemini", model="gemini-2.5-flash")
    assert r.fixes == [] and all(a is b for a, b in zip(r.messages, issued, strict=True))
    # Gemini 3 holds the same history to it.
    codes = [v.code for v in toolpair.validate(issued, "gemini", model="gemini-3-pro-preview")]
    assert codes == ["gemini.missing_thought_signature"]


def test_gemini25_takes_responses_split_across_consecutive_turns() -> None:
    split = [GU(g_txt("q")), GM(g_call("a"), g_call("b")), GU(g_res("a")), GU(g_res("b"))]
    assert toolpair.validate(split, "gemini", model="gemini-2.5-flash") == []
    r = toolpair.repair(split, "gemini", model="gemini-2.5-flash")
    assert r.fixes == [] and all(x is y for x, y in zip(r.messages, split, strict=True))
    # The strict set (and Vertex) still want them in one turn; a response still missing
    # after the split is refused on 2.5 too.
    (v, w) = toolpair.validate(split, "gemini")
    assert (v.code, v.index, v.ids, v.message) == (
        "gemini.response_count",
        2,
        ("a", "b"),
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
    )
    assert (w.code, w.index) == ("gemini.unexpected_response", 3)
    short = [GU(g_txt("q")), GM(g_call("a"), g_call("b"), g_call("c")), *split[2:]]
    codes = [v.code for v in toolpair.validate(short, "gemini", model="gemini-2.5-flash")]
    assert codes == ["gemini.response_count"]


def test_a_response_named_otherwise_than_its_call_is_taken() -> None:
    # Without ids Gemini pairs by place; a response whose name differs was taken. A
    # response too few is still refused (G2).
    h = [GU(g_txt("q")), GM(g_call("get_weather")), GU(g_res("weather"))]
    assert toolpair.validate(h, "gemini") == []
    assert toolpair.repair(h, "gemini").fixes == []
    bad = [GU(g_txt("q")), GM(g_call("get_weather"), g_call("b")), GU(g_res("weather"))]
    (v,) = toolpair.validate(bad, "gemini")
    assert (v.code, v.index, v.ids) == ("gemini.response_count", 2, ("get_weather", "b"))


def test_vertex_repair_strips_ids_and_separates_text() -> None:
    h = [GU(g_txt("q")), GM(g_call("a", "i1")), GU(g_res("a", "i1"), g_txt("and?"))]
    r = toolpair.repair(h, "vertex")
    assert toolpair.validate(r.messages, "vertex") == []
    assert "id" not in r.messages[1]["parts"][0]["functionCall"]
    assert "and?" in str(r.messages[-1])
    assert {f.kind for f in r.fixes} >= {"id_removed", "bridge_inserted"}
    # The same history is fine for the Gemini API.
    assert toolpair.validate(h, "gemini") == []


def test_bedrock_text_beside_tool_use_split_only_where_refused() -> None:
    h = [BU(b_txt("q")), BA(b_txt("let me look"), b_use("t1")), BU(b_res("t1"))]
    assert toolpair.repair(h, "bedrock", model=SONNET4).fixes == []
    r = toolpair.repair(h, "bedrock", model=LLAMA)
    assert r.messages == [
        h[0],
        BA(b_txt("let me look")),
        BU(b_txt("(conversation continues)")),
        BA(b_use("t1")),
        h[2],
    ]
    assert toolpair.validate(r.messages, "bedrock") == []


def test_bedrock_claude4_and_nova_take_text_in_the_result_turn() -> None:
    h = [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"), b_txt("and the weather?"))]
    for model in (SONNET4, NOVA):
        assert toolpair.validate(h, "bedrock", model=model) == []
    video = {"video": {"format": "mp4", "source": {"bytes": "AA=="}}}
    with_video = [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"), video)]
    assert [v.code for v in toolpair.validate(with_video, "bedrock", model=SONNET4)] == [
        "bedrock.mixed_result_turn"
    ]
    assert toolpair.validate(with_video, "bedrock", model=NOVA) == []


def test_nova_server_tool_answered_inside_the_assistant_turn() -> None:
    inline = BA(b_use("srv1", "nova_code_interpreter"), b_res("srv1", "42"), b_txt("It is 42."))
    h = [BU(b_txt("q")), inline, BU(b_txt("thanks"))]
    assert toolpair.validate(h, "bedrock", model=NOVA) == []
    assert toolpair.repair(h, "bedrock", model=NOVA).fixes == []
    assert toolpair.validate(h, "bedrock") != []  # elsewhere the result is misplaced


def test_model_reaches_compaction_and_check() -> None:
    h = [RU("q"), fc("call_1", "fc_1"), fco("call_1")]
    toolpair.check(h, "openai-responses", model="gpt-4.1")
    with pytest.raises(toolpair.HistoryError):
        toolpair.check(h, "openai-responses", model=None)
    kept = toolpair.trim(h, 10_000, provider="openai-responses", model="gpt-4.1")
    assert kept.fixes == [] and kept.messages == h
    stripped = toolpair.trim(h, 10_000, provider="openai-responses", model=None)
    assert [f.kind for f in stripped.fixes] == ["item_id_dropped"]
    pruned = toolpair.prune(h, provider="openai-responses", model=None)
    assert [f.kind for f in pruned.fixes] == ["item_id_dropped"]


@pytest.mark.parametrize("orphans", ["drop", "text"])
def test_orphan_results_without_ids_are_dropped_or_kept_as_text(orphans: str) -> None:
    policy = toolpair.Policy(orphans=orphans)  # type: ignore[arg-type]
    cases = [
        ("anthropic", [U("q"), A(tu("toolu_1")), U(tr("toolu_1"), _no_id_anthropic())]),
        ("openai", [OU("q"), OA(call("c1")), OT("c1"), {"role": "tool", "content": "x"}]),
        (
            "openai-responses",
            [RU("q"), fc("c1"), fco("c1"), {"type": "function_call_output", "output": "x"}],
        ),
        (
            "anthropic",
            [
                U("q"),
                A(txt("hm"), {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_9"}),
                U("next"),
            ],
        ),
    ]
    for provider, h in cases:
        r = toolpair.repair(h, provider, policy=policy)
        assert toolpair.validate(r.messages, provider) == [], (provider, r.messages)
        kind = "orphan_result_dropped" if orphans == "drop" else "orphan_result_as_text"
        assert [f.kind for f in r.fixes if f.kind.startswith("orphan")] == [kind]
        assert not r.unrepaired
        dump = str(r.messages)
        assert ("its call is not in this history" in dump) == (orphans == "text")


def _thinking_body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [U("q"), A(tu("toolu_1")), U(tr("toolu_1"))],
        **extra,
    }


def test_thinking_turned_off_for_a_body_whose_loop_has_no_thinking() -> None:
    body = _thinking_body()
    assert [v.code for v in toolpair.validate(body, "anthropic")] == [
        "anthropic.thinking_not_first"
    ]
    r = toolpair.repair(body, "anthropic")
    assert "thinking" not in r.messages and "thinking" in body
    assert r.messages["messages"] is not body["messages"]
    assert all(a is b for a, b in zip(r.messages["messages"], body["messages"], strict=True))
    assert [f.kind for f in r.fixes] == ["thinking_disabled"]
    assert toolpair.validate(r.messages, "anthropic") == []
    assert toolpair.repair(r.messages, "anthropic").fixes == []


def test_thinking_kept_on_when_the_policy_refuses_or_for_a_bare_list() -> None:
    body = _thinking_body()
    r = toolpair.repair(body, "anthropic", policy=toolpair.Policy(disable_thinking=False))
    assert r.messages["thinking"] == body["thinking"]
    assert [f.kind for f in r.fixes] == ["unrepaired"]
    bare = toolpair.repair(body["messages"], "anthropic", thinking=True)
    assert [f.kind for f in bare.fixes] == ["unrepaired"]


def test_thinking_turned_off_on_bedrock_for_claude() -> None:
    body = {
        "modelId": SONNET4,
        "toolConfig": {"tools": []},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
        "messages": [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1"))],
    }
    r = toolpair.repair(body, "bedrock")
    assert r.messages["additionalModelRequestFields"] == {}
    assert [f.kind for f in r.fixes] == ["thinking_disabled"]
    assert toolpair.validate(r.messages, "bedrock") == []


def test_text_beside_calls_split_past_a_system_item_and_idempotent() -> None:
    h = [
        RU("q"),
        RA("hi", "msg_1"),
        {"role": "system", "content": "be brief"},
        fc("abc123XYZ"),
        fco("abc123XYZ"),
    ]
    r = toolpair.repair(h, "portable")
    assert toolpair.validate(r.messages, "portable") == []
    assert toolpair.repair(r.messages, "portable").fixes == []


def test_anthropic_system_role_message_passes_through() -> None:
    # Claude Code 2.1 puts system-role messages inside ``messages``.
    note = {"role": "system", "content": "note"}
    h = [U("q"), note, A(tu("toolu_1")), U(tr("toolu_1"))]
    assert toolpair.validate(h, "anthropic") == []
    r = toolpair.repair([U("q"), note, A(tu("toolu_1")), U("hi")], "anthropic")
    assert r.messages[1] is note and [f.kind for f in r.fixes] == ["synthetic_result"]


def test_a_conversation_holds_the_calls_its_outputs_answer() -> None:
    # A Responses body with `conversation` (the server holds the earlier items) may send
    # an output alone, as with previous_response_id; without either it is an orphan.
    out = fco("call_1")
    body = {"model": "gpt-4.1", "conversation": "conv_1", "input": [out]}
    assert toolpair.validate(body, "openai-responses") == []
    r = toolpair.repair(body, "openai-responses")
    assert r.fixes == [] and r.messages["input"][0] is out
    (v,) = toolpair.validate({"model": "gpt-4.1", "input": [out]}, "openai-responses")
    assert (v.code, v.index, v.ids, v.message) == (
        "openai-responses.orphan_output",
        0,
        ("call_1",),
        "No tool call found for function call output with call_id call_1.",
    )
    assert toolpair.validate({**body, "conversation": {"id": "conv_1"}}, "openai-responses") == []


def test_vertex_ids_held_only_without_a_model() -> None:
    # v1 refuses `id` on function calls, v1beta1 takes it (a recorded 200 on
    # gemini-3-flash-preview); the version is in the URL, so a named model is not held.
    h = [GU(g_txt("q")), GM(g_call("a", "i1", sig="s1")), GU(g_res("a", "i1"))]
    assert toolpair.validate(h, "vertex", model="gemini-3-flash-preview") == []
    found = [(v.code, v.index, v.ids) for v in toolpair.validate(h, "vertex")]
    assert found == [
        ("vertex.unknown_id_field", 1, ("i1",)),
        ("vertex.unknown_id_field", 2, ("i1",)),
    ]


def test_claude_46_converse_refusal_and_its_twin_as_recorded() -> None:
    # The recorded bodies (anomalyco/opencode@317768a7, MIT; see tests/recorded): the
    # refusal names the answering turn in Converse's words; its twin, both results and
    # the same text beside them, was accepted.
    import json
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "recorded" / "bedrock"
    stem = "bedrock-recovery__{}__0.json"
    bad = json.loads(
        (here / stem.format("rejects-continuation-with-a-missing-parallel-tool-result")).read_text()
    )
    good = json.loads(
        (here / stem.format("accepts-settled-parallel-tools-followed-by-continuation")).read_text()
    )
    (v,) = toolpair.validate(bad["body"], "bedrock", model=bad["model"])
    assert (v.code, v.index, v.ids, v.message) == (
        "bedrock.missing_result",
        2,
        ("call_time",),
        bad["error"],
    )
    assert toolpair.validate(good["body"], "bedrock", model=good["model"]) == []
