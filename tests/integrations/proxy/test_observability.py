"""Repairs you can see on the wire: `toolpair proxy --metrics` scraped with the
prometheus_client parser, and the ASGI middleware and the proxy's app with the real
OpenTelemetry SDK (in-memory exporters): one event per repaired or rejected request, none
for a valid one, the metrics path never forwarded."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import toolpair
from tests.support.histories import ORPHAN_MESSAGES as ORPHAN
from tests.support.otel import Otel, instrumented
from tests.support.upstream import Upstream
from toolpair.gateway.proxy import Settings, build_app
from toolpair.integrations.asgi import ToolpairMiddleware
from toolpair.integrations.opentelemetry import ToolpairInstrumentor

from .proxyproc import Proxy

BROKEN: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
    },
    {"role": "user", "content": "and?"},
]
VALID: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def _get(url: str, method: str = "GET") -> tuple[int, str, str]:
    req = urllib.request.Request(url, method=method, data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers["content-type"], r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["content-type"], e.read().decode()


def test_proxy_metrics_scraped_with_the_prometheus_parser(up: Upstream) -> None:
    p = Proxy(up.url("strict"), "--metrics")
    try:
        client = anthropic.Anthropic(api_key="sk-fake", base_url=p.url, max_retries=0, timeout=10)
        for messages in (BROKEN, VALID, BROKEN):
            client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=messages)  # type: ignore[arg-type]
        status, ctype, text = _get(p.url + "/toolpair/metrics")
        assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
        got = _samples(text)
        repairs = (
            "toolpair_repairs_total",
            frozenset({("provider", "anthropic"), ("source", "proxy"), ("mode", "repair")}),
        )
        assert got[repairs] == 2
        fixes = (
            "toolpair_fixes_total",
            frozenset({("kind", "synthetic_result"), ("provider", "anthropic")}),
        )
        assert got[fixes] == 2
        judged = {
            dict(k[1])["outcome"]: v for k, v in got.items() if k[0] == "toolpair_requests_total"
        }
        assert judged == {"repaired": 2, "valid": 1}
        http = ("toolpair_http_requests_total", frozenset({("method", "POST"), ("status", "200")}))
        assert got[http] == 3
        count = ("toolpair_http_request_duration_seconds_count", frozenset({("method", "POST")}))
        assert got[count] == 3
        assert got[("toolpair_repair_duration_seconds_count", frozenset())] == 2
        # The metrics path is answered by the proxy, never forwarded.
        assert _get(p.url + "/toolpair/metrics", "POST")[0] == 405
        assert [s.path for s in up.bodies()].count("/strict/toolpair/metrics") == 0
    finally:
        log = p.stop()
    lines = [line for line in log.splitlines() if "via proxy" in line]
    assert len(lines) == 2, log  # one line per repaired request, none for the valid one
    assert (
        "toolpair repaired a history (anthropic format) for anthropic (claude-sonnet-4-5)"
        " at 127.0.0.1 via proxy: 1 synthetic_result" in lines[0]
    )


def test_metrics_refuse_several_workers(up: Upstream) -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolpair",
            "proxy",
            "--upstream",
            up.url("strict"),
            "--port",
            "0",
            "--metrics",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "--workers 1" in r.stderr


@pytest.fixture
def otel() -> Iterator[Otel]:
    with instrumented() as o:
        yield o


def _app(mode: str, seen: list[bytes]) -> Any:
    async def record(request: Request) -> Any:
        seen.append(await request.body())
        return JSONResponse({"ok": True})

    app = Starlette(routes=[Route("/v1/messages", record, methods=["POST"])])
    app.add_middleware(ToolpairMiddleware, mode=mode, metrics=True)
    return app


def _post(o: Otel, app: Any, span: str, messages: list[dict[str, Any]]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as c:
            with o.tracer.start_as_current_span(span):
                return await c.post(
                    "/v1/messages",
                    content=json.dumps({"model": "m", "max_tokens": 5, "messages": messages}),
                )

    return asyncio.run(go())


def test_middleware_one_event_per_repaired_request(otel: Otel) -> None:
    seen: list[bytes] = []
    app = _app("repair", seen)
    heard: list[toolpair.RepairEvent] = []
    toolpair.subscribe(heard.append)
    try:
        assert _post(otel, app, "broken", BROKEN).status_code == 200
        assert _post(otel, app, "valid", VALID).status_code == 200
        assert _post(otel, app, "orphan", ORPHAN).status_code == 200
    finally:
        toolpair.unsubscribe(heard.append)
    assert [(e.source, e.mode, dict(e.fixes)) for e in heard] == [
        ("asgi", "repair", {"synthetic_result": 1}),
        ("asgi", "repair", {"orphan_result_dropped": 1}),
    ]
    [broken] = otel.span_events("broken")
    assert broken["toolpair.source"] == "asgi" and broken["toolpair.model"] == "m"
    assert broken["toolpair.fix.kinds"] == ("synthetic_result",)
    assert broken["toolpair.rule.ids"] == ("anthropic.missing_result",)
    assert "gen_ai.conversation.compacted" not in otel.span_attributes("broken")
    assert otel.span_events("valid") == []
    assert otel.span_attributes("orphan")["gen_ai.conversation.compacted"] is True
    assert otel.repairs() == {("asgi", "repair"): 2}
    assert toolpair.validate(json.loads(seen[0]), "anthropic") == []


@pytest.mark.parametrize("mode", ["reject", "observe"])
def test_middleware_reject_and_observe_are_one_event(otel: Otel, mode: str) -> None:
    seen: list[bytes] = []
    app = _app(mode, seen)
    r = _post(otel, app, mode, BROKEN)
    assert r.status_code == (400 if mode == "reject" else 200)
    [event] = otel.span_events(mode)
    assert event["toolpair.mode"] == mode and event["toolpair.fix.count"] == 0
    assert event["toolpair.rule.ids"] == ("anthropic.missing_result",)
    assert event["toolpair.ids"] == ("toolu_01",)
    _post(otel, app, "fine", VALID)
    assert otel.span_events("fine") == []
    assert otel.repairs() == {("asgi", mode): 1}


def test_middleware_metrics_never_reach_the_app() -> None:
    seen: list[bytes] = []
    app = _app("repair", seen)

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as c:
            await c.post("/v1/messages", content=json.dumps({"messages": BROKEN}))
            return await c.get("/toolpair/metrics")

    r = asyncio.run(go())
    assert r.status_code == 200
    got = _samples(r.text)
    key = frozenset({("provider", "anthropic"), ("source", "asgi"), ("mode", "repair")})
    assert got[("toolpair_repairs_total", key)] == 1
    assert len(seen) == 1  # only the POST reached the app


def test_proxy_app_creates_a_span_only_when_asked(up: Upstream) -> None:
    o = Otel()
    inst = ToolpairInstrumentor()
    app = build_app(Settings(upstream=up.url("strict")))
    body = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": BROKEN}

    async def go() -> None:
        # One loop for both requests: the proxy's pooled client lives on it.
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as c:
            inst.instrument(tracer_provider=o.tracer_provider, meter_provider=o.meter_provider)
            assert (await c.post("/v1/messages", content=json.dumps(body))).status_code == 200
            # No current span: none is created, the metrics still count.
            assert o.spans.get_finished_spans() == ()
            assert o.repairs() == {("proxy", "repair"): 1}
            inst.uninstrument()
            inst.instrument(
                tracer_provider=o.tracer_provider,
                meter_provider=o.meter_provider,
                create_span=True,
            )
            assert (await c.post("/v1/messages", content=json.dumps(body))).status_code == 200
        await app.app.app.client().aclose()

    try:
        asyncio.run(go())
    finally:
        inst.uninstrument()
    [event] = o.span_events("toolpair.repair")
    assert event["toolpair.source"] == "proxy" and event["toolpair.host"] == "127.0.0.1"
    assert event["toolpair.model"] == "claude-sonnet-4-5"
