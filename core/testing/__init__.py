"""Assert the tool-call invariant in your own test suite.

    from toolpair.testing import assert_valid

    def test_my_serialiser_keeps_pairs(poisoned_history):
        repaired = toolpair.repair(poisoned_history.history, poisoned_history.provider)
        assert_valid(my_serialiser(repaired.messages), poisoned_history.provider)

This module is also a pytest plugin (registered through the ``pytest11`` entry point)
that provides these fixtures:

``poisoned_history``
    Parametrised over the six wire formats: a `Poisoned` history (an unanswered tool
    call, and a result sitting behind a text block) in that format, a fresh copy each
    time.
``poisoned_anthropic``, ``poisoned_bedrock``, ``poisoned_openai``,
``poisoned_openai_responses``, ``poisoned_gemini``, ``poisoned_mistral``
    The same, one format each.
``poisoned_framework_history``
    Parametrised over the frameworks toolpair integrates: the same poisoned history in
    the framework's own message types. A framework that is not installed (or whose
    integration offers no ``poisoned_history()``) is skipped. Nothing is imported until
    the fixture runs.

The conformance suite every integration runs (`Adapter`, `Conformance`, from
`toolpair.conformance`) is importable from here too: a framework author, or an
application with its own message types, holds its formatter to the same contract by
subclassing `Conformance` with an adapter of its own.

Importing this module imports neither pytest nor any framework, so `assert_valid` works
in any test runner.
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolpair import _api
from toolpair._frameworks import INTEGRATIONS
from toolpair._model import Codec, InvalidHistory, Violation
from toolpair.cli.render import render_turns
from toolpair.demo import DEMOS, load_demo
from toolpair.formats import LIST_KEYS
from toolpair.testing.conformance import Adapter, Conformance

__all__ = [
    "FRAMEWORK_MODULES",
    "Adapter",
    "Conformance",
    "Poisoned",
    "assert_valid",
    "format_violations",
    "poisoned",
]

#: Framework name -> its integration module (read off the one registry), for those that
#: expose ``poisoned_history() -> (messages, codec)``: the canonical poisoned history in
#: the framework's own message types, for the ``poisoned_framework_history`` fixture.
FRAMEWORK_MODULES: dict[str, str] = {f.name: f.module for f in INTEGRATIONS.values() if f.poisoned}


@dataclass(frozen=True, slots=True)
class Poisoned:
    """A history every provider rejects: an assistant turn with two parallel calls, one
    never answered, and the other's result placed behind a user text block.

    ``body`` is the whole request; ``messages`` its message list (``input`` for
    Responses, ``contents`` for Gemini). ``format`` is the format name or, for a
    framework history, the framework's codec; ``provider`` the provider to check it
    against."""

    provider: str
    format: str | Codec
    messages: list[Any]
    body: Any = None

    @property
    def history(self) -> Any:
        """What to hand to `toolpair.validate`/`repair`: the body when there is one."""
        return self.body if self.body is not None else self.messages


def poisoned(format: str) -> Poisoned:
    """A fresh copy of the poisoned history in wire format ``format``."""
    body = copy.deepcopy(load_demo(format))
    return Poisoned(format, format, body[LIST_KEYS.get(format, "messages")], body)


def format_violations(
    history: Any,
    provider: str,
    violations: Sequence[Violation],
    *,
    format: str | Codec | None = None,
    context: int = 1,
) -> str:
    """Every violation in the provider's words, then a compact rendering of the
    offending turns (``>``) with ``context`` messages around each."""
    n = len(violations)
    lines = [f"{n} violation{'s' if n != 1 else ''} of the {provider} rules:"]
    for v in violations:
        at = f" (at {v.path})" if v.path and v.path not in v.message else ""
        lines.append(f"  [{v.code}] {v.message}{at}")
    try:
        parsed = _api.parse(history, provider, format, {})
    except (InvalidHistory, ValueError, TypeError):
        return "\n".join(lines)
    lines.append("offending turns:")
    lines.extend(render_turns(parsed.messages, {v.index for v in violations}, context))
    return "\n".join(lines)


def assert_valid(
    history: Any, provider: str, *, format: str | Codec | None = None, **context: Any
) -> None:
    """Fail (``AssertionError``) unless ``provider`` would accept ``history``, listing
    every violation as the provider words it and the offending turns. ``format`` and the
    context keywords are those of `toolpair.validate`."""
    __tracebackhide__ = True
    violations = _api.validate(history, provider, format=format, **context)
    if violations:
        raise AssertionError(format_violations(history, provider, violations, format=format))


# -- the pytest plugin -----------------------------------------------------------------
# The fixtures are defined only when pytest itself loads this module as a plugin (or a
# user's test imports it, which means pytest is running); otherwise they are simply not
# defined.


def _framework_history(name: str) -> Poisoned:
    module_name = FRAMEWORK_MODULES[name]
    pytest: Any = importlib.import_module("pytest")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        pytest.skip(f"{name} is not installed ({e})")
    hook: Any = getattr(module, "poisoned_history", None)
    if not callable(hook):
        pytest.skip(f"{module_name} offers no poisoned_history()")
    loaded: tuple[Sequence[Any], Codec] = hook()
    messages, codec = loaded
    return Poisoned("portable", codec, list(messages))


def _define_fixtures() -> dict[str, Any]:
    # Only under a running pytest (which has imported itself before loading plugins and
    # test modules): importing the kit elsewhere, as `toolpair.testing.conformance` does,
    # must not import a test runner.
    pytest: Any = sys.modules.get("pytest")
    if pytest is None:
        return {}
    fixtures: dict[str, Any] = {}

    def poisoned_history(request: Any) -> Poisoned:
        return poisoned(request.param)

    fixtures["poisoned_history"] = pytest.fixture(
        params=list(DEMOS), ids=list(DEMOS), name="poisoned_history"
    )(poisoned_history)

    for fmt in DEMOS:

        def one(fmt: str = fmt) -> Poisoned:
            return poisoned(fmt)

        name = "poisoned_" + fmt.replace("-", "_")
        one.__name__ = name
        one.__doc__ = f"The poisoned history in the {fmt} wire format."
        fixtures[name] = pytest.fixture(name=name)(one)

    def poisoned_framework_history(request: Any) -> Poisoned:
        return _framework_history(request.param)

    fixtures["poisoned_framework_history"] = pytest.fixture(
        params=list(FRAMEWORK_MODULES),
        ids=list(FRAMEWORK_MODULES),
        name="poisoned_framework_history",
    )(poisoned_framework_history)
    return fixtures


globals().update(_define_fixtures())
