"""Do no harm for a named model (docs/rules.md, "Named models"): no rule fires for a
named model without the evidence the policy asks, and repair changes nothing that only a
withheld rule would flag. Without a model the strict set stays."""

from __future__ import annotations

import re
from typing import Any

import pytest

import toolpair
from toolpair import rules
from toolpair.providers import PROFILES, model_families

from .test_rules import CASES
from .wire import BA, BU, GM, GU, OA, OT, OU, b_res, b_txt, b_use, call, g_call, g_res, g_txt

#: Every placed family of every API, and ids no family holds (named, not placeable).
MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-3-5-sonnet-20241022", "claude-sonnet-4-5", "claude-opus-4-8", "x-1"),
    "bedrock": (
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "amazon.nova-pro-v1:0",
        "meta.llama3-3-70b-instruct-v1:0",
        "mistral.mistral-large-2407-v1:0",
        "mistral.ministral-3-8b-instruct-v1:0",
        "moonshot.kimi-k2-thinking",
        "cohere.command-r-plus-v1:0",
        "us.writer.palmyra-x4-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc",
    ),
    "openai": ("gpt-4o", "gpt-5-mini", "x-1"),
    "openai-responses": ("gpt-4.1", "gpt-5", "o4-mini", "openai.gpt-5.6-luna", "x-1"),
    "gemini": (
        "gemini-2.0-flash",
        "gemini-2.5-flash-lite",
        "gemini-flash-latest",
        "gemini-3-pro-preview",
        "gemini-3-pro-image-preview",
    ),
    "vertex": ("gemini-2.5-flash", "gemini-3-flash"),
    "mistral": ("mistral-large-latest", "magistral-medium-latest"),
    "deepseek": ("deepseek-chat", "deepseek-v4", "deepseek-reasoner"),
    "deepseek-responses": ("deepseek-v4-flash", "x-1"),
    "moonshot": ("kimi-k2.6", "kimi-k2-0905-preview", "x-1"),
    "zhipu": ("glm-5.2", "glm-4.5-air", "x-1"),
}


def test_every_api_is_enumerated() -> None:
    assert set(MODELS) == set(PROFILES) - {"portable"}


def grounded(rule: rules.Rule, families: tuple[str, ...]) -> bool:
    """The policy, read off the rule's own evidence: documented for every model, or
    observed refused for the family; never against a recorded acceptance of it."""
    accepted = [
        e
        for e in rule.seen
        if e.stance == "against" and e.kind == "acceptance" and not e.part and e.family
    ]
    if any(e.family in families for e in accepted):
        return False
    how = rule.basis or rule.status
    if how == "documented":
        return True
    if how == "observed":
        return not rule.families or bool(set(rule.families) & set(families))
    return False


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{[^}]*\\\}", ".*?", re.escape(text)), re.DOTALL)


def rule_of(provider: str, model: str, code: str, message: str) -> rules.Rule:
    same = [r for r in rules.rules_for(provider, model, every=True) if r.code == code]
    assert same, f"{provider}/{model}: {code} is in no rule of the model's profile"
    for r in same:
        if _pattern(r.text).fullmatch(message):
            return r
    assert len(same) == 1, (code, message)
    return same[0]


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_no_rule_is_held_for_a_named_model_without_its_evidence(provider: str) -> None:
    for model in MODELS[provider]:
        families = model_families(provider, model)
        held = {(r.code, r.text) for r in rules.rules_for(provider, model)}
        for rule in rules.rules_for(provider, model, every=True):
            assert ((rule.code, rule.text) in held) == grounded(rule, families), (
                provider,
                model,
                rule.code,
            )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.provider in MODELS], ids=lambda c: f"{c.provider}:{c.rule}"
)
def test_no_violation_for_a_named_model_without_its_evidence(case: Any) -> None:
    # Every rejected fixture, for every placed model of its API: whatever is reported
    # comes from a rule the evidence grants that model.
    ctx = {k: v for k, v in case.ctx.items() if k != "model"}
    for model in MODELS[case.provider]:
        families = model_families(case.provider, model)
        found = toolpair.validate(case.bad, case.provider, model=model, **ctx)
        for v in found:
            rule = rule_of(case.provider, model, v.code, v.message)
            assert grounded(rule, families), (model, v.code, v.message)
        repaired = toolpair.repair(case.bad, case.provider, model=model, **ctx)
        if not found:
            assert repaired.fixes == []


def test_without_a_model_the_strict_set_stays() -> None:
    for provider in MODELS:
        strict = rules.rules_for(provider)
        assert strict == rules.rules_for(provider, None, every=True)
    lone = [BU(b_txt("q")), BA(b_txt("let me look"), b_use("t1")), BU(b_res("t1"))]
    assert [v.code for v in toolpair.validate(lone, "bedrock")] == ["bedrock.mixed_tool_use_turn"]


def test_deepseek_takes_back_its_own_long_ids() -> None:
    own = "call_0_3d9c0e1f-5b7a-4c2e-9f1d-2a6b8c4e0f13"
    assert len(own) == 43
    h = [OU("q"), OA(call(own)), OT(own), OU("and?")]
    for model in (None, "deepseek-chat", "deepseek-v4"):
        assert toolpair.validate(h, "deepseek", model=model) == []
        assert toolpair.repair(h, "deepseek", model=model).fixes == []
    # OpenAI itself still refuses it.
    (v,) = toolpair.validate(h, "openai")
    assert v.code == "openai.id_too_long" and v.ids == (own,)


