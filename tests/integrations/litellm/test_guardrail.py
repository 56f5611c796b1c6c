"""ToolpairGuardrail in the real LiteLLM: its Router (SDK, ``litellm.callbacks``) and a
real LiteLLM proxy started on a loopback port, in front of fake upstreams that record
every body LiteLLM sends after its own provider transformation: a strict one that
refuses what the hosted API refuses, a lax one (vLLM-like), one that is down. Every
broken case fails without toolpair and is judged valid, on the body the upstream
received, with it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anthropic
import litellm
import openai
import pytest
from litellm import Router

import toolpair
from tests.support.histories import DANGLING_CHAT, DANGLING_MESSAGES, ORPHAN_RESPONSES, TOOLS
from tests.support.upstream import Upstream
from toolpair.integrations.litellm import ToolpairGuardrail

from .deployments import Counting, deployment


def _router(up: Upstream) -> Router:
    return Router(
        model_list=[
            deployment("private-chat", "hosted_vllm/qwen3-coder", up.url("down/v1")),
            deployment("private-msgs", "anthropic/qwen3-coder", up.url("down")),
            deployment("lax-chat", "hosted_vllm/qwen3-coder", up.url("lax/v1")),
            deployment("hosted-claude", "anthropic/claude-sonnet-4-5", up.url("strict")),
            deployment("hosted-gpt", "openai/gpt-4.1", up.url("strict/v1")),
        ],
        fallbacks=[{"private-chat": ["hosted-claude"]}, {"private-msgs": ["hosted-claude"]}],
        num_retries=0,
    )


def _guarded(up: Upstream, callbacks: list[Any], **guardrail: Any) -> Router:
    """The router with a ToolpairGuardrail on, and the upstream's record cleared."""
    router = _router(up)
    callbacks.append(ToolpairGuardrail(**guardrail))
    up.clear()
    return router


def _failed_over_repaired(up: Upstream) -> Any:
    """The two attempts of a chat failover, each repaired: the first, to the lax
    endpoint, by OpenAI's rules; the fallback, after LiteLLM's translation, valid for
    Anthropic. The fallback's request."""
    down, strict = up.bodies()
    assert down.path == "/down/v1/chat/completions"
    assert toolpair.validate(down.body, "openai") == []
    assert strict.path == "/strict/v1/messages"
    assert toolpair.validate(strict.body, "anthropic") == []
    return strict


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved
    litellm.modify_params = False


def _strict_bodies(up: Upstream) -> list[Any]:
    return [s.body for s in up.bodies("strict")]


@pytest.mark.parametrize("modify_params", [False, True])
def test_chat_failover_is_repaired_for_each_attempt(
    up: Upstream, callbacks: list[Any], modify_params: bool
) -> None:
    router = _router(up)
    litellm.modify_params = modify_params
    if not modify_params:
        up.clear()
        with pytest.raises(litellm.ServiceUnavailableError, match="tool_result"):
            asyncio.run(
                router.acompletion(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS)
            )
    callbacks.append(ToolpairGuardrail())
    up.clear()
    out = asyncio.run(router.acompletion(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS))
    assert out.choices[0].message.content == "done"
    strict = _failed_over_repaired(up)
    assert strict.body["messages"][2]["content"][0]["tool_use_id"] == "call_1"


def test_native_messages_failover_is_repaired(up: Upstream, callbacks: list[Any]) -> None:
    router = _router(up)
    up.clear()
    # LiteLLM's own sanitiser does nothing for a native /v1/messages body.
    litellm.modify_params = True
    with pytest.raises(Exception):  # noqa: B017 (the status masks the cause: judged below)
        asyncio.run(
            router.aanthropic_messages(
                model="private-msgs", messages=DANGLING_MESSAGES, max_tokens=64
            )
        )
    [refused] = up.bodies("strict")
    assert toolpair.validate(refused.body, "anthropic")[0].code == "anthropic.missing_result"
    callbacks.append(ToolpairGuardrail())
    up.clear()
    out = asyncio.run(
        router.aanthropic_messages(model="private-msgs", messages=DANGLING_MESSAGES, max_tokens=64)
    )
    assert out["content"][0]["text"] == "done"
    assert [s.path for s in up.bodies()] == ["/down/v1/messages", "/strict/v1/messages"]
    for body in (s.body for s in up.bodies()):
        assert toolpair.validate(body, "anthropic") == []
        assert body["messages"][1] == DANGLING_MESSAGES[1]


