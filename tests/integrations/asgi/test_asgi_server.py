"""ToolpairMiddleware in a vLLM-like app served by a real uvicorn process: raw sockets
for framing, bodies in every Content-Encoding, limits and timeouts from the environment,
hostile bodies and ids, and the logs."""

from __future__ import annotations

import base64
import functools
import gzip
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotli
import pytest
import zstandard

import toolpair
from tests.support.histories import log_flood
from tests.support.sockets import exchange

HERE = Path(__file__).resolve().parent
BROKEN: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
    },
    {"role": "user", "content": "and?"},
]


class Served:
    def __init__(self, **env: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "vllm_like.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def post(self, path: str, body: bytes, **headers: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("POST", path, body, {"content-type": "application/json", **headers})
        r = conn.getresponse()
        return r.status, r.read()

    def seen(self) -> list[dict[str, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", "/seen")
        out: list[dict[str, Any]] = json.loads(conn.getresponse().read())
        for s in out:
            s["headers"] = dict(s["headers"])
            s["body"] = base64.b64decode(s["body"])
        return out

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(10)
        time.sleep(0.1)
        return "".join(self.log)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served(TOOLPAIR_MODE="repair")
    yield s
    s.stop()


raw_exchange = functools.partial(exchange, timeout=5.0)


def test_a_chunked_body_replaced_is_sized_and_no_longer_chunked(served: Served) -> None:
    body = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN}).encode()
    half = len(body) // 2
    out = raw_exchange(
        served.port,
        b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
        b"Connection: close\r\n\r\n"
        + b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n"
        % (half, body[:half], len(body) - half, body[half:]),
    )
    assert out.startswith(b"HTTP/1.1 200 ")
    last = served.seen()[-1]
    assert "transfer-encoding" not in last["headers"]
    assert int(last["headers"]["content-length"]) == len(last["body"])
    assert toolpair.validate(json.loads(last["body"]), "anthropic") == []


@pytest.mark.parametrize(
    "encoding,encode,decode",
    [
        ("gzip", gzip.compress, gzip.decompress),
        ("br", brotli.compress, brotli.decompress),
        ("zstd", zstandard.ZstdCompressor().compress, zstandard.ZstdDecompressor().decompress),
    ],
)
def test_compressed_bodies_are_judged(
    served: Served, encoding: str, encode: Any, decode: Any
) -> None:
    broken = encode(
        json.dumps(
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "x"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "w", "arguments": "{}"},
                            }
                        ],
                    },
                ],
            }
        ).encode()
    )
    assert served.post("/v1/chat/completions", broken, **{"content-encoding": encoding})[0] == 200
    last = served.seen()[-1]
    assert last["headers"]["content-encoding"] == encoding
    assert toolpair.validate(json.loads(decode(last["body"])), "openai") == []
    valid = encode(b'{"model":"m","messages":[{"role":"user","content":"x"}]}')
    served.post("/v1/chat/completions", valid, **{"content-encoding": encoding})
    assert served.seen()[-1]["body"] == valid


def test_hostile_bodies_reach_the_app_untouched_never_a_500(served: Served) -> None:
    for raw in (
        b'{"messages":' + b"[" * 20000 + b"]" * 20000 + b"}",
        b'{"model":"m","messages":[' + b'{"role":"user","content":"x"},' * 50000 + b"{}]}",
        "\ufeff{}".encode("utf-16"),
        b'{"model":"m","messages":[{"role":"user","content":"\\ud800"}], "n": 1e400}',
    ):
        status, _ = served.post("/v1/chat/completions", raw)
        assert status == 200
        assert served.seen()[-1]["body"] == raw
    assert "Traceback" not in "".join(served.log)


def test_the_decoded_path_is_judged_as_starlette_routes_it() -> None:
    s = Served(TOOLPAIR_MODE="reject")
    try:
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": BROKEN}).encode()
        for path in ("/v1/messag%65s", "/v1/messages/count_tokens"):
            status, out = s.post(path, body)
            assert status == 400 and b"tool_use" in out
        assert s.seen() == []
    finally:
        s.stop()


def test_limits_from_the_environment() -> None:
    s = Served(TOOLPAIR_MAX_BODY="1000", TOOLPAIR_BODY_TIMEOUT="0.5")
    try:
        out = raw_exchange(
            s.port,
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n"
            b"Expect: 100-continue\r\n\r\n",
        )
        assert out.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in out
        bomb = gzip.compress(b" " * 100000)
        assert s.post("/v1/messages", bomb, **{"content-encoding": "gzip"})[0] == 413
        t = time.monotonic()
        out = raw_exchange(
            s.port, b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n{"
        )
        assert out.startswith(b"HTTP/1.1 408 ") and time.monotonic() - t < 3
        assert s.seen() == []
    finally:
        s.stop()
    with pytest.raises(ValueError, match="TOOLPAIR_MAX_BODY must be a number"):
        os.environ["TOOLPAIR_MAX_BODY"] = "lots"
        try:
            from toolpair.integrations.asgi import ToolpairMiddleware

            ToolpairMiddleware(lambda *a: None)  # type: ignore[arg-type,return-value]
        finally:
            del os.environ["TOOLPAIR_MAX_BODY"]


@pytest.mark.parametrize("mode", ["repair", "reject", "observe"])
def test_logs_are_bounded_escaped_and_without_content(mode: str) -> None:
    # Observe mode logs at INFO: this app shows WARNING and above unless told.
    s = Served(TOOLPAIR_MODE=mode, TOOLPAIR_OBSERVE_LOG_LEVEL="WARNING")
    try:
        secret = "SECRET-CONTENT-42"
        history = log_flood(secret, "evil\nforged line\x1b[2J")
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": history}).encode()
        s.post("/v1/messages?key=" + secret, body)
        time.sleep(0.3)
    finally:
        log = s.stop()
    lines = [line for line in log.splitlines() if line.strip()]
    assert len(lines) == 1 and len(lines[0]) < 1024, lines[:3]
    assert "\x1b" not in log and secret not in log
