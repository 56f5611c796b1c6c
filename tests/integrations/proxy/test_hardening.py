"""`toolpair proxy` the way a hostile client, a hostile network and an ordinary SDK use
it: each probe class of issue 33 (framing, limits and timeouts, crashes, non-JSON
output, routing, secrets and logs, encodings, counting endpoints, keep-alive speed) as
a real proxy process in front of an upstream that records every byte it receives,
driven by raw sockets and by the real anthropic and openai SDKs."""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import socket
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import brotli
import openai
import pytest
import zstandard

import toolpair
from tests.support.histories import log_flood
from tests.support.sockets import exchange
from tests.support.upstream import RawUpstream, Upstream

from .proxyproc import Proxy

KEY = "sk-test-secret-0123456789"
BROKEN: list[dict[str, Any]] = [
    {"role": "user", "content": "weather in Paris?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
    },
    {"role": "user", "content": "and?"},
]


@pytest.fixture(scope="module")
def raw_up() -> Iterator[RawUpstream]:
    u = RawUpstream()
    yield u
    u.close()


@pytest.fixture(scope="module")
def lax(raw_up: RawUpstream) -> Iterator[Proxy]:
    p = Proxy(raw_up.url("base"), "--header-timeout", "1", "--keepalive-timeout", "1")
    yield p
    p.stop()


def forwarded(raw_up: RawUpstream) -> list[bytes]:
    time.sleep(0.1)
    with raw_up.lock:
        return [head.split(b"\r\n")[0] for head, _ in raw_up.requests]


# -- framing (RFC 9112): refused by the server, never forwarded ------------------------

BODY = b'{"model":"m","messages":[]}'
FRAMING = {
    "negative length": b"Content-Length: -1\r\n\r\n" + BODY,
    "signed length": b"Content-Length: +5\r\n\r\n" + BODY,
    "underscored length": b"Content-Length: 1_0\r\n\r\n" + BODY,
    "conflicting lengths": b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n" + BODY,
    "negative chunk size": b"Transfer-Encoding: chunked\r\n\r\n-1\r\nab\r\n0\r\n\r\n",
    "hex-prefixed chunk size": b"Transfer-Encoding: chunked\r\n\r\n0x5\r\nabcde\r\n0\r\n\r\n",
    "chunk longer than its size": b"Transfer-Encoding: chunked\r\n\r\n2\r\nabcdef\r\n0\r\n\r\n",
    "xchunked": b"Transfer-Encoding: xchunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n",
    "gzip transfer coding": b"Transfer-Encoding: gzip\r\n\r\nabcde",
    "length and chunked": (
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n"
    ),
    "obs-fold": b"X-A: b\r\n c\r\nContent-Length: 2\r\n\r\n{}",
    "bare CR": b"X-A: b\rc\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("case", FRAMING)
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/files"])
def test_malformed_framing_is_refused_and_never_forwarded(
    raw_up: RawUpstream, lax: Proxy, case: str, path: str
) -> None:
    raw_up.clear()
    request = b"POST %s HTTP/1.1\r\nHost: a\r\n" % path.encode() + FRAMING[case]
    out = exchange(lax.port, request)
    assert out.startswith(b"HTTP/1.1 400 "), out[:200]
    assert not out.endswith(b"<open>")  # and the connection is closed
    assert forwarded(raw_up) == []


def test_http_0_9_is_not_forwarded(raw_up: RawUpstream, lax: Proxy) -> None:
    raw_up.clear()
    out = exchange(lax.port, b"GET /v1/models\r\n\r\n")
    assert not out.startswith(b"HTTP/1.1 200")
    assert forwarded(raw_up) == []


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/files"])
def test_a_truncated_body_is_never_forwarded_as_complete(
    raw_up: RawUpstream, lax: Proxy, path: str
) -> None:
    for framing in (
        b"Content-Length: 100\r\n\r\n" + BODY,
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(BODY), BODY),
    ):
        raw_up.clear()
        s = socket.create_connection(("127.0.0.1", lax.port), timeout=3)
        s.sendall(b"POST %s HTTP/1.1\r\nHost: a\r\n" % path.encode() + framing)
        time.sleep(0.2)
        s.close()  # gone before the body ends
        assert forwarded(raw_up) == []


