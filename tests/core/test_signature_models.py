"""G8: a Gemini thought signature is bound to the model that produced it. Where the
caller says which model produced each signature (``signature_models=``), a signature of
another version or tier in the current turn is reported on the Gemini API, and repair
puts the documented skip value in its place; older turns, Vertex AI, Gemini 2.5 and
models that cannot be placed are left alone."""

from __future__ import annotations

import copy
from typing import Any

import toolpair
from toolpair.providers.gemini import SKIP_SIGNATURE, generation

from .wire import GM, GU, g_call, g_res, g_txt

NEW, OLD = "c2lnLTMuNg", "c2lnLTMuNQ"
MADE_BY = {NEW: "gemini-3.6-flash", OLD: "gemini-3.5-flash"}


def body(*contents: Any) -> dict[str, Any]:
    return {"model": "gemini-3.5-flash", "contents": list(contents)}


CURRENT = body(GU(g_txt("q")), GM(g_call(sig=NEW)), GU(g_res()))
OLDER = body(
    GU(g_txt("q")),
    GM(g_call(sig=NEW)),
    GU(g_res()),
    GM(g_txt("done")),
    GU(g_txt("next")),
    GM(g_call(sig=OLD)),
    GU(g_res()),
)


def codes(history: Any, provider: str = "gemini", **kw: Any) -> list[str]:
    return [v.code for v in toolpair.validate(history, provider, **kw)]


def test_generation_is_version_and_tier() -> None:
    assert generation("models/gemini-3.5-flash-lite-preview") == ("3.5", "flash-lite")
    assert generation("gemini-3-pro-preview") == ("3", "pro")
    assert generation("gemini-flash-latest") is None


def test_a_signature_of_another_model_in_the_current_turn_is_reported() -> None:
    assert codes(CURRENT, signature_models=MADE_BY) == ["gemini.foreign_thought_signature"]
    # Another tier of the same version is another model too.
    other_tier = {NEW: "gemini-3.5-pro"}
    assert codes(CURRENT, signature_models=other_tier) == ["gemini.foreign_thought_signature"]


def test_nothing_is_said_without_knowing_both_models() -> None:
    assert codes(CURRENT) == []  # no record of who produced it
    assert codes(CURRENT, signature_models={NEW: "gemini-flash-latest"}) == []
    aliased = {**CURRENT, "model": "gemini-flash-latest"}
    assert codes(aliased, signature_models=MADE_BY) == []
    no_model = CURRENT["contents"]
    assert codes(no_model, signature_models=MADE_BY) == []


def test_older_turns_vertex_and_gemini_25_are_not_held_to_it() -> None:
    # Only the current turn is validated: the older turn's signature stays as sent.
    assert codes(OLDER, signature_models=MADE_BY) == []
    # Vertex documents that it takes the request (and leaves the thoughts out).
    assert codes(CURRENT, "vertex", signature_models=MADE_BY) == []
    # No refusal is known for Gemini 2.5: the named-model policy withholds the rule.
    g25 = {**CURRENT, "model": "gemini-2.5-flash-lite"}
    assert codes(g25, signature_models={NEW: "gemini-2.5-flash"}) == []
    held = toolpair.rules.withheld("gemini", "gemini-2.5-flash-lite")
    assert "gemini.foreign_thought_signature" in {r.code for r in held}


def test_repair_puts_the_skip_value_in_the_current_turn_only() -> None:
    history = body(*OLDER["contents"][:5], GM(g_call(sig=NEW)), GU(g_res()))
    before = copy.deepcopy(history)
    result = toolpair.repair(history, "gemini", signature_models=MADE_BY)
    assert history == before
    out = result.messages["contents"]
    assert out[5]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert out[5]["parts"][0]["functionCall"] == history["contents"][5]["parts"][0]["functionCall"]
    # The older turn keeps its own signature; untouched contents are the same objects.
    assert out[1] is history["contents"][1]
    assert all(out[k] is history["contents"][k] for k in (0, 2, 3, 4, 6))
    assert [f.kind for f in result.fixes] == ["signature_bypassed"]
    assert toolpair.validate(result.messages, "gemini", signature_models=MADE_BY) == []
    again = toolpair.repair(result.messages, "gemini", signature_models=MADE_BY)
    assert again.fixes == [] and again.messages["contents"] == out


UNSIGNED = [GU(g_txt("q")), GM(g_call()), GU(g_res())]


def test_gemini_25_flash_lite_needs_its_signatures_since_2026_05() -> None:
    # Mirrowel/LLM-API-Key-Proxy#160: refused unsigned from 2026-05-29; the rest of
    # Gemini 2.5 took an unsigned call (simonw/llm-gemini's recording).
    lite = toolpair.validate(UNSIGNED, "gemini", model="gemini-2.5-flash-lite")
    assert [(v.code, v.index, v.ids) for v in lite] == [
        ("gemini.missing_thought_signature", 1, ("weather",))
    ]
    assert toolpair.validate(UNSIGNED, "gemini", model="gemini-2.5-flash") == []
    assert toolpair.validate(UNSIGNED, "vertex", model="gemini-2.5-flash-lite") == []
    fixed = toolpair.repair(UNSIGNED, "gemini", model="gemini-2.5-flash-lite")
    assert fixed.messages[1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert fixed.messages[0] is UNSIGNED[0] and fixed.messages[2] is UNSIGNED[2]