def test_responses_are_repaired_and_stored_state_is_respected(
    up: Upstream, callbacks: list[Any]
) -> None:
    router = _router(up)
    up.clear()
    with pytest.raises(litellm.BadRequestError, match="No tool output found for function call"):
        asyncio.run(router.aresponses(model="hosted-gpt", input=ORPHAN_RESPONSES))
    callbacks.append(ToolpairGuardrail())
    up.clear()
    asyncio.run(router.aresponses(model="hosted-gpt", input=ORPHAN_RESPONSES))
    [body] = _strict_bodies(up)
    assert toolpair.validate(body, "openai-responses") == []
    # An output whose call lives in a stored response is no orphan: sent as it is.
    up.clear()
    stored = [{"type": "function_call_output", "call_id": "call_9", "output": "sunny"}]
    asyncio.run(router.aresponses(model="hosted-gpt", input=stored, previous_response_id="resp_0"))
    [body] = [s.body for s in up.bodies()]
    assert body["input"] == stored


def test_reject_mode_sends_nothing_and_triggers_no_fallback(
    up: Upstream, callbacks: list[Any]
) -> None:
    router = _guarded(up, callbacks, toolpair_mode="reject")
    with pytest.raises(Exception) as e:
        asyncio.run(router.acompletion(model="hosted-claude", messages=DANGLING_CHAT, tools=TOOLS))
    [v] = toolpair.validate(DANGLING_CHAT, "anthropic", format="openai")
    assert getattr(e.value, "status_code", None) == 400
    assert e.value.detail == v.message  # type: ignore[attr-defined]
    assert up.bodies() == []


def test_observe_mode_logs_and_tags_and_changes_nothing(
    up: Upstream, callbacks: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    router = _guarded(up, callbacks, toolpair_mode="observe")
    # Observe mode logs the event at INFO (a repair or a rejection at WARNING).
    with caplog.at_level(logging.INFO, logger="toolpair"):
        asyncio.run(router.acompletion(model="lax-chat", messages=DANGLING_CHAT, tools=TOOLS))
    [seen] = up.bodies()
    assert seen.body["messages"][2] == {"role": "user", "content": "and?"}
    assert "toolpair observed a history (openai format) for openai" in caplog.text
    assert "via litellm; rules: openai.missing_result" in caplog.text
    assert "sk-fake" not in caplog.text


def test_thinking_is_dropped_where_repair_turns_it_off(up: Upstream, callbacks: list[Any]) -> None:
    router = _router(up)
    callbacks.append(ToolpairGuardrail())
    # Thinking on, and the tool loop in progress starts without a thinking block.
    history = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}],
        },
    ]
    thinking = {"type": "enabled", "budget_tokens": 1024}
    assert toolpair.validate({"messages": history, "thinking": thinking}, "anthropic") != []
    up.clear()
    asyncio.run(
        router.aanthropic_messages(
            model="hosted-claude", messages=history, max_tokens=2048, thinking=thinking
        )
    )
    [body] = _strict_bodies(up)
    assert "thinking" not in body
    assert toolpair.validate(body, "anthropic") == []


def test_translated_routes_fire_twice_and_are_judged_by_the_deployments_api(
    up: Upstream, callbacks: list[Any]
) -> None:
    router = _router(up)
    # /v1/messages to an OpenAI deployment: LiteLLM runs the hook on the native body,
    # then again on its translation into OpenAI's Responses API.
    counting = Counting()
    seen = counting.seen
    callbacks.append(counting)
    up.clear()
    asyncio.run(
        router.aanthropic_messages(model="hosted-gpt", messages=DANGLING_MESSAGES, max_tokens=64)
    )
    assert seen == ["anthropic_messages", "aresponses"]
    [sent] = up.bodies("strict")
    assert sent.path == "/strict/v1/responses"
    assert toolpair.validate(sent.body, "openai-responses") == []
    assert any(i.get("call_id") == "toolu_01" for i in sent.body["input"])
    # /v1/responses to an Anthropic deployment, likewise.
    seen.clear()
    up.clear()
    asyncio.run(router.aresponses(model="hosted-claude", input=ORPHAN_RESPONSES))
    assert seen[0] == "aresponses"
    [sent] = up.bodies("strict")
    assert sent.path == "/strict/v1/messages"
    assert toolpair.validate(sent.body, "anthropic") == []


