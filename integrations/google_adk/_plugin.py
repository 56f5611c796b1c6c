"""The per-request repair: `ToolpairPlugin` (``Runner(plugins=[...])`` or
``App(plugins=[...])``) and `before_model_callback` (``LlmAgent(before_model_callback=...)``).

ADK builds ``llm_request.contents`` from the session's events just before each model
call; the repair replaces that list (new ``Content``/``Part`` objects where something
changed, the same objects elsewhere) and returns None, so the call goes ahead and the
session itself is never written.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import toolpair
from toolpair import Policy, Repaired
from toolpair.integrations._base import Guard, Integration, OnRepair, Target
from toolpair.integrations._hosts import by_class, litellm_target

from ._codec import CODEC

#: Plugin name (ADK refuses two plugins of one name on a runner).
NAME = "toolpair"

#: ADK model class name -> how it is read.
_CLASSES = {"AnthropicLlm": "anthropic", "LiteLlm": "litellm", "Gemini": "gemini"}


class GoogleAdk(Integration):
    """Google ADK: the request contents are google-genai ``Content`` objects."""

    name = "google_adk"

    def detect(self, model: object) -> Target:
        if isinstance(model, str):
            return Target("gemini", _family(model))
        if model is None:
            return Target("portable")
        name = getattr(model, "model", None)
        name = name if isinstance(name, str) else None
        found = by_class(model, _CLASSES)
        kind = found[1] if found is not None else None
        if kind == "anthropic":
            return Target("anthropic", name)
        if kind == "litellm" and name:
            provider, model_id = litellm_target(name)
            return Target(provider, model_id)
        if kind == "gemini":
            return Target("vertex" if _on_vertex(model) else "gemini", _family(name))
        return Target("portable", name)

    def codec(self, target: Target) -> Any:
        return CODEC


INTEGRATION = GoogleAdk()


def _family(model: str | None) -> str | None:
    # ADK passes "models/..." and resource names; the family is the last segment.
    return model.rsplit("/", 1)[-1] if model else model


def detect(model: Any) -> tuple[str, str | None]:
    """(toolpair provider, model id) for an ADK model object or model string."""
    target = INTEGRATION.detect(model)
    return target.provider, target.model


def _on_vertex(model: Any) -> bool:
    try:
        return bool(model.api_client.vertexai)
    except Exception:  # no credentials yet: the model will say so when it is called
        return False


def _agent_model(callback_context: Any) -> Any:
    ctx = getattr(callback_context, "_invocation_context", None)
    agent = getattr(ctx, "agent", None)
    try:
        return agent.canonical_model if agent is not None else None
    except Exception:
        return None


def repair_contents(
    contents: list[Any],
    provider: str,
    *,
    model: str | None = None,
    policy: Policy | None = None,
) -> Repaired:
    """``contents`` (ADK ``types.Content`` objects) repaired for ``provider``; the
    untouched ones come back as the same objects, and the input list is not changed."""
    return toolpair.repair(contents, provider, model=model, format=CODEC, policy=policy)


def _before_model(guard: Guard, callback_context: Any, llm_request: Any) -> None:
    contents: Sequence[Any] = list(llm_request.contents or [])
    if not contents:
        return None
    asked = getattr(llm_request, "model", None)
    target = guard.target(_agent_model(callback_context) or asked or "")
    if target.model is None and isinstance(asked, str) and asked:
        # The request names the model it goes to where the agent's model object does not.
        gemini = target.provider in ("gemini", "vertex")
        target = dataclasses.replace(target, model=_family(asked) if gemini else asked)
    fixed = guard.repair(contents, target=target)
    if fixed is not None and fixed.changed:
        llm_request.contents = fixed.messages
    return None


# --- keeping the calls ADK would drop -----------------------------------------------

#: Set for an invocation run by a runner whose `ToolpairPlugin` keeps unanswered calls.
_KEEP = contextvars.ContextVar("toolpair_adk_keep_unanswered", default=False)
_PATCHED: dict[str, Any] = {}


def _install_keep() -> None:
    """ADK 2.10 and later drop every unanswered call (``drop_orphaned_function_calls``)
    while building the contents, so the model never learns it was attempted. Inside an
    invocation of a runner whose plugin asks for it, the calls are kept instead and the
    repair answers each with the neutral error result. Installed once per process; a
    runner without the plugin keeps ADK's own behaviour."""
    if _PATCHED:
        return
    try:
        from google.adk.flows.llm_flows.context import _contents
    except ImportError:  # before 2.10 ADK keeps them: nothing to do
        return
    original = getattr(_contents, "drop_orphaned_function_calls", None)
    if original is None:
        return

    def drop_orphaned_function_calls(events: list[Any]) -> list[Any]:
        if _KEEP.get():
            return events
        return original(events)

    drop_orphaned_function_calls.__wrapped__ = original  # type: ignore[attr-defined]
    _contents.drop_orphaned_function_calls = drop_orphaned_function_calls
    _PATCHED["drop_orphaned_function_calls"] = original