def test_an_upstream_1xx_is_not_the_final_response(raw_up: RawUpstream, lax: Proxy) -> None:
    out = exchange(lax.port, b"GET /early/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 ") and out.endswith(b'{"ok":true}'), out


def test_an_upstream_length_beside_chunked_is_not_passed_on(
    raw_up: RawUpstream, lax: Proxy
) -> None:
    # Two requests on one connection: the second response must start where it should.
    out = exchange(
        lax.port,
        b"GET /both/x HTTP/1.1\r\nHost: a\r\n\r\n"
        b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    first, _, second = out.partition(b"0\r\n\r\nHTTP/1.1 200 ")
    assert second, out
    assert b"content-length: 100" not in first.lower()
    assert b"transfer-encoding: chunked" in first.lower()
    assert second.endswith(b'{"ok":true}')


def test_an_http_1_0_client_gets_no_chunked_body(raw_up: RawUpstream, lax: Proxy) -> None:
    out = exchange(lax.port, b"GET /chunked/x HTTP/1.0\r\nHost: a\r\n\r\n")
    head, _, body = out.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()
    assert b"content-length: 11" in head.lower() and body == b'{"ok":true}'


# -- limits and timeouts ---------------------------------------------------------------


def test_a_half_sent_head_is_timed_out(lax: Proxy) -> None:
    t = time.monotonic()
    out = exchange(lax.port, b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nX-A", timeout=10)
    assert not out.endswith(b"<open>") and time.monotonic() - t < 5


def test_an_idle_keep_alive_connection_is_closed(lax: Proxy) -> None:
    t = time.monotonic()
    out = exchange(lax.port, b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n", timeout=10)
    assert out.startswith(b"HTTP/1.1 200") and out.endswith(b'{"ok":true}')
    assert time.monotonic() - t < 5


def test_body_size_is_refused_before_reading_it(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--max-body", "1000") as p:
        raw_up.clear()
        s = socket.create_connection(("127.0.0.1", p.port), timeout=5)
        s.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 5000000\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        head = b""
        while chunk := s.recv(65536):
            head += chunk
        s.close()
        # 413 at once: no 100 Continue invites the body first.
        assert head.startswith(b"HTTP/1.1 413 "), head
        assert b'"type":"request_too_large"' in head
        # A chunked body that grows past the limit: 413 too, and nothing sent.
        big = b"x" * 1500
        out = exchange(
            p.port,
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"%x\r\n%s\r\n0\r\n\r\n" % (len(big), big),
        )
        assert out.startswith(b"HTTP/1.1 413 ")
        assert forwarded(raw_up) == []


def test_bodies_held_at_once_are_bounded(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--max-buffered", "1000", "--max-body", "800") as p:
        slow = socket.create_connection(("127.0.0.1", p.port), timeout=5)
        slow.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 600\r\n\r\n{")
        time.sleep(0.3)
        out = exchange(
            p.port,
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 600\r\n\r\n" + b" " * 600,
        )
        assert out.startswith(b"HTTP/1.1 503 "), out[:100]
        slow.close()
        time.sleep(0.3)
        # Once the first is gone, its share is free again.
        out = exchange(
            p.port,
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
            b"Connection: close\r\n\r\n{}",
        )
        assert out.startswith(b"HTTP/1.1 200 ")


def test_a_slow_body_is_timed_out(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--body-timeout", "0.5") as p:
        raw_up.clear()
        for path in (b"/v1/messages", b"/v1/files"):
            t = time.monotonic()
            out = exchange(
                p.port,
                b"POST %s HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n{" % path,
                timeout=10,
            )
            assert out.startswith(b"HTTP/1.1 408 "), out[:100]
            assert time.monotonic() - t < 5
        assert forwarded(raw_up) == []


def test_connections_beyond_the_cap_get_503_and_idle_ones_cost_no_thread(
    raw_up: RawUpstream,
) -> None:
    with Proxy(raw_up.url(), "--max-connections", "20") as p:
        idle = [socket.create_connection(("127.0.0.1", p.port)) for _ in range(20)]
        time.sleep(0.3)
        out = exchange(p.port, b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 503 ")
        status = Path(f"/proc/{p.proc.pid}/status").read_text()
        threads = int(status.split("Threads:")[1].split()[0])
        assert threads < 10  # an event loop, not a thread per connection
        for s in idle:
            s.close()
        time.sleep(0.3)
        out = exchange(p.port, b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 200 ")


def test_a_large_body_is_streamed_not_held(raw_up: RawUpstream, lax: Proxy) -> None:
    # 48 MiB to a path toolpair does not judge: streamed through, never held whole.
    size = 48 * 1024 * 1024
    raw_up.clear()
    s = socket.create_connection(("127.0.0.1", lax.port), timeout=30)
    s.sendall(b"POST /v1/files HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % size)
    block = b"x" * (1024 * 1024)
    for _ in range(48):
        s.sendall(block)
    assert s.recv(65536).startswith(b"HTTP/1.1 200 ")
    s.close()
    time.sleep(0.2)
    [(_, body)] = raw_up.requests
    assert len(body) == size
    peak = Path(f"/proc/{lax.proc.pid}/status").read_text().split("VmHWM:")[1].split()[0]
    assert int(peak) < 200 * 1024, f"peak RSS {int(peak) // 1024} MiB"


def test_a_client_that_leaves_mid_stream_cancels_the_upstream_at_once(
    raw_up: RawUpstream, lax: Proxy
) -> None:
    raw_up.clear()
    s = socket.create_connection(("127.0.0.1", lax.port), timeout=5)
    s.sendall(b"GET /drip/x HTTP/1.1\r\nHost: a\r\n\r\n")
    assert b"data: 0" in s.recv(65536) + s.recv(65536)
    s.close()
    left = time.monotonic()
    deadline = left + 5
    while not raw_up.ended and time.monotonic() < deadline:
        time.sleep(0.05)
    assert raw_up.ended and raw_up.ended[0] - left < 1.5
    # Nothing about it in the log: no traceback.
    assert "Traceback" not in "".join(lax.log)


# -- crashes and output that is not JSON -------------------------------------------


def test_deep_nesting_never_crashes(raw_up: RawUpstream, up: Upstream) -> None:
    p = Proxy(raw_up.url())
    r = Proxy(raw_up.url(), "--mode", "reject")
    try:
        deep = "[" * 5000 + "]" * 5000
        for proxy in (p, r):
            raw_up.clear()
            body = (
                '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},'
                '{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"n",'
                f'"input":{{"a":{deep}}}}}]}}]}}'
            ).encode()
            conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
            conn.request("POST", "/v1/messages", body, {"content-type": "application/json"})
            assert conn.getresponse().status == 200
            # Passed on untouched, never a crash.
            time.sleep(0.1)
            assert [b for _, b in raw_up.requests] == [body]
        assert "nested too deep" in p.wait_for("nested too deep")
    finally:
        p.stop()
        r.stop()
    # About 1,000 deep inside one tool input of a broken history: judged and repaired.
    q = Proxy(up.url("strict"))
    try:
        up.clear()
        history = [
            BROKEN[0],
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "n",
                        "input": {"a": json.loads("[" * 900 + "]" * 900)},
                    }
                ],
            },
            BROKEN[2],
        ]
        _anthropic(q.url).messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=history)
        [seen] = up.bodies()
        assert toolpair.validate(json.loads(seen.raw), "anthropic") == []
    finally:
        log = q.stop()
    assert "Traceback" not in log


def test_numbers_are_written_back_as_the_client_wrote_them(up: Upstream, lax_strict: Proxy) -> None:
    up.clear()
    raw = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN}).replace(
        '"input": {}', '"input": {"big": 1e400, "exact": 1.10, "neg": -0, "e": 2E5}'
    )
    conn = http.client.HTTPConnection("127.0.0.1", lax_strict.port, timeout=10)
    conn.request("POST", "/v1/messages", raw, {"content-type": "application/json"})
    assert conn.getresponse().status == 200
    [seen] = up.bodies()
    assert b"Infinity" not in seen.raw
    assert b'{"big":1e400,"exact":1.10,"neg":-0,"e":2E5}' in seen.raw
    json.loads(seen.raw, parse_constant=_no_constants)  # strict JSON
    assert toolpair.validate(json.loads(seen.raw), "anthropic") == []


def _no_constants(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


# -- routing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target", [b"/../tenant-b/v1/models", b"/%2e%2e/tenant-b/v1/models", b"/v1/%2E%2e/%2e./x"]
)
def test_the_upstream_path_never_leaves_the_base_path(raw_up: RawUpstream, target: bytes) -> None:
    with Proxy(raw_up.url("tenant-a")) as p:
        raw_up.clear()
        exchange(p.port, b"GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" % target)
        [line] = forwarded(raw_up)
        assert line.startswith(b"GET /tenant-a/") and b".." not in line, line


@pytest.mark.parametrize("path", ["/v1/messag%65s", "/v1/./messages", "/v1/x/../messages"])
def test_the_path_is_judged_as_the_app_behind_routes_it(up: Upstream, path: str) -> None:
    with Proxy(up.url("strict"), "--mode", "reject") as p:
        up.clear()
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN})
        out = exchange(
            p.port,
            f"POST {path} HTTP/1.1\r\nHost: a\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n{body}".encode(),
        )
        assert out.startswith(b"HTTP/1.1 400 ") and b"invalid_request_error" in out
        assert up.bodies() == []


# -- secrets and logs ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["reject", "observe", "repair"])
def test_a_query_key_is_never_logged(up: Upstream, mode: str) -> None:
    p = Proxy(up.url("lax"), "--mode", mode)
    try:
        body = {
            "contents": [
                {"role": "user", "parts": [{"text": "weather?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
                {"role": "user", "parts": [{"text": "and?"}]},
            ]
        }
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
        conn.request(
            "POST",
            f"/v1beta/models/gemini-2.5-pro:generateContent?key={KEY}",
            json.dumps(body),
            {"content-type": "application/json", "x-goog-api-key": KEY},
        )
        conn.getresponse().read()
        log = p.wait_for("gemini")
        assert KEY not in log
    finally:
        assert KEY not in p.stop()


def test_userinfo_in_the_upstream_is_refused_and_never_printed() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolpair",
            "proxy",
            "--upstream",
            "http://admin:hunter2-secret@127.0.0.1:9/v1",
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "hunter2-secret" not in out.stdout + out.stderr
    assert "must not carry a user or password" in out.stderr


def test_binding_beyond_loopback_is_warned_about(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--host", "0.0.0.0") as p:
        assert "reachable from other machines" in p.wait_for("reachable")
        assert exchange(
            p.port, b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        ).startswith(b"HTTP/1.1 200")
    quiet = Proxy(raw_up.url())
    assert "reachable" not in quiet.stop()


@pytest.mark.parametrize("mode", ["repair", "reject", "observe"])
def test_logs_are_one_bounded_escaped_line_without_content(up: Upstream, mode: str) -> None:
    p = Proxy(up.url("lax"), "--mode", mode)
    try:
        secret_text = "SECRET-CONTENT-42"
        history = log_flood(secret_text, "evil\n[forged] toolpair repaired\x1b[31m")
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": history})
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=60)
        conn.request("POST", "/v1/messages?beta=" + KEY, body, {"authorization": KEY})
        conn.getresponse().read()
        p.wait_for("toolpair ")
        time.sleep(0.3)
    finally:
        log = p.stop()
    lines = [line for line in log.splitlines() if line.strip()]
    assert len(lines) == 1, lines[:5]
    [line] = lines
    assert len(line) < 1024
    assert "\x1b" not in line and "\\u001b" in line
    assert "more" in line  # "and N more"
    assert secret_text not in log and KEY not in log


# -- encodings and counting endpoints --------------------------------------------------


@pytest.fixture(scope="module")
def lax_strict(up: Upstream) -> Iterator[Proxy]:
    p = Proxy(up.url("strict"))
    yield p
    p.stop()


ENCODERS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}
DECODERS = {
    "gzip": gzip.decompress,
    "deflate": zlib.decompress,
    "br": brotli.decompress,
    "zstd": zstandard.ZstdDecompressor().decompress,
}


@pytest.mark.parametrize("encoding", ENCODERS)
def test_encoded_bodies_are_judged_and_re_encoded(raw_up: RawUpstream, encoding: str) -> None:
    with Proxy(raw_up.url()) as p:
        broken = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN}).encode()
        valid = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN[:1]}).encode()
        for raw, is_valid in ((broken, False), (valid, True)):
            raw_up.clear()
            sent = ENCODERS[encoding](raw)
            conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
            conn.request("POST", "/v1/messages", sent, {"content-encoding": encoding})
            assert conn.getresponse().status == 200
            time.sleep(0.1)
            [(head, body)] = raw_up.requests
            assert f"content-encoding: {encoding}".encode() in head.lower()
            assert f"content-length: {len(body)}".encode() in head.lower()
            if is_valid:
                assert body == sent  # byte-identical
            else:
                repaired = json.loads(DECODERS[encoding](body))
                assert toolpair.validate(repaired, "anthropic") == []


