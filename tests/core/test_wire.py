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
        # The counting endpoints measure the history they would be sent: judged alike.
        ("/v1/messages/count_tokens", wire.Route("anthropic")),
        ("/v1/responses/input_tokens", wire.Route("openai-responses")),
        ("/v1beta/models/gemini-2.5-pro:countTokens", wire.Route("gemini", "gemini-2.5-pro")),
        ("/v1/messages/batches", None),
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


def _broken(extra_input: str = "{}") -> bytes:
    raw = json.dumps({"model": "m", "max_tokens": 5, "messages": DANGLING})
    return raw.replace('"input": {}', f'"input": {extra_input}').encode()


def test_numbers_are_written_back_as_the_client_wrote_them() -> None:
    written = '{"big": 1e400, "small": -1E-400, "exact": 1.10, "neg": -0, "e": 2e5, "n": 10}'
    v = wire.judge(_broken(written), "/v1/messages")
    assert v is not None and v.changed
    assert b'"input":{"big":1e400,"small":-1E-400,"exact":1.10,"neg":-0,"e":2e5,"n":10}' in v.body
    assert b"Infinity" not in v.body
    json.loads(v.body, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert toolpair.validate(json.loads(v.body), "anthropic") == []
    # NaN as sent stays as sent (the upstream judges what is not JSON).
    v = wire.judge(_broken('{"x": NaN}'), "/v1/messages")
    assert v is not None and b'"x":NaN' in v.body


def test_deep_nesting_passes_through_or_is_judged_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with caplog.at_level("WARNING", logger="toolpair"):
        assert wire.judge(_broken(f'{{"a": {deep}}}'), "/v1/messages") is None
        assert wire.judge(("[" * 100_000).encode(), "/v1/messages") is None
    assert "nested too deep" in caplog.text
    v = wire.judge(_broken('{"a": ' + "[" * 900 + "]" * 900 + "}"), "/v1/messages")
    assert v is not None and v.changed


@pytest.mark.parametrize(
    "raw",
    [
        "{}".encode("utf-16"),
        b'{"messages": "\xff\xfe"}'.replace(b"\\xff\\xfe", b"\xff\xfe"),
        b'{"messages": [' + b"1," * 100_000 + b"1]}",
        b"9" * 5000,
    ],
)
def test_bodies_toolpair_cannot_hold_are_left_to_the_upstream(raw: bytes) -> None:
    assert wire.judge(raw, "/v1/chat/completions") is None


def test_bom_and_lone_surrogates_still_give_valid_output() -> None:
    v = wire.judge(b"\xef\xbb\xbf" + _broken(), "/v1/messages")
    assert v is not None and v.changed and not v.body.startswith(b"\xef\xbb\xbf")
    v = wire.judge(_broken('{"s": "\\ud800"}'), "/v1/messages")
    assert v is not None and v.changed and b'"\\ud800"' in v.body
    v.body.decode("utf-8")


def test_gemini_count_tokens_with_the_request_it_measures() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {"t": 1.50}}}]},
        {"role": "user", "parts": [{"text": "and?"}]},
    ]
    body = {"generateContentRequest": {"model": "models/gemini-2.5-pro", "contents": contents}}
    raw = json.dumps(body).replace("1.5", "1.50").encode()
    v = wire.judge(raw, "/v1beta/models/gemini-2.5-pro:countTokens")
    assert v is not None and v.changed and b'"t":1.50' in v.body
    inner = json.loads(v.body)["generateContentRequest"]
    assert inner["model"] == "models/gemini-2.5-pro"
    assert toolpair.validate(inner, "gemini", model="gemini-2.5-pro") == []


def test_a_gateways_own_errors_are_not_the_clients_fault() -> None:
    for status in (502, 503, 504):
        for fmt in ("anthropic", "openai", "openai-responses", "gemini"):
            text = json.dumps(wire.error_envelope(fmt, "x", status))
            assert "invalid_request_error" not in text and "INVALID_ARGUMENT" not in text
    assert wire.error_envelope("anthropic", "x", 413)["error"]["type"] == "request_too_large"


def test_the_log_line_is_bounded_and_escaped(caplog: pytest.LogCaptureFixture) -> None:
    calls = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "n", "input": {"q": "SECRET"}}
        for i in range(20000)
    ]
    calls[0]["id"] = "evil\n[forged]\x1b[2J"
    history = [
        {"role": "user", "content": "SECRET"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": "SECRET"},
    ]
    raw = json.dumps({"model": "m", "max_tokens": 5, "messages": history}).encode()
    for mode in wire.MODES:
        caplog.clear()
        # WARNING for a repair or a rejection, INFO in observe mode.
        with caplog.at_level("INFO", logger="toolpair"):
            wire.judge(raw, "/a\x1b\n[forged]/v1/messages?key=SECRET", mode)
        [record] = caplog.records
        assert record.levelname == ("INFO" if mode == "observe" else "WARNING")
        line = record.getMessage()
        assert "\n" not in line and "\x1b" not in line and len(line) < 1024, (mode, line)
        assert "SECRET" not in line and "more" in line


def test_encoded_bodies_decode_within_their_limit() -> None:
    import gzip
    import zlib

    data = b'{"a": 1}'
    assert wire.decode_body(gzip.compress(data), "gzip", 100) == data
    assert wire.decode_body(zlib.compress(data), "deflate", 100) == data
    assert wire.decode_body(zlib.compress(data)[2:-4], "deflate", 100) == data  # raw deflate
    assert wire.decode_body(b"not gzip", "gzip", 100) is None
    assert wire.decode_body(gzip.compress(data)[:-6], "gzip", 100) is None  # truncated
    assert wire.decode_body(data, "compress", 100) is None
    with pytest.raises(wire.BodyTooLarge):
        wire.decode_body(gzip.compress(b" " * 10_000), "gzip", 1000)
    assert wire.decode_body(wire.encode_body(data, "gzip"), "gzip", 100) == data
