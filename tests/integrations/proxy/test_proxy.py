"""`toolpair proxy` as a real subprocess, in front of a fake upstream that records every
body, driven by the real anthropic and openai SDKs pointed at it with ``base_url``."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx2
import openai
import pytest

import toolpair
from tests.support.histories import DANGLING_CHAT, ORPHAN_RESPONSES
from tests.support.upstream import GAP, Upstream

from .proxyproc import Proxy

KEY = "sk-test-secret-0123456789"


@pytest.fixture(scope="module")
def proxies(up: Upstream) -> Iterator[dict[str, Proxy]]:
    made = {
        "strict": Proxy(up.url("strict")),
        "lax": Proxy(up.url("lax")),
        "reject": Proxy(up.url("strict"), "--mode", "reject"),
        "observe": Proxy(up.url("lax"), "--mode", "observe"),
        "timeout": Proxy(up.url("slow"), "--timeout", "1"),
    }
    yield made
    for p in made.values():
        p.stop()


def _anthropic(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=base, max_retries=0, timeout=10)


def _openai(base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=base + "/v1", max_retries=0, timeout=10)


DANGLING_ANTHROPIC: list[dict[str, Any]] = [
    {"role": "user", "content": "weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Paris"}},
        ],
    },
    {"role": "user", "content": "and?"},
]
VALID_ANTHROPIC: list[dict[str, Any]] = [
    DANGLING_ANTHROPIC[0],
    DANGLING_ANTHROPIC[1],
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}],
    },
]


def test_broken_anthropic_history_fails_direct_and_is_repaired_through_the_proxy(
    up: Upstream, proxies: dict[str, Proxy]
) -> None:
    with pytest.raises(anthropic.BadRequestError) as e:
        _anthropic(up.url("strict")).messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING_ANTHROPIC
        )
    assert "tool_use` ids were found without `tool_result`" in str(e.value)
    up.clear()
    msg = _anthropic(proxies["strict"].url).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING_ANTHROPIC
    )
    assert msg.content[0].text == "done"
    [seen] = up.bodies("strict")
    assert seen.path == "/strict/v1/messages"
    assert toolpair.validate(seen.body, "anthropic") == []
    # The real text survives; the call is answered by an error result.
    assert seen.body["messages"][1] == DANGLING_ANTHROPIC[1]
    result = seen.body["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_01" and result["is_error"] is True
    proxies["strict"].wait_for("1 synthetic_result")


def test_credentials_are_forwarded_and_never_logged(
    up: Upstream, proxies: dict[str, Proxy]
) -> None:
    up.clear()
    _anthropic(proxies["strict"].url).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING_ANTHROPIC
    )
    [seen] = up.bodies("strict")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["host"] == f"127.0.0.1:{up.port}"
    assert KEY not in "".join(proxies["strict"].log)


def test_openai_chat_and_responses_are_repaired(up: Upstream, proxies: dict[str, Proxy]) -> None:
    client = _openai(proxies["strict"].url)
    with pytest.raises(openai.BadRequestError):
        _openai(up.url("strict")).chat.completions.create(model="gpt-4.1", messages=DANGLING_CHAT)
    up.clear()
    out = client.chat.completions.create(model="gpt-4.1", messages=DANGLING_CHAT)
    assert out.choices[0].message.content == "done"
    resp = client.responses.create(model="gpt-4.1", input=ORPHAN_RESPONSES)
    assert resp.output_text == "done"
    chat, responses = up.bodies("strict")
    assert chat.path == "/strict/v1/chat/completions"
    assert toolpair.validate(chat.body, "openai") == []
    assert chat.body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "No result was recorded for this tool call.",
    }
    assert responses.path == "/strict/v1/responses"
    assert toolpair.validate(responses.body, "openai-responses") == []


def test_valid_bodies_pass_byte_identical(up: Upstream, proxies: dict[str, Proxy]) -> None:
    # Odd spacing, key order and escapes: any re-encoding would show.
    raw = (
        b'{ "max_tokens" : 64,"model":"claude-sonnet-4-5",  "messages": '
        + json.dumps(VALID_ANTHROPIC, ensure_ascii=True, indent=1).encode()
        + b', "metadata": {"note": "caf\\u00e9"} }'
    )
    assert toolpair.validate(json.loads(raw), "anthropic") == []
    up.clear()
    conn = http.client.HTTPConnection("127.0.0.1", proxies["strict"].port, timeout=10)
    conn.request(
        "POST", "/v1/messages", raw, {"content-type": "application/json", "x-api-key": KEY}
    )
    assert conn.getresponse().status == 200
    [seen] = up.bodies("strict")
    assert seen.raw == raw
    # And from the SDK: the same bytes as it sends to the upstream directly.
    up.clear()
    _anthropic(up.url("lax")).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
    )
    _anthropic(proxies["lax"].url).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
    )
    direct, through = up.bodies("lax")
    assert direct.raw == through.raw


def test_reject_mode_answers_the_providers_400_and_sends_nothing(
    up: Upstream, proxies: dict[str, Proxy]
) -> None:
    up.clear()
    with pytest.raises(anthropic.BadRequestError) as e:
        _anthropic(proxies["reject"].url).messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING_ANTHROPIC
        )
    [v] = toolpair.validate(
        {"messages": DANGLING_ANTHROPIC, "max_tokens": 1, "system": ""}, "anthropic"
    )
    assert e.value.status_code == 400
    assert e.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": v.message},
    }
    assert v.message.startswith("messages.1: `tool_use` ids were found without")
    with pytest.raises(openai.BadRequestError) as oe:
        _openai(proxies["reject"].url).chat.completions.create(
            model="gpt-4.1", messages=DANGLING_CHAT
        )
    assert oe.value.status_code == 400
    assert oe.value.body["type"] == "invalid_request_error"
    assert oe.value.body["param"] == "messages"
    assert "call_1" in oe.value.body["message"]
    assert up.bodies() == []
    # A valid one goes through.
    _anthropic(proxies["reject"].url).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
    )
    assert len(up.bodies("strict")) == 1


def test_observe_mode_forwards_unchanged_and_logs(up: Upstream, proxies: dict[str, Proxy]) -> None:
    up.clear()
    raw = json.dumps({"model": "gpt-4.1", "messages": DANGLING_CHAT}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", proxies["observe"].port, timeout=10)
    conn.request("POST", "/v1/chat/completions", raw, {"content-type": "application/json"})
    assert conn.getresponse().status == 200
    [seen] = up.bodies("lax")
    assert seen.raw == raw
    log = proxies["observe"].wait_for("toolpair observed a history (openai format)")
    assert "via proxy; rules: openai.missing_result; ids: call_1" in log


def test_gemini_generate_content_is_repaired(up: Upstream, proxies: dict[str, Proxy]) -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
            {"role": "user", "parts": [{"text": "and?"}]},
        ]
    }
    up.clear()
    conn = http.client.HTTPConnection("127.0.0.1", proxies["strict"].port, timeout=10)
    path = "/v1beta/models/gemini-2.5-pro:generateContent"
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    assert conn.getresponse().status == 200
    [seen] = up.bodies("strict")
    assert toolpair.validate(seen.body, "gemini", model="gemini-2.5-pro") == []
    assert toolpair.validate(body, "gemini", model="gemini-2.5-pro") != []


def test_streams_pass_through_unbuffered(up: Upstream, proxies: dict[str, Proxy]) -> None:
    client = _anthropic(proxies["strict"].url)
    arrivals: list[float] = []
    start = time.monotonic()
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING_ANTHROPIC
    ) as stream:
        for _text in stream.text_stream:
            arrivals.append(time.monotonic() - start)
        final = stream.get_final_message()
    assert final.content[0].text == "part0 part1 part2 part3 "
    # Each delta arrives as the upstream sends it, not all at the end.
    assert arrivals[0] < arrivals[-1] - 2 * GAP
    chunks = list(
        _openai(proxies["lax"].url).chat.completions.create(
            model="gpt-4.1", messages=DANGLING_CHAT, stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "part0 part1 part2 part3 "


def test_upstream_faults_give_a_clean_status_and_the_proxy_keeps_serving(
    up: Upstream, proxies: dict[str, Proxy]
) -> None:
    # A closed port: 502.
    with Proxy("http://127.0.0.1:9") as dead:
        with pytest.raises(anthropic.APIStatusError) as e:
            _anthropic(dead.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
            )
        assert e.value.status_code == 502
        # The gateway's own failure, not the client's: never invalid_request_error.
        assert e.value.body["error"]["type"] == "api_error"
    # The upstream's own status passes through.
    with Proxy(up.url("fail")) as failing:
        with pytest.raises(anthropic.InternalServerError) as ie:
            _anthropic(failing.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
            )
        assert ie.value.status_code == 500
        assert ie.value.body == {"error": {"message": "upstream broke"}}
    # Slower than the proxy's timeout: 504, well before the upstream answers.
    t = time.monotonic()
    with pytest.raises(anthropic.APIStatusError) as te:
        _anthropic(proxies["timeout"].url).messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
        )
    assert te.value.status_code == 504 and time.monotonic() - t < 2.5
    # A stream cut half-way: the client sees a broken stream, not a hang.
    with (
        Proxy(up.url("cut")) as cut,
        pytest.raises(
            (anthropic.APIConnectionError, httpx2.RemoteProtocolError),
            match="without sending complete message body",
        ),
        _anthropic(cut.url).messages.stream(
            model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
        ) as stream,
    ):
        list(stream.text_stream)
    # Still serving.
    msg = _anthropic(proxies["strict"].url).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=VALID_ANTHROPIC
    )
    assert msg.content[0].text == "done"


def test_no_open_proxy(up: Upstream, proxies: dict[str, Proxy]) -> None:
    up.clear()
    conn = http.client.HTTPConnection("127.0.0.1", proxies["lax"].port, timeout=10)
    conn.request("GET", "http://example.invalid/v1/models")
    r = conn.getresponse()
    assert r.status == 400 and b"request target must be a path" in r.read()
    conn = http.client.HTTPConnection("127.0.0.1", proxies["lax"].port, timeout=10)
    conn.request("POST", "/v1/chat/completions", b"{}", {"Host": "example.invalid"})
    assert conn.getresponse().status == 200
    [seen] = up.bodies("lax")
    assert seen.headers["host"] == f"127.0.0.1:{up.port}" and seen.raw == b"{}"


def test_bounded_load_loses_nothing_and_alters_no_valid_body(
    up: Upstream, proxies: dict[str, Proxy]
) -> None:
    up.clear()
    valid = {
        "model": "gpt-4.1",
        "messages": [
            *DANGLING_CHAT[:2],
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ],
    }
    broken = {"model": "gpt-4.1", "messages": DANGLING_CHAT}

    def one(i: int) -> tuple[int, bytes, bool]:
        body = dict(valid if i % 2 else broken, user=f"req-{i}")
        if i % 5 == 0:
            body["stream"] = True
        raw = json.dumps(body).encode()
        conn = http.client.HTTPConnection("127.0.0.1", proxies["strict"].port, timeout=30)
        conn.request("POST", "/v1/chat/completions", raw, {"content-type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        ok = r.status == 200 and (b"[DONE]" in data if body.get("stream") else b"done" in data)
        return i, raw, ok

    n = 300
    with ThreadPoolExecutor(max_workers=24) as pool:
        results = list(pool.map(one, range(n)))
    assert all(ok for _, _, ok in results)
    seen = {s.body["user"]: s for s in up.bodies("strict")}
    assert len(seen) == n
    for i, raw, _ in results:
        s = seen[f"req-{i}"]
        assert toolpair.validate(s.body, "openai") == []
        if i % 2:
            assert s.raw == raw