def before_model_callback(
    *,
    provider: str | None = None,
    model: str | None = None,
    policy: Policy | None = None,
    on_repair: OnRepair | None = None,
    strict: bool = False,
) -> Any:
    """A callback for ``LlmAgent(before_model_callback=...)`` doing what the plugin
    does, for one agent (ADK before 1.7 has no plugins). It cannot keep the calls
    ADK 2.10+ drops: that takes the plugin. Its `Guard` is its ``guard`` attribute."""
    guard = INTEGRATION.guard(provider, model, policy, on_repair, strict)

    def toolpair_before_model(callback_context: Any, llm_request: Any) -> None:
        return _before_model(guard, callback_context, llm_request)

    toolpair_before_model.guard = guard  # type: ignore[attr-defined]
    return toolpair_before_model


def _base_plugin() -> type:
    from google.adk.plugins.base_plugin import BasePlugin

    return BasePlugin


# Made once, on first use: it subclasses ADK's BasePlugin, imported only then.
@functools.cache
def plugin_class() -> type:
    base = _base_plugin()

    class ToolpairPlugin(base):  # type: ignore[misc, valid-type]
        """Repairs every model request of a runner for the model each agent calls.

        ``provider``/``model`` force what the contents are judged by (detected from the
        agent's model otherwise: ``Gemini`` -> gemini or vertex, ``AnthropicLlm``/
        ``Claude`` -> anthropic, ``LiteLlm`` by its ``provider/model`` string).
        ``keep_unanswered`` (default True): on ADK 2.10 and later, keep the calls ADK
        would drop and answer them with the neutral error result instead. ``policy``
        is toolpair's `Policy`; ``on_repair`` receives each repaired request's
        `RepairEvent` (a callback annotated to take a `Repaired` gets that);
        ``strict`` raises on a history toolpair cannot read instead of sending it as
        it is. The provider's answer is not seen by a plugin's before-model hook, so
        nothing is recorded for the corpus here.
        """

        def __init__(
            self,
            *,
            provider: str | None = None,
            model: str | None = None,
            policy: Policy | None = None,
            keep_unanswered: bool = True,
            on_repair: OnRepair | None = None,
            name: str = NAME,
            strict: bool = False,
        ) -> None:
            super().__init__(name=name)
            self.keep_unanswered = keep_unanswered
            self.guard = INTEGRATION.guard(provider, model, policy, on_repair, strict)
            if keep_unanswered:
                _install_keep()

        @property
        def last(self) -> Repaired | None:
            """The report of the last request this plugin changed."""
            return self.guard.last_changed

        async def before_run_callback(self, *, invocation_context: Any) -> None:
            _KEEP.set(self.keep_unanswered)
            return None

        async def after_run_callback(self, *, invocation_context: Any) -> None:
            _KEEP.set(False)
            return None

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            return _before_model(self.guard, callback_context, llm_request)

    ToolpairPlugin.__module__ = "toolpair.integrations.google_adk"
    ToolpairPlugin.__qualname__ = "ToolpairPlugin"
    return ToolpairPlugin


def install(target: Any, **options: Any) -> Any:
    """Add a `ToolpairPlugin` to a ``Runner`` or an ``App`` unless one is there already
    (idempotent: ADK itself refuses a second plugin of the same name), and return the
    plugin in place."""
    cls = plugin_class()
    manager = getattr(target, "plugin_manager", None)
    plugins = manager.plugins if manager is not None else getattr(target, "plugins", None)
    if plugins is None:
        raise TypeError(f"{type(target).__name__} has no plugins: pass a Runner or an App")
    for p in plugins:
        if isinstance(p, cls) or getattr(p, "name", None) == options.get("name", NAME):
            return p
    plugin = cls(**options)
    if manager is not None:
        manager.register_plugin(plugin)
    else:
        plugins.append(plugin)
    return plugin
