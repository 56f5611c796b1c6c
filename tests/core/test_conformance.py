"""The conformance suite run on the wire formats themselves, with no framework: an
application whose history is already a provider's request (its "formatter" sends the
list as the body) holds the same contract as a framework integration. This also proves
the suite's properties pass on the core's own codecs, so a failure in a framework env
points at that framework."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._model import Codec
from toolpair.formats import CODECS
from toolpair.testing import Adapter, Conformance
from toolpair.testing.generate import render, simple_problems


class WireAdapter(Adapter):
    """Histories in one wire format; sending one is wrapping it in a request body."""

    def __init__(self, fmt: str, provider: str) -> None:
        self.fmt = fmt
        self.name = fmt
        self.providers = (provider,)
        self.wire_providers = (provider,)
        self.fast_providers = (provider,)

    def codec(self, provider: str) -> Codec:
        return CODECS[self.fmt]

    def build(self, history: list[Any]) -> list[Any]:
        return render(history, self.fmt)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        key = "input" if self.fmt == "openai-responses" else "messages"
        return {"model": "m", key: list(messages)}

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(list(messages), self.fmt, provider)


class TestAnthropicMessages(Conformance):
    adapter = WireAdapter("anthropic", "anthropic")


class TestOpenAIChat(Conformance):
    adapter = WireAdapter("openai", "openai")


def test_importing_the_suite_imports_no_test_runner_or_framework() -> None:
    # A third party imports the suite from its own test modules: it pulls in neither
    # hypothesis, pytest nor a framework before a property runs. (The plugin module
    # that exposes it defines its fixtures with pytest where pytest is installed.)
    import subprocess
    import sys

    names = ("hypothesis", "pytest", "langchain_core", "pydantic_ai", "agno", "llama_index")
    for module, allowed in (("toolpair.conformance", ()), ("toolpair.testing", ("pytest",))):
        code = (
            f"import sys, {module}; "
            f"print(sorted(m for m in {names!r} if m in sys.modules and m not in {allowed!r}))"
        )
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "[]", module
