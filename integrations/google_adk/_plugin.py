"""The per-request repair: `ToolpairPlugin` (``Runner(plugins=[...])`` or
``App(plugins=[...])``) and `before_model_callback` (``LlmAgent(before_model_callback=...)``).

ADK builds ``llm_request.contents`` from the session's events just before each model
call; the repair replaces that list (new ``Content``/``Part`` objects where something
changed, the same objects elsewhere) and returns None, so the call goes ahead and the
session itself is never written.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import toolpair
from toolpair import Policy, Repaired
from toolpair.integrations._hosts import LITELLM_PROVIDERS

from ._codec import CODEC

logger = logging.getLogger("toolpair.google_adk")

#: Plugin name (ADK refuses two plugins of one name on a runner).
NAME = "toolpair"

#: LiteLLM provider segment -> toolpair provider (LiteLlm speaks Chat Completions
#: unless the segment names another API), with the "claude" alias.
_SEGMENTS = {**LITELLM_PROVIDERS, "claude": "anthropic"}


def detect(model: Any) -> tuple[str, str | None]:
    """(toolpair provider, model id) for an ADK model object or model string."""
    if isinstance(model, str):
        return ("gemini", model)
    names = {c.__name__ for c in type(model).__mro__}
    name = getattr(model, "model", None)
    name = name if isinstance(name, str) else None
    if "AnthropicLlm" in names:
        return ("anthropic", name)
    if "LiteLlm" in names and name:
        segment, _, rest = name.partition("/")
        provider = _SEGMENTS.get(segment.lower()) if rest else None
        if provider is None:
            return ("openai", name)
        return (provider if provider in toolpair.PROVIDERS else "portable", rest)
    if "Gemini" in names:
        return ("vertex" if _on_vertex(model) else "gemini", name)
    return ("portable", name)


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


class _Repairer:
    def __init__(
        self,
        provider: str | None,
        model: str | None,
        policy: Policy | None,
        on_repair: Any,
    ) -> None:
        self.provider = provider
        self.model = model
        self.policy = policy
        self.on_repair = on_repair
        #: The report of the last request that needed a repair.
        self.last: Repaired | None = None

    def __call__(self, callback_context: Any, llm_request: Any) -> None:
        contents = list(llm_request.contents or [])
        if not contents:
            return None
        provider, model = self.provider, self.model
        if provider is None:
            provider, found = detect(_agent_model(callback_context) or llm_request.model or "")
            model = model or found
        model = model or getattr(llm_request, "model", None)
        if provider in ("gemini", "vertex") and isinstance(model, str):
            # ADK passes "models/..." and resource names; the family is the last segment.
            model = model.rsplit("/", 1)[-1]
        fixed = repair_contents(contents, provider, model=model, policy=self.policy)
        if fixed.changed:
            llm_request.contents = fixed.messages
            self.last = fixed
            logger.info("repaired %d fix(es) for %s", len(fixed.fixes), provider)
            if self.on_repair is not None:
                self.on_repair(fixed)
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
    on_repair: Any = None,
) -> Any:
    """A callback for ``LlmAgent(before_model_callback=...)`` doing what the plugin
    does, for one agent (ADK before 1.7 has no plugins). It cannot keep the calls
    ADK 2.10+ drops: that takes the plugin."""
    repairer = _Repairer(provider, model, policy, on_repair)

    def toolpair_before_model(callback_context: Any, llm_request: Any) -> None:
        return repairer(callback_context, llm_request)

    toolpair_before_model.repairer = repairer  # type: ignore[attr-defined]
    return toolpair_before_model


def _base_plugin() -> type:
    from google.adk.plugins.base_plugin import BasePlugin

    return BasePlugin


def _make_plugin_class() -> type:
    base = _base_plugin()

    class ToolpairPlugin(base):  # type: ignore[misc, valid-type]
        """Repairs every model request of a runner for the model each agent calls.

        ``provider``/``model`` force what the contents are judged by (detected from the
        agent's model otherwise: ``Gemini`` -> gemini or vertex, ``AnthropicLlm``/
        ``Claude`` -> anthropic, ``LiteLlm`` by its ``provider/model`` string).
        ``keep_unanswered`` (default True): on ADK 2.10 and later, keep the calls ADK
        would drop and answer them with the neutral error result instead. ``policy``
        is toolpair's `Policy`; ``on_repair`` is called with each `Repaired` report.
        """

        def __init__(
            self,
            *,
            provider: str | None = None,
            model: str | None = None,
            policy: Policy | None = None,
            keep_unanswered: bool = True,
            on_repair: Any = None,
            name: str = NAME,
        ) -> None:
            super().__init__(name=name)
            self.keep_unanswered = keep_unanswered
            self._repair = _Repairer(provider, model, policy, on_repair)
            if keep_unanswered:
                _install_keep()

        @property
        def last(self) -> Repaired | None:
            """The report of the last request this plugin changed."""
            return self._repair.last

        async def before_run_callback(self, *, invocation_context: Any) -> None:
            _KEEP.set(self.keep_unanswered)
            return None

        async def after_run_callback(self, *, invocation_context: Any) -> None:
            _KEEP.set(False)
            return None

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            return self._repair(callback_context, llm_request)

    ToolpairPlugin.__module__ = "toolpair.integrations.google_adk"
    ToolpairPlugin.__qualname__ = "ToolpairPlugin"
    return ToolpairPlugin


_CLASS: list[type] = []


def plugin_class() -> type:
    if not _CLASS:
        _CLASS.append(_make_plugin_class())
    return _CLASS[0]


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
