"""toolpair for pydantic-ai (1.x and 2.x).

Persisting repair (the run keeps the repaired history)::

    Agent(model, capabilities=[ProcessHistory(repair_history)])   # 2.x
    Agent(model, history_processors=[repair_history])             # 1.x

Request-only repair (the stored history stays exactly as it was)::

    Agent(model, capabilities=[RepairGuard()])

Outside a run: `repair` / `validate` a ``list[ModelMessage]``, and `model_request`
for the `pydantic_ai.direct` API. Pair-safe compaction: `trim_history`,
`clear_tool_results`. For the ``toolpair`` command and the pytest plugin:
`load_dump` / `dump_messages` (``ModelMessagesTypeAdapter`` JSON) and `poisoned_history`.
"""

from __future__ import annotations

from ._codec import PydanticAICodec
from ._direct import model_request, model_request_sync, repair_for_model
from ._guard import RepairGuard
from ._hooks import dump_messages, load_dump, poisoned_history
from ._processors import (
    clear_tool_results,
    history_repairer,
    repair,
    repair_for_request,
    repair_history,
    trim_history,
    validate,
)
from ._provider import model_for, provider_for

__all__ = [
    "PydanticAICodec",
    "RepairGuard",
    "clear_tool_results",
    "dump_messages",
    "history_repairer",
    "load_dump",
    "model_for",
    "model_request",
    "model_request_sync",
    "poisoned_history",
    "provider_for",
    "repair",
    "repair_for_model",
    "repair_for_request",
    "repair_history",
    "trim_history",
    "validate",
]
