"""Gateway benchmarks: what `toolpair proxy` and the LiteLLM guardrail add per request.

    python bench/gateway.py            # the table (about a minute on two cores)
    python bench/gateway.py --quick    # fewer requests (a smoke test)

Everything runs on loopback against a local upstream that answers at once, so the
figures are the gateway's own cost. The toolpair proxy and a bare pass-through (the same
proxy with judging off) run side by side, requests to the two interleaved so that load
from elsewhere hits both alike; added latency is the difference of their percentiles.
Histories are bench/histories.py's valid ones (the normal case: nearly every request is
already valid and goes through byte-identical).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import logging
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import histories as H

from toolpair.gateway import proxy

logging.getLogger("toolpair").addHandler(logging.NullHandler())
logging.getLogger("toolpair").propagate = False

REPLY = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        if b"stream" in self.path.encode() or self.headers.get("x-stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            ev = b'data: {"x": 1}\n\n'
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(ev), ev))
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)


def _serve(server: ThreadingHTTPServer) -> int:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


def _post(port: int, raw: bytes, stream: bool = False) -> tuple[float, float]:
    """(time to the first byte of the body, total) for one request on a new connection,
    as a client without connection reuse sends it."""
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"content-type": "application/json"}
    if stream:
        headers["x-stream"] = "1"
    conn.request("POST", "/v1/chat/completions", raw, headers)
    r = conn.getresponse()
    r.read1(1)
    first = time.perf_counter() - t0
    r.read()
    conn.close()
    return first, time.perf_counter() - t0


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def proxy_rows(requests: int) -> list[tuple[str, str, str, str]]:
    up = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    up.daemon_threads = True
    up_port = _serve(up)
    target = proxy.Upstream(f"http://127.0.0.1:{up_port}")
    judged = _serve(proxy.ProxyServer(("127.0.0.1", 0), target, "repair"))
    bare = _serve(proxy.ProxyServer(("127.0.0.1", 0), target, None))
    rows = []
    for n in (20, 500):
        msgs = H.wire("openai", n)
        raw = json.dumps({"model": "gpt-4.1", "messages": msgs}).encode()
        for _ in range(20):  # warm up both
            _post(judged, raw)
            _post(bare, raw)
        a: list[float] = []
        b: list[float] = []
        for _ in range(requests):
            a.append(_post(judged, raw)[1])
            b.append(_post(bare, raw)[1])
        size = f"{len(msgs)} messages, {len(raw) / 1e3:.0f} kB"
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            added = (_pct(a, q) - _pct(b, q)) * 1e3
            target_ = "<= 1 ms" if name == "p50" else ""
            rows.append(
                (
                    f"proxy: added latency over a bare pass-through, {name}",
                    size,
                    f"{added:.2f} ms",
                    target_,
                )
            )
        if n == 500:
            sa, sb = [], []
            for _ in range(requests):
                sa.append(_post(judged, raw, stream=True)[0])
                sb.append(_post(bare, raw, stream=True)[0])
            added = (statistics.median(sa) - statistics.median(sb)) * 1e3
            rows.append(
                (
                    "proxy: streaming time to first byte, added (p50)",
                    size,
                    f"{added:.2f} ms",
                    "<= 1 ms",
                )
            )
    rows.append(_memory_row(up_port, requests))
    return rows


def _memory_row(up_port: int, requests: int) -> tuple[str, str, str, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolpair",
            "proxy",
            "--upstream",
            f"http://127.0.0.1:{up_port}",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split("http://127.0.0.1:", 1)[1].split()[0])
        raw = json.dumps({"model": "gpt-4.1", "messages": H.wire("openai", 500)}).encode()
        broken = json.dumps(
            {"model": "gpt-4.1", "messages": H.wire("openai", 500, defects=True)}
        ).encode()
        for i in range(requests):
            _post(port, broken if i % 2 else raw)
        with open(f"/proc/{proc.pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    finally:
        proc.terminate()
        proc.wait(10)
    return (
        "proxy: resident memory after the run",
        f"{requests} requests of 500 messages, half broken",
        f"{rss / 1024:.0f} MiB",
        "",
    )


def guardrail_rows(requests: int) -> list[tuple[str, str, str, str]]:
    try:
        import litellm
        from litellm import Router

        from toolpair.integrations.litellm import ToolpairGuardrail
    except ImportError:
        return [("litellm guardrail: cost over LiteLLM's own per-request time", "", "n/a", "<= 5%")]
    up = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    up.daemon_threads = True
    port = _serve(up)
    router = Router(
        model_list=[
            {
                "model_name": "m",
                "litellm_params": {
                    "model": "hosted_vllm/m",
                    "api_base": f"http://127.0.0.1:{port}/v1",
                    "api_key": "sk-x",
                },
            }
        ],
        num_retries=0,
    )
    guard = ToolpairGuardrail()
    rows = []

    async def run(msgs: list[Any]) -> tuple[float, float]:
        with_, without = [], []
        for i in range(requests + 10):
            for on in (True, False):
                litellm.callbacks = [guard] if on else []
                t = time.perf_counter()
                await router.acompletion(model="m", messages=msgs)
                if i >= 10:
                    (with_ if on else without).append(time.perf_counter() - t)
        litellm.callbacks = []
        return statistics.median(with_), statistics.median(without)

    for n in (20, 500):
        msgs = H.wire("openai", n)
        a, b = asyncio.run(run(msgs))
        rows.append(
            (
                "litellm guardrail: cost over LiteLLM's own per-request time (p50)",
                f"{len(msgs)} messages; LiteLLM alone {b * 1e3:.1f} ms",
                f"{(a - b) / b * 100:+.1f}%",
                "<= 5%",
            )
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    requests = 40 if args.quick else 300
    rows = proxy_rows(requests) + guardrail_rows(requests // 3)
    print("| figure | sizes | measured | target |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
