"""`toolpair proxy --record DIR`: the disagreements between the upstream's answer and
toolpair's verdict on the body it sent, recorded as anonymised cases while the responses
pass unchanged; driven by the real anthropic and openai SDKs."""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

import toolpair
from tests.support.histories import DANGLING_CHAT as POISONED
from tests.support.upstream import GAP, Upstream
from toolpair.corpus import judge_all, read_cases, table

from .proxyproc import Proxy

KEY = "sk-test-secret-0123456789"
SECRET_TEXT = "weather in Paris?"

CALL = {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Paris"}}
VALID: list[dict[str, Any]] = [
    {"role": "user", "content": SECRET_TEXT},
    {"role": "assistant", "content": [{"type": "text", "text": "checking"}, CALL]},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}],
    },
]
DANGLING: list[dict[str, Any]] = [*VALID[:2], {"role": "user", "content": "and?"}]
DANGLING_CHAT: list[dict[str, Any]] = [{"role": "user", "content": SECRET_TEXT}, *POISONED[1:]]


def _cases(folder: Path, timeout: float = 10.0, count: int = 1) -> list[dict[str, Any]]:
    """The cases in ``folder`` once there are ``count`` (they are written just after the
    response has gone out)."""
    deadline = time.monotonic() + timeout
    while True:
        files = sorted(folder.rglob("*.json"))
        if len(files) >= count or time.monotonic() > deadline:
            return [json.loads(f.read_text()) for f in files]
        time.sleep(0.05)


def _anthropic(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=base, max_retries=0, timeout=10)


def test_a_refusal_of_a_body_toolpair_sent_as_valid_is_recorded_anonymised(
    up: Upstream, tmp_path: Path
) -> None:
    proxy = Proxy(up.url("refuse"), "--record", str(tmp_path))
    try:
        with pytest.raises(anthropic.BadRequestError) as e:
            _anthropic(proxy.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=VALID
            )
        # The client gets the upstream's own refusal, unchanged.
        assert "'weather in Paris?' was refused by this upstream" in str(e.value)
        [case] = _cases(tmp_path)
        [path] = list(tmp_path.rglob("*.json"))
    finally:
        log = proxy.stop()
    assert path.parent.name == "anthropic"
    assert case["status"] == 400 and case["disagreement"] == "refused"
    assert case["provider"] == "anthropic" and case["model"] == "claude-sonnet-4-5"
    assert case["source"]["via"] == "proxy" and case["host"] == "127.0.0.1"
    # The provider's words are kept, the body's text it quoted is not.
    assert case["error"].endswith("was refused by this upstream")
    text = path.read_text()
    for secret in (SECRET_TEXT, "Paris", "sunny", "checking", KEY, "authorization"):
        assert secret not in text
    msgs = case["body"]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"][1]["id"] == "toolu_01"
    assert msgs[2]["content"][0]["tool_use_id"] == "toolu_01"
    assert len(msgs[0]["content"]) == len(SECRET_TEXT)
    assert KEY not in log
    # `toolpair corpus check` reads the folder: toolpair disagrees with the refusal.
    [verdict] = judge_all(read_cases(tmp_path))
    assert not verdict.agrees
    assert table([verdict])["anthropic"].refused == 1


def test_repair_mode_records_the_repaired_body_that_was_refused(
    up: Upstream, tmp_path: Path
) -> None:
    proxy = Proxy(up.url("refuse"), "--record", str(tmp_path))
    try:
        with pytest.raises(anthropic.BadRequestError):
            _anthropic(proxy.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING
            )
        [case] = _cases(tmp_path)
    finally:
        proxy.stop()
    body = case["body"]
    # What went out: the dangling call answered by repair, valid by toolpair's rules.
    assert toolpair.validate(body, "anthropic") == []
    assert body["messages"][2]["content"][0]["tool_use_id"] == "toolu_01"
    assert body["messages"][2]["content"][0]["is_error"] is True


def test_observe_mode_records_an_acceptance_of_a_body_toolpair_would_change(
    up: Upstream, tmp_path: Path
) -> None:
    proxy = Proxy(up.url("lax"), "--mode", "observe", "--record", str(tmp_path))
    try:
        client = openai.OpenAI(api_key=KEY, base_url=proxy.url + "/v1", max_retries=0, timeout=10)
        reply = client.chat.completions.create(model="gpt-4.1", messages=DANGLING_CHAT)  # type: ignore[arg-type]
        assert reply.choices[0].message.content == "done"
        [case] = _cases(tmp_path)
    finally:
        proxy.stop()
    assert case["status"] == 200 and case["disagreement"] == "accepted"
    assert "error" not in case
    assert case["provider"] == "openai" and case["model"] == "gpt-4.1"
    calls = case["body"]["messages"][1]["tool_calls"]
    assert calls[0]["id"] == "call_1"
    assert toolpair.validate(case["body"], "openai") != []


def test_agreements_record_nothing(up: Upstream, tmp_path: Path) -> None:
    repair = Proxy(up.url("lax"), "--record", str(tmp_path / "repair"))
    observe = Proxy(up.url("strict"), "--mode", "observe", "--record", str(tmp_path / "obs"))
    try:
        # Valid and accepted; broken, repaired and accepted.
        for msgs in (VALID, DANGLING):
            _anthropic(repair.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=msgs
            )
        # Broken, observed, and refused: toolpair and the upstream agree.
        with pytest.raises(anthropic.BadRequestError):
            _anthropic(observe.url).messages.create(
                model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING
            )
        # A refusal toolpair had no verdict on (a path it does not judge).
        conn = http.client.HTTPConnection("127.0.0.1", repair.port, timeout=10)
        conn.request("POST", "/v1/files", b"{}", {"content-type": "application/json"})
        assert conn.getresponse().status == 200
        time.sleep(0.5)
    finally:
        repair.stop()
        observe.stop()
    assert list(tmp_path.rglob("*.json")) == []


def test_the_hourly_cap_holds_and_is_logged(up: Upstream, tmp_path: Path) -> None:
    proxy = Proxy(up.url("refuse"), "--record", str(tmp_path), "--record-per-hour", "1")
    try:
        for city in ("Paris", "Rome", "Oslo"):
            msgs = [{"role": "user", "content": f"weather in {city} and more?"}]
            with pytest.raises(anthropic.BadRequestError):
                _anthropic(proxy.url).messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=64,
                    messages=msgs,  # type: ignore[arg-type]
                    tools=[{"name": f"t_{city}", "input_schema": {"type": "object"}}],
                )
        log = proxy.wait_for("reached the cap of 1 per hour")
    finally:
        proxy.stop()
    assert len(list(tmp_path.rglob("*.json"))) == 1
    assert "Paris" not in log and "Rome" not in log


def test_a_recording_proxy_still_streams_unbuffered(up: Upstream, tmp_path: Path) -> None:
    proxy = Proxy(up.url("strict"), "--record", str(tmp_path))
    try:
        arrivals: list[float] = []
        start = time.monotonic()
        with _anthropic(proxy.url).messages.stream(
            model="claude-sonnet-4-5", max_tokens=64, messages=DANGLING
        ) as stream:
            for _text in stream.text_stream:
                arrivals.append(time.monotonic() - start)
            final = stream.get_final_message()
    finally:
        proxy.stop()
    assert final.content[0].text == "part0 part1 part2 part3 "
    assert arrivals[0] < arrivals[-1] - 2 * GAP
    assert list(tmp_path.rglob("*.json")) == []
