"""toolpair.gateway.wire: routing by path, the three modes, and the error envelopes."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolpair
from toolpair.gateway import wire

DANGLING: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}],
    },
    {"role": "user", "content": "and?"},
]


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/v1/chat/completions", wire.Route("openai")),
        ("/openai/v1/chat/completions?api-version=1", wire.Route("openai")),
        ("/v1/messages", wire.Route("anthropic")),
        ("/v1/responses", wire.Route("openai-responses")),
        ("/v1beta/models/gemini-2.5-pro:generateContent", wire.Route("gemini", "gemini-2.5-pro")),
        ("/v1beta/models/gemini-3-pro:streamGenerateContent", wire.Route("gemini", "gemini-3-pro")),
        ("/v1/models", None),
        ("/v1/messages/count_tokens", None),
        ("/model/x/converse", None),
    ],
)
def test_route(path: str, route: wire.Route | None) -> None:
    assert wire.route(path) == route


def test_valid_body_passes_as_the_very_bytes() -> None:
    raw = b'{"model":"m" , "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}'
    for mode in wire.MODES:
        v = wire.judge(raw, "/v1/messages", mode)
        assert v is not None and v.action == "pass" and v.body is raw and not v.changed


def test_repair_mode_repairs() -> None:
    raw = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": DANGLING})
    v = wire.judge(raw.encode(), "/v1/messages", "repair")
    assert v is not None and v.changed and v.provider == "anthropic"
    body = json.loads(v.body)
    assert toolpair.validate(body, "anthropic") == []
    assert [f.kind for f in v.fixes] == ["synthetic_result"]
    # Repairing the repaired body changes nothing.
    again = wire.judge(v.body, "/v1/messages", "repair")
    assert again is not None and not again.changed and again.body is v.body


def test_reject_mode_answers_in_each_apis_envelope() -> None:
    raw = json.dumps({"model": "m", "max_tokens": 5, "messages": DANGLING}).encode()
    v = wire.judge(raw, "/v1/messages", "reject")
    [violation] = toolpair.validate(json.loads(raw), "anthropic")
    assert v is not None and v.action == "reject" and v.status == 400
    assert json.loads(v.body) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": violation.message},
    }
    assert violation.index == 1 and violation.ids == ("toolu_1",)
    chat = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f"}}],
        },
    ]
    v = wire.judge(json.dumps({"messages": chat}).encode(), "/v1/chat/completions", "reject")
    assert v is not None
    err = json.loads(v.body)["error"]
    assert err["type"] == "invalid_request_error" and err["param"] == "messages"
    assert "c1" in err["message"]
    gemini = {
        "contents": [
            {"role": "user", "parts": [{"text": "x"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"text": "y"}]},
        ]
    }
    v = wire.judge(
        json.dumps(gemini).encode(), "/v1beta/models/gemini-2.5-pro:generateContent", "reject"
    )
    assert v is not None
    assert json.loads(v.body)["error"]["status"] == "INVALID_ARGUMENT"
    assert json.loads(v.body)["error"]["code"] == 400


def test_observe_mode_reports_and_keeps_the_bytes() -> None:
    raw = json.dumps({"max_tokens": 5, "messages": DANGLING}).encode()
    v = wire.judge(raw, "/v1/messages", "observe")
    assert v is not None and v.action == "pass" and v.body is raw
    assert [x.code for x in v.violations] == ["anthropic.missing_result"]


def test_what_is_not_a_history_is_left_to_the_upstream() -> None:
    assert wire.judge(b"not json", "/v1/messages", "reject") is None
    assert wire.judge(b"[1, 2]", "/v1/messages", "reject") is None
    assert wire.judge(b'{"model": "m"}', "/v1/chat/completions", "reject") is None
    assert wire.judge(b'{"messages": "hi"}', "/v1/chat/completions", "reject") is None
    assert wire.judge(b"{}", "/v1/models", "reject") is None
    with pytest.raises(ValueError, match="unknown mode"):
        wire.judge(b"{}", "/v1/messages", "fix")  # type: ignore[arg-type]


def test_previous_response_id_keeps_stored_calls_answered() -> None:
    items = [{"type": "function_call_output", "call_id": "call_9", "output": "ok"}]
    stored = {"model": "gpt-4.1", "input": items, "previous_response_id": "resp_1"}
    v = wire.judge(json.dumps(stored).encode(), "/v1/responses", "reject")
    assert v is not None and v.action == "pass"
    v = wire.judge(
        json.dumps({"model": "gpt-4.1", "input": items}).encode(), "/v1/responses", "reject"
    )
    assert v is not None and v.action == "reject"


def test_provider_override() -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f"}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ]
    }
    raw = json.dumps(chat).encode()
    assert wire.judge(raw, "/v1/chat/completions", "reject").action == "pass"  # type: ignore[union-attr]
    v = wire.judge(raw, "/v1/chat/completions", "reject", provider="mistral")
    assert v is not None and v.action == "reject" and v.provider == "mistral"
