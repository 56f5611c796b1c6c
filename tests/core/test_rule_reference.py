"""The rule reference that ships with the project says what the code checks: every code a
profile can report has an entry (its text the very constant the profile reports), every
entry is reported somewhere, and docs/rules.md is what the table generates."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolpair
from toolpair import rules
from toolpair.cli import main
from toolpair.providers import PROFILES, get_profile

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS_SRC = Path(rules.__file__).parent / "providers"


def _codes_in_source() -> set[str]:
    found: set[str] = set()
    for path in PROVIDERS_SRC.glob("*.py"):
        src = path.read_text()
        found.update(re.findall(r'"((?:[a-z-]+)\.[a-z_]+)"', src))
        # Codes built from a profile's name, or wrapped from Anthropic's H1 rule.
        for tail in re.findall(r'f"\{self\.name\}\.([a-z_]+)"', src):
            found.update({f"gemini.{tail}", f"vertex.{tail}"})
        for prefix in re.findall(r'"([a-z]+)\." \+ v\.code', src):
            found.add(f"{prefix}.thinking_not_first")
    providers = {*toolpair.PROVIDERS}
    return {c for c in found if c.split(".")[0] in providers and not c.endswith("_")}


def test_every_reported_code_has_an_entry_and_every_entry_is_reported() -> None:
    in_source = _codes_in_source()
    in_table = {r.code for r in rules.RULES}
    assert in_source - in_table == set()
    assert in_table - in_source == set()


def test_each_code_reported_by_a_profile_is_listed_for_it() -> None:
    # What a profile reports on real fixtures appears in `toolpair rules` for it.
    from test_models import CASES as MODEL_CASES
    from test_rules import CASES

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
