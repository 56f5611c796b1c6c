"""toolpair for Strands Agents (``strands-agents``): every model call's messages repaired
for the provider the agent really calls, written nowhere; a pair-safe conversation
manager; checks and repairs of what a session manager restores.

    from strands import Agent
    from toolpair.integrations.strands import ToolpairModel
    agent = Agent(model=ToolpairModel(BedrockModel(model_id=...)))

Strands keeps its history as Bedrock Converse messages whatever the model, so the core's
``bedrock`` codec reads it and the rules are those of the model class's provider.
Everything imports Strands on first use.
"""

from __future__ import annotations

from toolpair.integrations._base import lazy_exports

_LAZY = {
    "ToolpairModel": "._model",
    "repair_messages": "._model",
    "detect_provider": "._detect",
    "ToolpairPlugin": "._plugin",
    "PairSafeConversationManager": "._manager",
    "PairSafeSummarizingConversationManager": "._manager",
    "check_session": "._session",
    "repair_session": "._session",
    "stored_messages": "._session",
    "SessionInUse": "._session",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_exports(__name__, _LAZY)