def test_a_model_of_an_unplaced_bedrock_family_keeps_its_text_beside_tool_use() -> None:
    cohere = "cohere.command-r-plus-v1:0"
    said = b_txt("let me look")
    turn = BA(said, b_use("t1"), b_use("t2"))
    h = [BU(b_txt("q")), turn, BU(b_res("t1"), b_res("t2"))]
    assert toolpair.validate(h, "bedrock", model=cohere) == []
    # Repair for another reason (a result lost) answers the call and leaves the text
    # where the model put it, the turn's other blocks in their order.
    broken = [BU(b_txt("q")), turn, BU(b_res("t1"))]
    out = toolpair.repair(broken, "bedrock", model=cohere)
    assert [f.kind for f in out.fixes if f.kind != "unrepaired"] == ["synthetic_result"]
    assert out.messages[1] is turn
    assert toolpair.validate(out.messages, "bedrock", model=cohere) == []
    # Without a model the strict set splits the text out.
    strict = toolpair.repair(broken, "bedrock")
    assert strict.messages[1] is not turn


def test_a_hosted_mistral_model_takes_a_user_message_after_a_tool_message() -> None:
    h = [OU("q"), OA(call("abcdefghi")), OT("abcdefghi"), OU("and now?")]
    assert toolpair.validate(h, "mistral", model="mistral-large-latest") == []
    assert toolpair.repair(h, "mistral", model="mistral-large-latest").fixes == []
    # mistral-common (what local servers run) refuses it: without a model it stays.
    assert [v.code for v in toolpair.validate(h, "mistral")] == ["mistral.unexpected_role"]


def test_claude_3_through_converse_takes_two_user_turns_in_a_row() -> None:
    # crewAI's recorded 200s (2026-01, 2026-02): a toolResult turn, then a user text turn.
    haiku = "anthropic.claude-3-haiku-20240307-v1:0"
    h = [BU(b_txt("q")), BA(b_use("t1")), BU(b_res("t1")), BU(b_txt("go on"))]
    assert toolpair.validate(h, "bedrock", model=haiku) == []
    assert toolpair.repair(h, "bedrock", model=haiku).fixes == []
    # No recording speaks for Claude 4, nor for a body with no model: the rule holds.
    for model in ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", None):
        codes = [v.code for v in toolpair.validate(h, "bedrock", model=model)]
        assert codes == ["bedrock.roles_not_alternating"], model


def test_gemini_3_on_the_gemini_api_takes_one_steps_calls_in_two_model_turns() -> None:
    # pydantic-ai's recorded 200s (2026-08): two call turns in a row, one response turn.
    skip = "skip_thought_signature_validator"
    h = [
        GU(g_txt("q")),
        GM(g_call("load", id="a1", sig="c2ln")),
        GM(g_call("search", id="a2", sig=skip)),
        GU(g_res("load", id="a1"), g_res("search", id="a2")),
    ]
    model = "gemini-3-flash-preview"
    assert toolpair.validate(h, "gemini", model=model) == []
    assert toolpair.repair(h, "gemini", model=model).fixes == []
    # A response still missing is still found, at the response turn.
    short = [*h[:3], GU(g_res("load", id="a1"))]
    assert [v.code for v in toolpair.validate(short, "gemini", model=model)] == [
        "gemini.response_count"
    ]
    # Vertex, and the Gemini API without a model, keep the strict reading.
    for provider, m in (("vertex", model), ("gemini", None)):
        codes = {v.code for v in toolpair.validate(h, provider, model=m)}
        assert "gemini.missing_response" in codes or "vertex.missing_response" in codes, m


def test_repair_for_another_reason_leaves_what_only_a_withheld_rule_flags() -> None:
    # Hosted Mistral: an id to rewrite, and a user message after the tool messages that
    # only mistral-common refuses. The named model gets no bridge; the strict set does.
    h = [OU("q"), OA(call("abcdefghi"), call("bad_id_123")), OT("abcdefghi"), OT("bad_id_123")]
    h.append(OU("and now?"))
    named = toolpair.repair(h, "mistral", model="mistral-large-latest")
    assert [f.kind for f in named.fixes] == ["id_rewritten"]
    assert named.messages[-1] is h[-1] and len(named.messages) == len(h)
    strict = toolpair.repair(h, "mistral")
    assert [f.kind for f in strict.fixes] == ["id_rewritten", "bridge_inserted"]
    # Vertex, Gemini 2.5: a lost response is answered; the text beside the other response
    # stays in its turn.
    turn = GU(g_res("a"), g_txt("and the news?"))
    v = [GU(g_txt("q")), GM(g_call("a"), g_call("b")), turn]
    out = toolpair.repair(v, "vertex", model="gemini-2.5-flash")
    assert [f.kind for f in out.fixes] == ["synthetic_result"]
    assert len(out.messages) == 3 and g_txt("and the news?") in out.messages[2]["parts"]
    assert toolpair.validate(out.messages, "vertex", model="gemini-2.5-flash") == []


def test_a_withheld_rule_is_shown_with_the_reason() -> None:
    page = rules.markdown()
    assert "## Named models: do no harm" in page
    held = {r.code for r in rules.rules_for("bedrock", "cohere.command-r-plus-v1:0")}
    assert "bedrock.mixed_tool_use_turn" not in held
    assert "bedrock.missing_result" in held
