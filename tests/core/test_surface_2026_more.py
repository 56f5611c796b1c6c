"""The rest of the 2026 surface: Anthropic's API version 2026-10-21 (a header, so a
keyword here) and what repair does about its two history 400s; Moonshot's Kimi and
Zhipu's GLM as OpenAI-compatible hosts. (The rules' fixture pairs are in test_rules.py
and test_models.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolpair
from toolpair._model import Context
from toolpair.engine.fast import certainly_valid
from toolpair.formats import get_codec
from toolpair.gateway import wire
from toolpair.integrations._hosts import litellm_target, provider_at
from toolpair.providers import get_profile
from toolpair.rules import rules_for

from .test_rules import CITED, NOTE, PDF, V2026
from .test_surface_2026 import repaired
from .wire import OA, OS, OT, OU, A, U, call, tu, txt

# --------------------------------------------------------------------------- API 2026-10-21

DOC_IN_ASSISTANT = [U("q"), A(txt("here"), NOTE), U("thanks")]
CITED_USER = [U(CITED), A(txt("ok")), U("more")]


@pytest.mark.parametrize("history", [DOC_IN_ASSISTANT, CITED_USER])
def test_the_new_400s_hold_only_under_the_new_version(history: list[Any]) -> None:
    # The same body: refused under 2026-10-21 (and a later version), taken under
    # 2023-06-01 and where no version is known (a body never names one).
    assert toolpair.validate(history, "anthropic", **V2026) != []
    assert toolpair.validate(history, "anthropic", api_version="2027-01-15") != []
    assert toolpair.validate(history, "anthropic", api_version="2023-06-01") == []
    assert toolpair.validate(history, "anthropic") == []
    assert toolpair.repair(history, "anthropic", api_version="2023-06-01").fixes == []
    # A version that is not a date is not read as a newer one.
    assert toolpair.validate(history, "anthropic", api_version="latest") == []


def test_a_named_model_is_held_to_them_too() -> None:
    # Documented by the migration guide for every model behind the API.
    for model in ("claude-opus-4-8", "claude-3-5-haiku-20241022"):
        found = toolpair.validate(DOC_IN_ASSISTANT, "anthropic", model=model, **V2026)
        assert [v.code for v in found] == ["anthropic.document_in_assistant"]


def test_a_user_text_keeps_its_words_without_its_citations() -> None:
    out = repaired(CITED_USER, "anthropic", **V2026)
    assert out.messages[0]["content"] == [{"type": "text", "text": "as the notes say"}]
    assert out.messages[1] is CITED_USER[1] and out.messages[2] is CITED_USER[2]
    assert [(f.kind, f.index) for f in out.fixes] == [("citations_dropped", 0)]


def test_an_assistant_plain_text_document_becomes_its_text() -> None:
    out = repaired(DOC_IN_ASSISTANT, "anthropic", **V2026)
    assert out.messages[1]["content"] == [txt("here"), txt("n")]
    assert out.messages[0] is DOC_IN_ASSISTANT[0]
    assert [(f.kind, f.index) for f in out.fixes] == [("document_as_text", 1)]


def test_any_other_assistant_document_is_reported_not_moved_or_dropped() -> None:
    h = [U("q"), A(txt("here"), PDF), U("thanks")]
    out = toolpair.repair(h, "anthropic", **V2026)
    assert out.messages == h and out.messages[1] is h[1]
    assert [f.kind for f in out.fixes] == ["unrepaired"]
    assert "anthropic.document_in_assistant" in out.fixes[0].detail


def test_repair_of_a_pairing_fault_under_the_new_version_gives_a_body_it_takes() -> None:
    # A dangling call, citations and a document, all at once: every fix in one pass,
    # and nothing repair itself writes is refused under the new version.
    h = [U(CITED), A(txt("let me look"), tu("toolu_1")), U("and?"), A(txt("x"), NOTE), U("ok")]
    out = repaired(h, "anthropic", **V2026)
    kinds = [f.kind for f in out.fixes]
    assert {"citations_dropped", "document_as_text"} <= set(kinds)
    assert out.messages[2]["content"][0]["tool_use_id"] == "toolu_1"


def test_the_no_op_path_reads_the_version() -> None:
    # A valid history is a no-op under either version; a document in a user turn is fine.
    ok = [U(txt("q"), NOTE), A(txt("here")), U("thanks")]
    for version in ("2023-06-01", "2026-10-21"):
        r = toolpair.repair(ok, "anthropic", api_version=version)
        assert r.fixes == [] and all(a is b for a, b in zip(r.messages, ok, strict=True))
    # The checker does not clear what the rules refuse under the new version.
    codec = get_codec("anthropic")
    for h in (DOC_IN_ASSISTANT, CITED_USER):
        assert certainly_valid(codec, "anthropic", h, Context(api_version="2023-06-01"))
        assert not certainly_valid(codec, "anthropic", h, Context(api_version="2026-10-21"))


def test_the_wire_reads_the_header_for_anthropic_only() -> None:
    raw = json.dumps({"model": "claude-opus-4-8", "messages": CITED_USER}).encode()
    new = wire.judge(raw, "/v1/messages", "reject", api_version="2026-10-21")
    assert new is not None and new.action == "reject" and new.status == 400
    assert "citations" in json.loads(new.body)["error"]["message"]
    for version in ("2023-06-01", None):
        old = wire.judge(raw, "/v1/messages", "reject", api_version=version)
        assert old is not None and old.action == "pass" and old.body is raw
    fixed = wire.judge(raw, "/v1/messages", "repair", api_version="2026-10-21")
    assert fixed is not None and fixed.changed
    assert "citations" not in json.loads(fixed.body)["messages"][0]["content"][0]
    # A header on another API's path is not Anthropic's version.
    chat = json.dumps({"model": "gpt-4o", "messages": [OU("q")]}).encode()
    other = wire.judge(chat, "/v1/chat/completions", "reject", api_version="2026-10-21")
    assert other is not None and other.action == "pass"


# --------------------------------------------------------------------------- Moonshot

KIMI = "functions.weather:0"


def kimi(model: str, *messages: Any, **body: Any) -> dict[str, Any]:
    return {"model": model, "messages": list(messages), **body}


def test_kimi_wants_reasoning_on_every_tool_call_message_of_the_history() -> None:
    # Not only the current loop's (liliMozi/openhanako#1667): a finished earlier loop too.
    b = kimi(
        "kimi-k2.6",
        OU("q"),
        OA(call(KIMI)),
        OT(KIMI),
        OA(content="done"),
        OU("again"),
        {**OA(call("functions.weather:1")), "reasoning_content": "hm"},
        OT("functions.weather:1"),
    )
    found = toolpair.validate(b, "moonshot")
    assert [(v.code, v.index) for v in found] == [("moonshot.missing_reasoning_content", 1)]


def test_an_empty_reasoning_content_is_missing_and_repair_sends_a_space() -> None:
    b = kimi("kimi-k2.6", OU("q"), {**OA(call(KIMI)), "reasoning_content": ""}, OT(KIMI))
    assert [v.code for v in toolpair.validate(b, "moonshot")] == [
        "moonshot.missing_reasoning_content"
    ]
    out = repaired(b, "moonshot")
    assert out.messages["messages"][1]["reasoning_content"] == " "
    assert out.messages["messages"][0] is b["messages"][0]
    assert [f.kind for f in out.fixes] == ["reasoning_content_added"]


def test_kimi_thinking_follows_the_body_and_the_model() -> None:
    msgs = [OU("q"), OA(call(KIMI)), OT(KIMI)]
    # Thinking on by default for K2.6, K2.5 and the thinking models; off when the body
    # says so; a model that does not think is held to nothing unless the body turns it on.
    for model in ("kimi-k2.6", "kimi-k2.5", "kimi-k2-thinking-turbo", "moonshot/kimi-k2.6"):
        assert toolpair.validate(kimi(model, *msgs), "moonshot") != [], model
    off = kimi("kimi-k2.6", *msgs, thinking={"type": "disabled"})
    assert toolpair.validate(off, "moonshot") == []
    assert toolpair.validate(kimi("kimi-k2-0905-preview", *msgs), "moonshot") == []
    on = kimi("kimi-k2-0905-preview", *msgs, thinking={"type": "enabled"})
    assert toolpair.validate(on, "moonshot") != []
    # A bare list: thinking is not known, and nothing is said about it.
    assert toolpair.validate(msgs, "moonshot") == []


def test_kimi_keeps_its_own_ids_and_openai_pairing() -> None:
    long_id = "functions." + "a" * 40 + ":0"
    b = kimi("kimi-k2-0905-preview", OU("q"), OA(call(long_id)), OT(long_id))
    assert toolpair.validate(b, "moonshot") == []  # OpenAI's 40 is not Moonshot's
    dangling = kimi("kimi-k2-0905-preview", OU("q"), OA(call(KIMI)), OU("next"))
    assert [v.code for v in toolpair.validate(dangling, "moonshot")] == ["moonshot.missing_result"]


def test_kimi_no_op_takes_its_own_checker() -> None:
    assert get_profile("moonshot").checker == "openai"
    assert get_profile("moonshot", "kimi-k2.6").checker == "moonshot-thinking"
    valid = kimi("kimi-k2.6", OS(), OU("q"), {**OA(call(KIMI)), "reasoning_content": " "}, OT(KIMI))
    r = toolpair.repair(valid, "moonshot")
    assert r.fixes == []
    assert all(a is b for a, b in zip(r.messages["messages"], valid["messages"], strict=True))


# --------------------------------------------------------------------------- Zhipu


def test_glm_answers_every_pairing_fault_with_code_1214() -> None:
    dangling = [OU("q"), OA(call("call_1")), OU("next")]
    (v,) = toolpair.validate(dangling, "zhipu")
    assert (v.code, v.message) == (
        "zhipu.missing_result",
        "The messages parameter is illegal. Please check the documentation.",
    )
    assert [f.kind for f in repaired(dangling, "zhipu").fixes] == ["synthetic_result"]


def test_a_named_glm_is_held_only_to_what_is_known_refused() -> None:
    # Only the documented (a tool message's tool_call_id) and the observed (no user
    # message) rules hold for a named GLM; the shapes only OpenAI's rules name do not.
    held = {r.code for r in rules_for("zhipu", "glm-5.2")}
    assert held == {"zhipu.result_without_id", "zhipu.no_user_message"}
    dangling = {"model": "glm-5.2", "messages": [OU("q"), OA(call("call_1")), OU("next")]}
    assert toolpair.validate(dangling, "zhipu") == []
    assert toolpair.repair(dangling, "zhipu").fixes == []
    no_user = {"model": "glm-5.2", "messages": [OS(), OA(call("c1")), OT("c1")]}
    assert [v.code for v in toolpair.validate(no_user, "zhipu")] == ["zhipu.no_user_message"]
    out = toolpair.repair(no_user, "zhipu")
    assert [f.kind for f in out.fixes] == ["unrepaired"]  # no user message is made up


# --------------------------------------------------------------------------- hosts


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("https://api.moonshot.ai/v1", "moonshot"),
        ("https://api.moonshot.cn/v1", "moonshot"),
        ("https://open.bigmodel.cn/api/paas/v4/", "zhipu"),
        ("https://api.z.ai/api/paas/v4", "zhipu"),
        ("https://api.z.ai/api/coding/paas/v4", "zhipu"),
        ("https://moonshot.ai.example.com/v1", None),
    ],
)
def test_the_hosts_are_their_profiles(url: str, provider: str | None) -> None:
    assert provider_at(url, responses=False) == provider
    assert provider_at(url, responses=True) == (provider and "portable")


def test_litellm_prefixes() -> None:
    assert litellm_target("moonshot/kimi-k2.6") == ("moonshot", "kimi-k2.6")
    assert litellm_target("zai/glm-5.2") == ("zhipu", "glm-5.2")


def test_deepseek_v4_wording_is_in_place() -> None:
    (rule,) = [r for r in rules_for("deepseek", "deepseek-v4") if r.ref == "D2"]
    assert "danny-avila/LibreChat#13366" in rule.evidence
    assert (
        rule.text == "The `reasoning_content` in the thinking mode must be passed back to the API."
    )