def test_the_same_broken_history_is_sent_the_same_every_time(
    up: Upstream, callbacks: list[Any]
) -> None:
    # A provider's prompt cache keys on the prefix: the repair must not vary per turn.
    router = _guarded(up, callbacks)
    for _ in range(2):
        asyncio.run(router.acompletion(model="hosted-claude", messages=DANGLING_CHAT, tools=TOOLS))
    first, second = _strict_bodies(up)
    assert toolpair.validate(first, "anthropic") == []
    assert first == second


def test_guardrail_opt_outs_do_not_switch_pairing_off(up: Upstream, callbacks: list[Any]) -> None:
    from litellm.types.guardrails import GuardrailEventHooks

    router = _router(up)
    g = ToolpairGuardrail(event_hook="pre_call")  # as `mode: pre_call` makes it
    callbacks.append(g)
    # An opt-out of global guardrails: the request's own flag (older releases) and what
    # the proxy injects for a key whose admin opted it out (newer ones).
    metadata = {
        "disable_global_guardrail": True,
        "user_api_key_metadata": {
            "disable_global_guardrails": True,
            "opted_out_global_guardrails": ["toolpair"],
        },
    }
    assert not g.should_run_guardrail(
        data={"metadata": metadata}, event_type=GuardrailEventHooks.pre_call
    )
    up.clear()
    asyncio.run(
        router.acompletion(
            model="hosted-claude", messages=DANGLING_CHAT, tools=TOOLS, metadata=metadata
        )
    )
    [body] = _strict_bodies(up)
    # The hosted API would refuse the history whatever the key's settings say.
    assert toolpair.validate(body, "anthropic") == []


def test_fixes_travel_in_the_requests_own_metadata(up: Upstream, callbacks: list[Any]) -> None:
    # No counter in the process (one per worker): the record rides on the request,
    # where LiteLLM's logging callbacks see it.
    from litellm.integrations.custom_logger import CustomLogger

    logged: list[Any] = []
    probe = secrets.token_hex(8)

    class Recorder(CustomLogger):
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            meta = (kwargs.get("litellm_params") or {}).get("metadata") or {}
            # Events of earlier requests may still be queued: keep this one's only.
            if meta.get("probe") == probe:
                logged.append(meta.get("toolpair"))

    router = _router(up)
    callbacks.extend([ToolpairGuardrail(), Recorder()])

    async def call() -> None:
        await router.acompletion(
            model="hosted-claude", messages=DANGLING_CHAT, tools=TOOLS, metadata={"probe": probe}
        )
        for _ in range(100):  # LiteLLM logs success in a task of its own
            if logged:
                return
            await asyncio.sleep(0.05)

    asyncio.run(call())
    assert logged == [{"rules": "anthropic", "fixes": ["synthetic_result"]}]


