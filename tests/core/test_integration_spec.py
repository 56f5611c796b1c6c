"""The one registry of framework integrations, the one LiteLLM routing, and the one
per-request `Guard` (``toolpair.integrations._base``): stdlib only, so tested here on the
core's own wire formats, with no framework installed."""

from __future__ import annotations

import configparser
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import tomllib

import toolpair
from toolpair import Policy, Repaired, RepairEvent
from toolpair._frameworks import INTEGRATIONS
from toolpair.cli.reading import FRAMEWORKS
from toolpair.integrations._base import Guard, Integration, Target, older_than, status_of
from toolpair.integrations._hosts import by_class, litellm_target
from toolpair.testing import FRAMEWORK_MODULES

ROOT = Path(__file__).resolve().parents[2]


# -- the registry -----------------------------------------------------------------------


def _tox() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "tox.ini")
    return cfg


def _oldest_pin(framework: str) -> tuple[str, str] | None:
    """(distribution, version) the framework's oldest tox env pins, or None."""
    cfg = _tox()
    extra = INTEGRATIONS[framework].extra
    for env in (f"testenv:{extra}-oldest", f"testenv:{extra}-v1"):
        if not cfg.has_section(env):
            continue
        deps = cfg.get(env, "deps")
        m = re.search(r"-r\s+(\S+)", deps)
        assert m, f"{env} names no requirements file"
        return _pin_in(ROOT / m.group(1), INTEGRATIONS[framework].minimum[0])
    return None


