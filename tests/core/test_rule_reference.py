"""The rule reference that ships with the project says what the code checks: the index is
the rule objects the provider modules define, every violation the rule fixtures raise is
one of them, every one of them is raised by a fixture, and docs/rules.md is what the
index generates."""

from __future__ import annotations

import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

import toolpair
from toolpair import rules
from toolpair._model import Violation
from toolpair.cli import main
from toolpair.providers import (
    PROFILES,
    anthropic,
    bedrock,
    deepseek,
    gemini,
    get_profile,
    mistral,
    moonshot,
    openai,
    responses,
    vertex,
    zhipu,
)

ROOT = Path(__file__).resolve().parents[2]
MODULES = (
    anthropic,
    bedrock,
    openai,
    responses,
    gemini,
    vertex,
    mistral,
    deepseek,
    moonshot,
    zhipu,
)


def _pattern(rule: rules.Rule) -> re.Pattern[str]:
    """What the rule's messages look like: its text with every parameter as a wildcard."""
    parts = (
        re.escape(literal) + ("" if name is None else ".*?")
        for literal, name, _, _ in string.Formatter().parse(rule.text)
    )
    return re.compile("".join(parts), re.DOTALL)


def _reported() -> list[tuple[str, str, Violation]]:
    """Every violation the rule fixtures raise: (the code the fixture is for, the
    provider, the violation)."""
    from .test_models import CASES as MODEL_CASES
    from .test_rules import CASES

    out = []
    for case in [*CASES, *MODEL_CASES]:
        model = case.ctx.get("model")
        if model is None and isinstance(case.bad, dict):
            model = case.bad.get("model")  # a body names its own model, as validate reads it
        ctx = {k: v for k, v in case.ctx.items() if k != "model"}
        for v in toolpair.validate(case.bad, case.provider, model=model, **ctx):
            out.append((case.code, case.provider, v))
    return out


def _registered() -> list[rules.Rule]:
    """Every rule as some profile reports it: the index, and each host's renamed copies."""
    out = list(rules.RULES)
    for provider in toolpair.PROVIDERS:
        out += rules.rules_for(provider, every=True)
    return out


def test_the_index_is_every_module_s_rules_each_once() -> None:
    assert tuple(r for m in MODULES for r in m.RULES) == rules.RULES
    assert len({id(r) for r in rules.RULES}) == len(rules.RULES)
    assert len({(r.code, r.text) for r in rules.RULES}) == len(rules.RULES)
    for m in MODULES:
        # A module defines the rules it reports under its own provider's (or host's) codes.
        assert {r.provider for r in m.RULES} <= set(toolpair.PROVIDERS), m.__name__


def test_every_reported_violation_is_a_registered_rule() -> None:
    # Run, not read: every violation the fixtures raise has its code and the wording of
    # a rule in the index (or a host's renamed copy of one).
    by_code: dict[str, list[re.Pattern[str]]] = {}
    for r in _registered():
        by_code.setdefault(r.code, []).append(_pattern(r))
    reported = _reported()
    assert reported
    for code, provider, v in reported:
        assert v.code in by_code, (code, provider, v.code)
        assert any(p.fullmatch(v.message) for p in by_code[v.code]), (code, v.message)


def test_every_rule_has_a_rejected_fixture_and_its_accepted_twin() -> None:
    # Each rule of the index is raised, in its own wording, by the rejected fixture of a
    # rule case (test_rules, or test_models for a rule only a named model's profile
    # checks), whose accepted twin that file holds valid; a host's renamed copy counts
    # for the rule it copies.
    raised = [(v.code, v.message) for code, _, v in _reported() if v.code == code]
    renames = {
        new: old for p in toolpair.PROVIDERS for old, new in get_profile(p).reports_as.items()
    }
    missing = []
    for rule in rules.RULES:
        pattern = _pattern(rule)
        codes = {rule.code} | {
            new + rule.code[len(old) :] for new, old in renames.items() if rule.code.startswith(old)
        }
        if not any(c in codes and pattern.fullmatch(m) for c, m in raised):
            missing.append((rule.code, rule.ref, rule.shown))
    assert missing == []


def test_each_code_reported_by_a_profile_is_listed_for_it() -> None:
    # What a profile reports on real fixtures appears in `toolpair rules` for it.
    from .test_models import CASES as MODEL_CASES
    from .test_rules import CASES

    for case in [*CASES, *MODEL_CASES]:
        model = case.ctx.get("model")
        if model is None and isinstance(case.bad, dict):
            model = case.bad.get("model")  # a body names its own model, as validate reads it
        listed = {r.code for r in rules.rules_for(case.provider, model)}
        ctx = {k: v for k, v in case.ctx.items() if k != "model"}
        for v in toolpair.validate(case.bad, case.provider, model=model, **ctx):
            assert v.code in listed, (case.rule, v.code)


def test_the_shipped_page_is_the_generated_one() -> None:
    assert (ROOT / "docs" / "rules.md").read_text() == rules.markdown()


def test_statuses_are_known_and_evidence_is_given() -> None:
    for r in rules.RULES:
        assert r.status in ("documented", "observed", "unverified")
        assert r.evidence and r.text and re.fullmatch(r"[A-Z]\d+", r.ref)


@pytest.mark.parametrize(
    ("args", "present", "absent"),
    [
        (["bedrock"], "bedrock.mixed_tool_use_turn", "anthropic."),
        (
            ["bedrock", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"],
            "TOOL_USE_RESULT_MISMATCH",
            "bedrock.mixed_tool_use_turn",
        ),
        (["openai-responses", "--model", "gpt-4.1"], "fc_ items stand alone", "R3_CALL"),
        (["deepseek"], "deepseek.missing_result", "openai.missing_result"),
        (["vertex"], "vertex.mixed_response_turn", "gemini.missing_thought_signature"),
    ],
)
def test_toolpair_rules_prints_what_applies(
    args: list[str], present: str, absent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", *args]) == 0
    out = capsys.readouterr().out
    assert present in out and absent not in out


def test_toolpair_rules_markdown_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--markdown"]) == 0
    assert capsys.readouterr().out == rules.markdown()
    assert main(["rules", "--model", "o3"]) == 2
    r = subprocess.run(
        [sys.executable, "-m", "toolpair", "rules", "nowhere"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_a_recorded_acceptance_against_a_rule_lifts_it_for_that_model() -> None:
    # For the model an acceptance was recorded on, the rule it contradicts is not in
    # that model's set (or, for evidence against a part, is there in the family's form);
    # without a model the strict set keeps it, since a refusal or report shows it.
    against = [(r, e) for r in rules.RULES for e in r.against if e.kind == "acceptance"]
    assert against
    for rule, e in against:
        assert e.model and e.source and e.stance == "against"
        # Evidence from a host that answers in a base API's words (DeepSeek) is judged
        # by that host's rules for the model.
        foreign = e.host in PROFILES and not rule.provider.startswith(e.host)
        where = e.host if foreign else rule.provider
        mine = {(x.code, x.text) for x in rules.rules_for(where, e.model)}
        assert ((rule.code, rule.text) in mine) == e.part, (rule.code, e.model)
        strict = {(x.code, x.text) for x in rules.rules_for(rule.provider)}
        family_only = rule.when is not None and not rule.when(get_profile(rule.provider))
        assert (rule.code, rule.text) in strict or family_only
        assert any(x.stance == "for" for x in rule.record)


def test_evidence_names_its_kind_and_stance() -> None:
    for r in rules.RULES:
        for e in r.record:
            assert e.kind in ("refusal", "acceptance", "thread", "docs")
            assert e.stance in ("for", "against") and e.source
