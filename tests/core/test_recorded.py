"""toolpair held to recorded provider exchanges (``tests/recorded``, see its README).

Every case is a real request body a provider answered, with that answer. validate must
agree with it (an accepted body has no violation; a refused one has a violation of the
error's family at the index the error names), and repair must leave an accepted body
untouched and make a refused one valid. Cases the request alone cannot decide (server
state, media support) are kept and named, but left out of the agreement figure.
"""

from __future__ import annotations

import re

from tests.support.recorded import CORPUS, cases, figures, verdicts

PROVIDERS = {
    "anthropic",
    "bedrock",
    "openai",
    "openai-responses",
    "gemini",
    "vertex",
    "mistral",
    "deepseek",
    "deepseek-responses",
}
AGREEMENT = 0.97


def test_every_case_names_its_source_and_answer() -> None:
    all_cases = cases()
    assert len(all_cases) >= 150
    for name, case in all_cases:
        src = case["source"]
        assert src["kind"] in ("recording", "thread"), name
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", src["repo"]), name
        if src["kind"] == "recording":
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]), name
        else:  # a thread has no commit: its address says where the array and error are
            assert src["url"].startswith("https://github.com/"), name
        assert src["path"] and src["licence"], name
        assert case["provider"] in PROVIDERS, name
        assert name.split("/")[0] == case["provider"], name
        assert isinstance(case["status"], int), name
        assert case["host"] and isinstance(case["body"], dict), name
        if case["status"] >= 400:
            assert case["error"], name
            if case.get("decidable", True):
                assert case["expect"]["family"], name
                assert isinstance(case["expect"].get("index"), int), name
            else:
                assert case["why"], name


def test_every_provider_is_recorded_accepted() -> None:
    seen = {case["provider"] for _, case in cases() if case["status"] < 400}
    assert seen == PROVIDERS


def test_validate_agrees_with_the_recorded_answers() -> None:
    f = figures()
    wrong = [v.name for v in verdicts() if v.decidable and not v.agrees]
    assert f.share >= AGREEMENT, (
        f"{f.line()}; see {CORPUS / 'DISAGREEMENTS.md'}; first: {wrong[:10]}"
    )


def test_repair_leaves_every_accepted_body_untouched() -> None:
    changed = [(v.name, v.fixes) for v in verdicts() if v.decidable and v.accepted and v.changed]
    assert not changed, f"{len(changed)} accepted bodies changed; first: {changed[:5]}"


def test_repair_makes_every_refused_body_valid() -> None:
    left = [
        (v.name, v.left, v.error)
        for v in verdicts()
        if v.decidable and not v.accepted and not v.repaired_valid
    ]
    assert not left, f"{len(left)} refused bodies still invalid after repair: {left[:5]}"
