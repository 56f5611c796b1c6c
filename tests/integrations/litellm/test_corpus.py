"""ToolpairGuardrail's corpus recording in the real LiteLLM SDK Router: fake upstreams on
loopback that refuse what toolpair calls valid, or take what toolpair would change, and
the anonymised case each disagreement leaves in ``record_dir`` (read back by
``toolpair corpus check``)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import litellm
import pytest
from litellm import Router

from tests.support.histories import TOOLS
from tests.support.loopback import QuietHandler, serve
from tests.support.replies import anthropic_message, chat_completion
from toolpair.cli import main
from toolpair.integrations.litellm import ToolpairGuardrail

from .deployments import deployment

SECRET = "s3cr3t-marker"
REFUSAL = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "messages.2: `tool_use` ids were found without `tool_result` blocks "
        "immediately after: toolu_X",
    },
}
CHAT_REFUSAL = {
    "error": {"message": "Invalid parameter: messages", "type": "invalid_request_error"}
}


def call(id_: str, args: str = "{}") -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": "weather", "arguments": args}}


VALID = [
    {"role": "user", "content": f"weather in {SECRET}?"},
    {"role": "assistant", "content": None, "tool_calls": [call("call_1", '{"city": "x"}')]},
    {"role": "tool", "tool_call_id": "call_1", "content": f"sunny in {SECRET}"},
]
DANGLING = [
    {"role": "user", "content": f"weather in {SECRET}?"},
    {"role": "assistant", "content": None, "tool_calls": [call("call_1")]},
    {"role": "user", "content": f"and {SECRET}?"},
]


class Upstream:
    """``/refuse/...`` answers the API's 400 to anything, ``/accept/...`` takes anything,
    ``/down/...`` answers 503. Every request body is kept."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        me = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                me.seen.append((self.path, json.loads(self.body())))
                messages = self.path.endswith("/messages")
                kind = self.path.split("/")[1]
                if kind == "down":
                    code, reply = 503, {"error": {"message": "down"}}
                elif kind == "refuse":
                    code, reply = 400, REFUSAL if messages else CHAT_REFUSAL
                else:
                    code, reply = (
                        200,
                        (anthropic_message() if messages else chat_completion(model="qwen3-coder")),
                    )
                self.answer(code, json.dumps(reply).encode())

        self.server = serve(Handler)

    def url(self, prefix: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{prefix}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def up() -> Iterator[Upstream]:
    # This module's scripted upstream, not the shared one.
    u = Upstream()
    yield u
    u.close()


#: LiteLLM copies a callback into its logging lists once, and then skips any other
#: instance of the same class with the same settings: each test starts from clean lists.
_LISTS = (
    "callbacks",
    "_async_success_callback",
    "_async_failure_callback",
    "success_callback",
    "failure_callback",
)


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = {name: list(getattr(litellm, name)) for name in _LISTS}
    for name in _LISTS:
        lst = getattr(litellm, name)
        lst[:] = [c for c in lst if not isinstance(c, ToolpairGuardrail)]
    yield litellm.callbacks
    for name, items in saved.items():
        getattr(litellm, name)[:] = items


def _router(up: Upstream) -> Router:
    return Router(
        model_list=[
            deployment("claude-refuses", "anthropic/claude-sonnet-4-5", up.url("refuse")),
            deployment("claude-accepts", "anthropic/claude-sonnet-4-5", up.url("accept")),
            deployment("vllm-accepts", "hosted_vllm/qwen3-coder", up.url("accept/v1")),
            deployment("vllm-down", "hosted_vllm/qwen3-coder", up.url("down/v1")),
        ],
        fallbacks=[{"vllm-down": ["claude-refuses"]}],
        num_retries=0,
    )


def _send(router: Router, group: str, messages: list[dict[str, Any]]) -> BaseException | None:
    async def go() -> BaseException | None:
        try:
            await router.acompletion(model=group, messages=messages, tools=TOOLS)
            out = None
        except Exception as e:
            out = e
        # LiteLLM logs in tasks of its own: let them finish before the loop closes.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if others:
            await asyncio.wait(others, timeout=5)
        return out

    return asyncio.run(go())


def _cases(root: Path, n: int, timeout: float = 10.0) -> list[tuple[Path, dict[str, Any]]]:
    """The cases under ``root`` once there are ``n`` (LiteLLM logs in tasks of its own)."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(p for p in root.rglob("*.json") if not p.name.startswith("."))
        if len(found) >= n or time.monotonic() > deadline:
            return [(p, json.loads(p.read_text())) for p in found]
        time.sleep(0.05)


def test_a_refusal_of_a_body_toolpair_called_valid_is_recorded(
    up: Upstream, callbacks: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    callbacks.append(ToolpairGuardrail(record_dir=str(tmp_path)))
    err = _send(_router(up), "claude-refuses", VALID)
    assert getattr(err, "status_code", None) == 400
    [(path, case)] = _cases(tmp_path, 1)
    text = path.read_text()
    assert path.parent.name == "anthropic"
    assert SECRET not in text
    assert "sk-fake" not in text
    assert "/refuse" not in text  # the host only: no port, path, query or key
    assert case["status"] == 400 and case["disagreement"] == "refused"
    assert case["error"] == REFUSAL["error"]["message"]  # verbatim
    assert case["source"]["via"] == "litellm"
    assert case["model"] == "claude-sonnet-4-5" and case["host"] == "127.0.0.1"
    # The body the provider received, after LiteLLM's translation: Anthropic blocks,
    # ids and roles as sent.
    sent = [b for p, b in up.seen if p.startswith("/refuse/")][-1]
    msgs = case["body"]["messages"]
    assert [m["role"] for m in msgs] == [m["role"] for m in sent["messages"]]
    assert msgs[1]["content"][-1]["type"] == "tool_use"
    assert msgs[1]["content"][-1]["id"] == sent["messages"][1]["content"][-1]["id"]
    assert msgs[2]["content"][0]["tool_use_id"] == msgs[1]["content"][-1]["id"]
    # The case reads back as a missed refusal.
    assert main(["corpus", "check", str(tmp_path), "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["providers"]["anthropic"]["missed_refusals"] == 1


def test_observe_mode_records_an_acceptance_of_a_body_toolpair_would_change(
    up: Upstream, callbacks: list[Any], tmp_path: Path
) -> None:
    callbacks.append(ToolpairGuardrail(toolpair_mode="observe", record_dir=str(tmp_path)))
    assert _send(_router(up), "vllm-accepts", DANGLING) is None
    [(path, case)] = _cases(tmp_path, 1)
    assert SECRET not in path.read_text()
    assert path.parent.name == "openai"  # the rules of the API the endpoint copies
    assert case["status"] == 200 and case["disagreement"] == "accepted"
    assert "error" not in case
    msgs = case["body"]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["tool_calls"][0]["id"] == "call_1"
    assert msgs[1]["tool_calls"][0]["function"]["name"] == "weather"


def test_agreements_are_not_recorded(up: Upstream, callbacks: list[Any], tmp_path: Path) -> None:
    callbacks.append(ToolpairGuardrail(record_dir=str(tmp_path)))
    router = _router(up)
    assert _send(router, "claude-accepts", VALID) is None
    # Repair mode: the dangling call is answered before it goes, and the provider takes it.
    assert _send(router, "claude-accepts", DANGLING) is None
    assert _send(router, "vllm-accepts", DANGLING) is None
    time.sleep(1.0)  # LiteLLM's logging tasks have run
    assert _cases(tmp_path, 0, timeout=0) == []


def test_each_attempt_is_judged_and_only_a_refusal_counts(
    up: Upstream, callbacks: list[Any], tmp_path: Path
) -> None:
    # vllm-down answers 503 (says nothing of the body): not recorded; its fallback's 400
    # of a valid body is.
    callbacks.append(ToolpairGuardrail(record_dir=str(tmp_path)))
    err = _send(_router(up), "vllm-down", VALID)
    assert err is not None
    cases = _cases(tmp_path, 1)
    time.sleep(0.5)
    assert [(c["provider"], c["status"]) for _, c in _cases(tmp_path, 1, 0)] == [("anthropic", 400)]
    assert len(cases) == 1


def test_the_directory_from_the_environment_and_the_hourly_cap(
    up: Upstream,
    callbacks: list[Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("TOOLPAIR_RECORD_DIR", str(tmp_path))
    monkeypatch.setenv("TOOLPAIR_RECORD_PER_HOUR", "1")
    guard = ToolpairGuardrail()
    assert guard.recorder is not None and guard.recorder.per_hour == 1
    callbacks.append(guard)
    router = _router(up)
    with caplog.at_level(logging.WARNING, logger="toolpair.corpus"):
        _send(router, "claude-refuses", VALID)
        _cases(tmp_path, 1)
        longer = [*VALID, {"role": "user", "content": "and tomorrow?"}]
        _send(router, "claude-refuses", longer)
        deadline = time.monotonic() + 10
        while guard.recorder.dropped < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(_cases(tmp_path, 1, 0)) == 1
    assert guard.recorder.dropped == 1
    assert [r for r in caplog.records if "cap of 1 per hour" in r.getMessage()]


def test_without_a_directory_nothing_is_recorded(
    up: Upstream, callbacks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLPAIR_RECORD_DIR", raising=False)
    guard = ToolpairGuardrail()
    assert guard.recorder is None
    callbacks.append(guard)
    assert getattr(_send(_router(up), "claude-refuses", VALID), "status_code", None) == 400


def test_a_guardrails_refusal_is_not_the_providers(
    up: Upstream, callbacks: list[Any], tmp_path: Path
) -> None:
    # reject mode answers the dangling call itself with a 400: nothing reached the
    # provider, so there is nothing to learn. A valid body it lets through and the
    # provider refuses is a case, in this mode too.
    callbacks.append(ToolpairGuardrail(toolpair_mode="reject", record_dir=str(tmp_path)))
    router = _router(up)
    before = len(up.seen)
    assert getattr(_send(router, "claude-refuses", DANGLING), "status_code", None) == 400
    assert len(up.seen) == before
    time.sleep(0.5)
    assert _cases(tmp_path, 0, timeout=0) == []
    _send(router, "claude-refuses", VALID)
    [(_, case)] = _cases(tmp_path, 1)
    assert case["disagreement"] == "refused"


def test_sync_calls_are_recorded_too(up: Upstream, callbacks: list[Any], tmp_path: Path) -> None:
    callbacks.append(ToolpairGuardrail(toolpair_mode="observe", record_dir=str(tmp_path)))
    router = _router(up)
    with pytest.raises(Exception) as refused:
        router.completion(model="claude-refuses", messages=VALID, tools=TOOLS)
    assert getattr(refused.value, "status_code", None) == 400
    router.completion(model="vllm-accepts", messages=DANGLING, tools=TOOLS)
    cases = _cases(tmp_path, 2)
    assert sorted((c["provider"], c["disagreement"]) for _, c in cases) == [
        ("anthropic", "refused"),
        ("openai", "accepted"),
    ]
