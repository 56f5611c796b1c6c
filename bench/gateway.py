"""Gateway benchmarks: what `toolpair proxy` and the LiteLLM guardrail add per request.

    python bench/gateway.py            # the table (a minute or two on two cores)
    python bench/gateway.py --quick    # fewer requests (a smoke test)

Everything runs on loopback against a local upstream that answers at once, so the
figures are the gateway's own cost. The toolpair proxy and a bare pass-through (the same
uvicorn server and pooled forwarder with judging off) run as processes side by side,
requests to the two interleaved so that load from elsewhere hits both alike; added
latency is the difference of their percentiles. Clients keep their connection alive, as
every SDK does; a new connection per request is measured apart. Histories are
bench/histories.py's valid ones (the normal case: nearly every request is already valid
and goes through byte-identical); the load run (thousands of requests, 50 connections
at once, then it stops) sends half of them broken and counts every reply.
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


class _Client:
    """One keep-alive connection, reused request after request, as the SDKs keep theirs
    (or a new connection per request with ``fresh``)."""

    def __init__(self, port: int, fresh: bool = False) -> None:
        self.port = port
        self.fresh = fresh
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, raw: bytes, stream: bool = False) -> tuple[float, float]:
        """(time to the first byte of the body, total) for one request."""
        if self.fresh:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        t0 = time.perf_counter()
        headers = {"content-type": "application/json"}
        if stream:
            headers["x-stream"] = "1"
        self.conn.request("POST", "/v1/chat/completions", raw, headers)
        r = self.conn.getresponse()
        r.read1(1)
        first = time.perf_counter() - t0
        r.read()
        total = time.perf_counter() - t0
        if self.fresh:
            self.conn.close()
        return first, total


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class _Proxy:
    """A proxy process: `toolpair proxy` itself, or (``mode`` None) the same server and
    forwarder with judging off, the bare pass-through it is measured against."""

    def __init__(self, up_port: int, mode: str | None) -> None:
        code = (
            "import sys; from toolpair.gateway.proxy import Settings, serve; "
            f"serve(Settings(upstream='http://127.0.0.1:{up_port}', mode={mode!r}, port=0))"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().split("http://127.0.0.1:", 1)[1].split()[0])

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _load(port: int, bodies: list[bytes], concurrency: int) -> tuple[int, float]:
    """Every body POSTed once, over ``concurrency`` keep-alive connections at once: how
    many got a complete 200, and the seconds it took."""
    queue = list(reversed(bodies))
    ok = 0

    async def worker() -> None:
        nonlocal ok
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while queue:
            raw = queue.pop()
            writer.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: b\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(raw), raw)
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
            ok += head.startswith(b"HTTP/1.1 200 ") and body == REPLY
        writer.close()

    t = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok, time.perf_counter() - t


def proxy_rows(requests: int, load: int) -> list[tuple[str, str, str, str]]:
    _Upstream.disable_nagle_algorithm = True  # the upstream must not stall either side
    up = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    up.daemon_threads = True
    up.request_queue_size = 256
    up_port = _serve(up)
    judged = _Proxy(up_port, "repair")
    bare = _Proxy(up_port, None)
    rows = []
    try:
        for fresh in (False, True):
            how = "new connection per request" if fresh else "keep-alive client"
            a_client, b_client = _Client(judged.port, fresh), _Client(bare.port, fresh)
            for n in (20, 500):
                msgs = H.wire("openai", n)
                raw = json.dumps({"model": "gpt-4.1", "messages": msgs}).encode()
                for _ in range(20):  # warm up both
                    a_client.post(raw)
                    b_client.post(raw)
                a: list[float] = []
                b: list[float] = []
                for _ in range(requests):
                    a.append(a_client.post(raw)[1])
                    b.append(b_client.post(raw)[1])
                size = f"{len(msgs)} messages, {len(raw) / 1e3:.0f} kB"
                for q, name in ((0.5, "p50"), (0.99, "p99")):
                    added = (_pct(a, q) - _pct(b, q)) * 1e3
                    target = "<= 1 ms" if name == "p50" and n == 20 and not fresh else ""
                    rows.append(
                        (f"proxy, {how}: added latency, {name}", size, f"{added:.2f} ms", target)
                    )
                if not fresh:
                    sa, sb = [], []
                    for _ in range(requests):
                        sa.append(a_client.post(raw, stream=True)[0])
                        sb.append(b_client.post(raw, stream=True)[0])
                    added = (statistics.median(sa) - statistics.median(sb)) * 1e3
                    rows.append(
                        (
                            f"proxy, {how}: streaming time to first byte, added (p50)",
                            size,
                            f"{added:.2f} ms",
                            "<= 1 ms" if n == 20 else "",
                        )
                    )
        msgs20 = H.wire("openai", 20)
        broken20 = H.wire("openai", 20, defects=True)
        bodies = [
            json.dumps(
                {"model": "gpt-4.1", "messages": broken20 if i % 2 else msgs20, "user": f"r{i}"}
            ).encode()
            for i in range(load)
        ]
        rates = {}
        for name, p in (("toolpair", judged), ("bare", bare)):
            ok, took = asyncio.run(_load(p.port, bodies, 50))
            rates[name] = ok / took
            if name == "toolpair":
                lost = load - ok
                rss = p.rss_mib()
        rows.append(
            (
                "proxy: requests per second, 50 keep-alive clients at once",
                f"{load} requests of 20 messages, half broken",
                f"{rates['toolpair']:.0f}/s (bare {rates['bare']:.0f}/s, "
                f"{rates['toolpair'] / rates['bare']:.2f}x)",
                "",
            )
        )
        rows.append(("proxy: requests lost in that run", f"{load} requests", str(lost), "0"))
        rows.append(("proxy: resident memory after that run", "", f"{rss:.0f} MiB", ""))
    finally:
        judged.stop()
        bare.stop()
    return rows


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
    rows = proxy_rows(requests, 500 if args.quick else 5000) + guardrail_rows(requests // 3)
    print("| figure | sizes | measured | target |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