def _pin_in(path: Path, dist: str) -> tuple[str, str]:
    norm = re.sub(r"[-_.]+", "-", dist).lower()
    for line in path.read_text().splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*==\s*([^\s;#]+)", line)
        if m and re.sub(r"[-_.]+", "-", m.group(1)).lower() == norm:
            return m.group(1), m.group(3)
    raise AssertionError(f"{path.relative_to(ROOT)} pins no {dist}")


@pytest.mark.parametrize("name", sorted(INTEGRATIONS))
def test_each_oldest_env_pins_the_registered_minimum(name: str) -> None:
    """The registry is the one home of each minimum version: the oldest env of every
    framework (``<extra>-oldest``, or pydantic-ai's 1.x env) installs exactly that
    release (a patch release of it where the minimum names only major.minor)."""
    minimum = INTEGRATIONS[name].minimum[1]
    pinned = _oldest_pin(name)
    assert pinned is not None, f"no oldest env for {name}"
    assert pinned[1] == minimum or pinned[1].startswith(minimum + "."), (name, pinned, minimum)


@pytest.mark.parametrize("name", sorted(INTEGRATIONS))
def test_each_extra_requires_the_registered_minimum(name: str) -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    framework = INTEGRATIONS[name]
    extra = data["project"]["optional-dependencies"][framework.extra]
    assert framework.requires in extra, (framework.extra, extra)


def test_the_cli_and_the_testing_kit_read_the_one_registry() -> None:
    assert FRAMEWORKS == {
        "pydantic-ai": "toolpair.integrations.pydantic_ai",
        "langchain": "toolpair.integrations.langchain",
        "openai-agents": "toolpair.integrations.openai_agents",
    }
    assert FRAMEWORK_MODULES == {
        "pydantic_ai": "toolpair.integrations.pydantic_ai",
        "langchain": "toolpair.integrations.langchain",
        "agno": "toolpair.integrations.agno",
        "llamaindex": "toolpair.integrations.llamaindex",
        "openai_agents": "toolpair.integrations.openai_agents",
    }
    packages = {p.name for p in (ROOT / "integrations").iterdir() if (p / "__init__.py").exists()}
    # The wire integrations (a guardrail, a middleware) and OpenTelemetry are not framework
    # integrations.
    assert set(INTEGRATIONS) == packages - {"litellm", "asgi", "opentelemetry"}


def test_older_than_reads_the_installed_release() -> None:
    assert older_than("pytest>=1.0") is None
    assert older_than("pytest>=999.0") is not None
    assert "pytest>=999.0" in (older_than("pytest>=999.0") or "")
    # A distribution that is not installed is not "too old": its import says so.
    assert older_than("no-such-dist-toolpair>=1.0") is None


# -- the one LiteLLM routing --------------------------------------------------------------

#: model string -> (rules, model id), as LiteLLM routes it.
LITELLM = {
    "anthropic/claude-sonnet-4-5": ("anthropic", "claude-sonnet-4-5"),
    # A Claude model on Vertex goes out in Anthropic's format, as the guardrail holds it.
    "vertex_ai/claude-sonnet-4-5@20250929": ("anthropic", "claude-sonnet-4-5@20250929"),
    "vertex_ai/gemini-2.5-pro": ("vertex", "gemini-2.5-pro"),
    "vertex_ai_beta/gemini-2.5-pro": ("vertex", "gemini-2.5-pro"),
    "gemini/gemini-2.5-pro": ("gemini", "gemini-2.5-pro"),
    "bedrock/us.anthropic.claude-3-5-sonnet": ("bedrock", "us.anthropic.claude-3-5-sonnet"),
    "openai/gpt-4o": ("openai", "gpt-4o"),
    "azure/gpt-4o": ("openai", "gpt-4o"),
    "mistral/mistral-large-latest": ("mistral", "mistral-large-latest"),
    "deepseek/deepseek-chat": ("deepseek", "deepseek-chat"),
    "ollama/llama3": ("portable", "llama3"),
    "claude-sonnet-4-5": ("anthropic", "claude-sonnet-4-5"),
    "gpt-4o": ("openai", "gpt-4o"),
}


@pytest.mark.parametrize(("model", "expected"), sorted(LITELLM.items()))
def test_litellm_target(model: str, expected: tuple[str, str]) -> None:
    assert litellm_target(model) == expected
    assert expected[0] in toolpair.PROVIDERS


def test_by_class_walks_the_mro_and_unwraps() -> None:
    class Base:
        pass

    class Sub(Base):
        pass

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    assert by_class(Sub(), {"Base": "x"}) is not None
    sub = Sub()
    assert by_class(Wrapper(sub), {"Base": "x"}, unwrap=("inner",)) == (sub, "x")
    assert by_class(Wrapper(sub), {"Base": "x"}) is None


# -- the Guard ----------------------------------------------------------------------------


class _Wire(Integration):
    """An integration whose framework hands the Guard Anthropic Messages dicts (a real
    core codec), and whose model object is the provider's name."""

    name = "strands"  # a registered name: the event's source

    def detect(self, model: object) -> Target:
        return Target(model if isinstance(model, str) else "portable", "claude-sonnet-4-5")

    def codec(self, target: Target) -> str:
        return "anthropic"


def _dangling() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]


def _valid() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_one_event_per_repaired_request_and_on_repair_gets_it(
    subscribed: list[RepairEvent],
) -> None:
    calls: list[Any] = []
    guard = Guard(_Wire(), on_repair=calls.append)
    history = _dangling()
    sent = guard(history, "anthropic")
    assert toolpair.validate(sent, "anthropic") == []
    assert len(subscribed) == 1
    assert calls == subscribed
    event = subscribed[0]
    assert (event.source, event.mode, event.provider) == ("strands", "repair", "anthropic")
    assert event.model == "claude-sonnet-4-5"
    assert event.fixes.get("synthetic_result") == 1
    assert guard.last is not None and guard.last is guard.last_changed
    # The same request again: the stored history is untouched, so it is repaired again.
    assert history == _dangling()


def test_a_valid_request_reports_nothing(subscribed: list[RepairEvent]) -> None:
    calls: list[Any] = []
    guard = Guard(_Wire(), on_repair=calls.append)
    history = _valid()
    assert guard(history, "anthropic") is history
    assert subscribed == [] and calls == []
    assert guard.last is not None and guard.last.fixes == []
    assert guard.last_changed is None


def test_a_callback_annotated_to_take_repaired_gets_the_repaired() -> None:
    got: list[Repaired] = []

    def legacy(r: Repaired) -> None:
        got.append(r)

    guard = Guard(_Wire(), on_repair=legacy)
    guard(_dangling(), "anthropic")
    assert len(got) == 1 and isinstance(got[0], Repaired)
    assert [f.kind for f in got[0].fixes] == ["synthetic_result"]
    guard(_valid(), "anthropic")
    assert len(got) == 1


def test_an_unreadable_history_is_sent_as_it_is_with_a_warning(
    caplog: pytest.LogCaptureFixture, subscribed: list[RepairEvent]
) -> None:
    history: list[Any] = [{"role": "user", "content": "hi"}, "not a message"]
    guard = Guard(_Wire())
    with caplog.at_level(logging.WARNING, logger="toolpair.integrations"):
        assert guard(history, "anthropic") is history
    assert guard.repair(history, "anthropic") is None
    assert "could not be read, sent as it is" in caplog.text
    assert "toolpair[strands]" in caplog.text
    assert subscribed == []
    with pytest.raises(toolpair.InvalidHistory):
        Guard(_Wire(), strict=True)(history, "anthropic")


def test_overrides_win_over_detection() -> None:
    guard = Guard(_Wire(), provider="openai", model="gpt-4o")
    assert guard.target("anthropic") == Target("openai", "gpt-4o")
    assert Guard(_Wire()).target("anthropic") == Target("anthropic", "claude-sonnet-4-5")
    with pytest.raises(ValueError, match="unknown provider"):
        Guard(_Wire(), provider="nonesuch")


def test_policy_reaches_the_repair() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "1"}]},
    ]
    kept = Guard(_Wire(), policy=Policy(orphans="text")).repair(history, "anthropic")
    dropped = Guard(_Wire()).repair(history, "anthropic")
    assert kept is not None and dropped is not None
    assert [f.kind for f in kept.fixes] != [f.kind for f in dropped.fixes]