def test_chat_thinking_params_are_dropped_where_repair_turns_thinking_off(
    up: Upstream, callbacks: list[Any]
) -> None:
    router = _router(up)
    # A chat history whose tool loop in progress carries no thinking block.
    history = [*DANGLING_CHAT[:2], {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    thinking = {"type": "enabled", "budget_tokens": 1024}

    def send() -> Any:
        up.clear()
        return router.acompletion(
            model="hosted-claude", messages=history, tools=TOOLS, thinking=thinking, max_tokens=2048
        )

    with pytest.raises(Exception):  # noqa: B017 (judged on the body below)
        asyncio.run(send())
    [refused] = _strict_bodies(up)
    assert "thinking" in refused
    assert toolpair.validate(refused, "anthropic") != []
    callbacks.append(ToolpairGuardrail())
    asyncio.run(send())
    [body] = _strict_bodies(up)
    assert "thinking" not in body
    assert toolpair.validate(body, "anthropic") == []


def test_rules_per_deployment() -> None:
    g = ToolpairGuardrail()
    assert g.rules_for("openai", "anthropic", "claude-sonnet-4-5") == "anthropic"
    assert g.rules_for("openai", "hosted_vllm", "qwen3") == "openai"
    assert g.rules_for("openai", "bedrock", "us.anthropic.claude-sonnet-4-5") == "bedrock"
    assert g.rules_for("openai", "vertex_ai", "claude-sonnet-4-5") == "anthropic"
    assert g.rules_for("openai", "vertex_ai", "gemini-2.5-pro") == "vertex"
    assert g.rules_for("anthropic", "hosted_vllm", "qwen3") == "anthropic"
    assert g.rules_for("openai-responses", "openai", "gpt-5") == "openai-responses"
    assert ToolpairGuardrail(toolpair_rules="portable").rules_for("openai", "x", None) == "portable"
    with pytest.raises(ValueError, match="toolpair_mode must be one of"):
        ToolpairGuardrail(toolpair_mode="fix")


# -- a real LiteLLM proxy --------------------------------------------------------------


#: LiteLLM 1.108 and later: guardrails load by import path, and errors keep their type.
_NEW = tuple(int(x) for x in version("litellm").split(".")[:2]) >= (1, 108)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(up: Upstream, work: Path, mode: str) -> tuple[subprocess.Popen[bytes], str, str, Any]:
    models = []
    for entry in _router(up).model_list:
        params = {
            k: v
            for k, v in entry["litellm_params"].items()
            if k in ("model", "api_base", "api_key")
        }
        models.append({"model_name": entry["model_name"], "litellm_params": params})
    config: dict[str, Any] = {
        "model_list": models,
        "router_settings": {
            "num_retries": 0,
            "fallbacks": [{"private-chat": ["hosted-claude"]}, {"private-msgs": ["hosted-claude"]}],
        },
        "litellm_settings": {"request_timeout": 20},
        "guardrails": [
            {
                "guardrail_name": "toolpair",
                "litellm_params": {
                    "guardrail": "toolpair.integrations.litellm.ToolpairGuardrail",
                    "mode": "pre_call",
                    "default_on": True,
                    "toolpair_mode": mode,
                },
            },
        ],
    }
    if not _NEW:
        # Older proxies load a guardrail only from a file beside config.yaml: a one-line
        # shim re-exports the class (the docs give the same recipe).
        (work / "toolpair_guardrail.py").write_text(
            "from toolpair.integrations.litellm import ToolpairGuardrail  # noqa: F401\n"
        )
        config["guardrails"][0]["litellm_params"]["guardrail"] = (
            "toolpair_guardrail.ToolpairGuardrail"
        )
    # JSON is YAML: no YAML writer needed.
    (work / "config.yaml").write_text(json.dumps(config))
    key = "sk-" + secrets.token_hex(32)
    port = _free_port()
    env = {
        **os.environ,
        "LITELLM_MASTER_KEY": key,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DONT_SHOW_FEEDBACK_BOX": "true",
    }
    env.pop("DATABASE_URL", None)
    litellm_bin = Path(sys.executable).with_name("litellm")
    log = open(work / "proxy.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            str(litellm_bin),
            "--config",
            str(work / "config.yaml"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=work,
    )
    return proc, f"http://127.0.0.1:{port}", key, log


def _ready(proc: subprocess.Popen[bytes], url: str, work: Path) -> None:
    deadline = time.monotonic() + 80
    while True:
        try:
            with urllib.request.urlopen(url + "/health/liveliness", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("litellm proxy did not start:\n" + (work / "proxy.log").read_text()[-3000:])
        time.sleep(0.25)


@pytest.fixture(scope="module")
def gateways(up: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two real LiteLLM proxies, one repairing and one rejecting, started side by side."""
    pytest.importorskip("litellm.proxy.proxy_server")
    started = {}
    for mode in ("repair", "reject"):
        work = tmp_path_factory.mktemp(f"gateway-{mode}")
        started[mode] = (work, *_start(up, work, mode))
    for work, proc, url, _, _ in started.values():
        _ready(proc, url, work)
    yield {
        mode: {"url": url, "key": key, "log": work / "proxy.log"}
        for mode, (work, _, url, key, _) in started.items()
    }
    for _, proc, _, _, log in started.values():
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def gateway(gateways: dict[str, Any]) -> dict[str, Any]:
    return gateways["repair"]


def test_proxy_chat_failover_with_the_openai_sdk(up: Upstream, gateway: dict[str, Any]) -> None:
    client = openai.OpenAI(api_key=gateway["key"], base_url=gateway["url"], max_retries=0)
    up.clear()
    out = client.chat.completions.create(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS)
    assert out.choices[0].message.content == "done"
    paths = [s.path for s in up.bodies()]
    assert paths == ["/down/v1/chat/completions", "/strict/v1/messages"]
    assert toolpair.validate(up.bodies("strict")[0].body, "anthropic") == []
    assert toolpair.validate(up.bodies("down")[0].body, "openai") == []
    assert gateway["key"] not in gateway["log"].read_text()


def test_proxy_messages_failover_with_the_anthropic_sdk(
    up: Upstream, gateway: dict[str, Any]
) -> None:
    client = anthropic.Anthropic(api_key=gateway["key"], base_url=gateway["url"], max_retries=0)
    up.clear()
    out = client.messages.create(model="private-msgs", max_tokens=64, messages=DANGLING_MESSAGES)
    assert out.content[0].text == "done"
    bodies = up.bodies()
    assert [s.path for s in bodies] == ["/down/v1/messages", "/strict/v1/messages"]
    assert all(toolpair.validate(s.body, "anthropic") == [] for s in bodies)


def test_proxy_streams_and_valid_histories_arrive_unchanged(
    up: Upstream, gateway: dict[str, Any]
) -> None:
    client = openai.OpenAI(api_key=gateway["key"], base_url=gateway["url"], max_retries=0)
    valid = [*DANGLING_CHAT[:2], {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    up.clear()
    chunks = list(
        client.chat.completions.create(model="lax-chat", messages=valid, tools=TOOLS, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "part0 part1 part2 part3 "
    [seen] = up.bodies()
    # Nothing added, nothing moved: the tool message is the client's own.
    assert len(seen.body["messages"]) == 3
    assert seen.body["messages"][2] == valid[2]
    assert toolpair.validate(seen.body, "openai") == []


def test_proxy_reject_answers_400_in_the_endpoints_envelope(
    up: Upstream, gateways: dict[str, Any]
) -> None:
    gw = gateways["reject"]
    up.clear()
    client = openai.OpenAI(api_key=gw["key"], base_url=gw["url"], max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="private-chat", messages=DANGLING_CHAT, tools=TOOLS)
    [v] = toolpair.validate(DANGLING_CHAT, "openai")
    # LiteLLM's own OpenAI error body, with toolpair's envelope as the provider's fields.
    assert e.value.status_code == 400
    assert e.value.body["message"] == v.message
    if _NEW:
        assert e.value.body["type"] == "invalid_request_error"
    aclient = anthropic.Anthropic(api_key=gw["key"], base_url=gw["url"], max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as ae:
        aclient.messages.create(model="hosted-claude", max_tokens=64, messages=DANGLING_MESSAGES)
    [av] = toolpair.validate(DANGLING_MESSAGES, "anthropic")
    assert ae.value.status_code == 400
    if _NEW:
        assert ae.value.body["type"] == "error"
        assert ae.value.body["error"]["type"] == "invalid_request_error"
        assert ae.value.body["error"]["message"] == av.message
    else:  # older proxies answer every route in OpenAI's envelope
        assert ae.value.body["error"]["message"] == f"400: {av.message}"
    assert av.message.startswith("messages.1: `tool_use` ids were found without `tool_result`")
    # Nothing reached any upstream, and no fallback was tried.
    assert up.bodies() == []