def test_a_compression_bomb_is_refused(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--max-body", "1M") as p:
        raw_up.clear()
        bomb = gzip.compress(b"[" + b" " * (50 * 1024 * 1024) + b"]")
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
        conn.request("POST", "/v1/messages", bomb, {"content-encoding": "gzip"})
        assert conn.getresponse().status == 413
        assert forwarded(raw_up) == []


def test_counting_endpoints_are_repaired_like_the_request_they_measure(
    up: Upstream, lax_strict: Proxy
) -> None:
    up.clear()
    for path, body in (
        ("/v1/messages/count_tokens", {"model": "m", "messages": BROKEN}),
        (
            "/v1/responses/input_tokens",
            {
                "model": "gpt-4.1",
                "input": [
                    {"role": "user", "content": "weather?"},
                    {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
                    {"role": "user", "content": "and?"},
                ],
            },
        ),
        (
            "/v1beta/models/gemini-2.5-pro:countTokens",
            {
                "contents": [
                    {"role": "user", "parts": [{"text": "weather?"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
                    {"role": "user", "parts": [{"text": "and?"}]},
                ]
            },
        ),
    ):
        conn = http.client.HTTPConnection("127.0.0.1", lax_strict.port, timeout=10)
        conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        conn.getresponse().read()
    anth, resp, gem = (json.loads(s.raw) for s in up.bodies())
    assert toolpair.validate(anth, "anthropic") == []
    assert toolpair.validate(resp, "openai-responses") == []
    assert toolpair.validate(gem, "gemini", model="gemini-2.5-pro") == []


# -- speed with real clients ---------------------------------------------------------


def _anthropic(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=base, max_retries=0, timeout=10)


def test_keep_alive_clients_are_not_stalled_and_upstream_connections_are_reused(
    raw_up: RawUpstream,
) -> None:
    with Proxy(raw_up.url()) as p:
        raw_up.clear()
        client = openai.OpenAI(api_key=KEY, base_url=p.url + "/v1", max_retries=0, timeout=10)
        direct = openai.OpenAI(api_key=KEY, base_url=raw_up.url() + "/v1", max_retries=0)
        through: list[float] = []
        plain: list[float] = []
        for _ in range(30):
            for c, into in ((client, through), (direct, plain)):
                t = time.perf_counter()
                c.models.with_raw_response.list()
                into.append(time.perf_counter() - t)
        # Nagle's algorithm against a delayed ACK costs 40 ms a request; a proxy that
        # writes with TCP_NODELAY costs well under a millisecond or two.
        added = statistics.median(through[5:]) - statistics.median(plain[5:])
        assert added < 0.015, f"{added * 1000:.1f} ms added per keep-alive request"
        with raw_up.lock:
            proxied = [c for c in raw_up.connections if b"/models" in c]
        # One pooled upstream connection for the proxy, one for the direct client.
        assert len(proxied) <= 2, len(proxied)


def test_the_upstream_basic_auth_of_a_userinfo_url_is_not_needed_to_forward(
    raw_up: RawUpstream,
) -> None:
    # Credentials come from the client, as sent: a Basic header passes through untouched.
    with Proxy(raw_up.url()) as p:
        raw_up.clear()
        token = base64.b64encode(b"u:p").decode()
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
        conn.request("GET", "/x", headers={"authorization": f"Basic {token}"})
        conn.getresponse().read()
        time.sleep(0.1)
        [(head, _)] = raw_up.requests
        assert f"authorization: Basic {token}".encode() in head
        assert token not in "".join(p.log)


def test_workers_share_the_port(raw_up: RawUpstream) -> None:
    with Proxy(raw_up.url(), "--workers", "2") as p:
        deadline = time.monotonic() + 20
        while True:
            try:
                out = exchange(p.port, b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                if out.startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.2)
        for _ in range(10):
            out = exchange(p.port, b"GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            assert out.startswith(b"HTTP/1.1 200")