def test_disagreements_are_recorded_where_the_answer_is_seen(tmp_path: Path) -> None:
    guard = Guard(_Wire(), record_dir=tmp_path)
    history = _valid()
    repaired = guard.repair(history, "anthropic")
    assert repaired is not None
    # toolpair called it valid and the provider accepted it: nothing to learn.
    guard.observe({"messages": history}, repaired, status=200)
    assert list(tmp_path.rglob("*.json")) == []
    # toolpair called it valid and the provider refused it: a case.
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    guard.observe({"messages": history}, repaired, status=400, error=error)
    cases = list(tmp_path.rglob("*.json"))
    assert len(cases) == 1
    case = json.loads(cases[0].read_text())
    assert case["provider"] == "anthropic"
    assert "strands" in json.dumps(case)


def test_status_of_reads_the_sdks_errors() -> None:
    class SdkError(Exception):
        status_code = 400

    class BotoError(Exception):
        response = {"ResponseMetadata": {"HTTPStatusCode": 400}}  # noqa: RUF012

    assert status_of(SdkError()) == 400
    assert status_of(BotoError()) == 400
    assert status_of(ValueError()) is None


def test_a_framework_older_than_its_minimum_is_warned_of_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class TooOld(_Wire):
        name = "langgraph"  # a registered name no other test here builds a guard for

        @property
        def requires(self) -> str:
            return "pytest>=999.0"

    with caplog.at_level(logging.WARNING, logger="toolpair.integrations"):
        Guard(TooOld())
        Guard(TooOld())
    warned = [r for r in caplog.records if "pytest>=999.0" in r.getMessage()]
    assert len(warned) == 1
    assert "toolpair[langgraph]" in warned[0].getMessage()
