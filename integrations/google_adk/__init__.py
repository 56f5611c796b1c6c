"""toolpair for Google ADK (``google-adk``): repair of every model request, and a
check and repair of stored sessions.

    from toolpair.integrations.google_adk import ToolpairPlugin
    runner = InMemoryRunner(agent=agent, plugins=[ToolpairPlugin()])

The request contents are google-genai ``Content`` objects; they are judged with the
rules of the provider the agent's model really talks to (`detect`). Everything imports
ADK on first use.
"""

from __future__ import annotations

from toolpair.integrations._base import lazy_exports

_LAZY = {
    "before_model_callback": "._plugin",
    "detect": "._plugin",
    "install": "._plugin",
    "repair_contents": "._plugin",
    "check_session": "._session",
    "repair_session": "._session",
    "AdkCodec": "._codec",
    "adk_trims_compaction": "._compaction",
    "pair_safe_prefix": "._compaction",
}

__all__ = [
    "AdkCodec",
    "PairSafeSummarizer",
    "ToolpairPlugin",
    "adk_trims_compaction",
    "before_model_callback",
    "check_session",
    "detect",
    "install",
    "pair_safe_prefix",
    "repair_contents",
    "repair_session",
]


__getattr__ = lazy_exports(
    __name__,
    _LAZY,
    made={
        "ToolpairPlugin": ("._plugin", "plugin_class"),
        "PairSafeSummarizer": ("._compaction", "summarizer_class"),
    },
)
