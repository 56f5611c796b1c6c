"""toolpair for LlamaIndex: repair and validate `ChatMessage` histories, a guarded LLM
that repairs every request for its provider, and pair-safe memory.

    from toolpair.integrations.llamaindex import GuardedLLM
    agent = FunctionAgent(tools=tools, llm=GuardedLLM(llm=Anthropic(model="claude-sonnet-4-5")))
"""

from __future__ import annotations

from toolpair.integrations.llamaindex._codec import LlamaIndexCodec
from toolpair.integrations.llamaindex._hooks import poisoned_history
from toolpair.integrations.llamaindex._llm import GuardedLLM, guard
from toolpair.integrations.llamaindex._memory import PairSafeMemory, PairSafeMemoryBuffer
from toolpair.integrations.llamaindex._repair import (
    CODEC,
    model_for,
    provider_for,
    repair_messages,
    validate_messages,
)

__all__ = [
    "CODEC",
    "GuardedLLM",
    "LlamaIndexCodec",
    "PairSafeMemory",
    "PairSafeMemoryBuffer",
    "guard",
    "model_for",
    "poisoned_history",
    "provider_for",
    "repair_messages",
    "validate_messages",
]
