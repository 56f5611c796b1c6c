"""toolpair: keep tool calls and tool results paired, ordered and sized the way every
LLM provider demands.

    toolpair.validate(history, "anthropic")  -> [Violation, ...]
    toolpair.repair(history, "anthropic")    -> Repaired(messages, fixes, id_map)
    toolpair.check(history, "anthropic")     -> None, or raises HistoryError
"""

from __future__ import annotations

from toolpair import _api, events, sessions
from toolpair._api import check, repair, validate
from toolpair._model import (
    Block,
    Codec,
    Fix,
    HistoryError,
    InvalidHistory,
    Message,
    Policy,
    Repaired,
    ToolpairError,
    Violation,
)
from toolpair.compact import (
    CLEARED,
    Compacted,
    FileStore,
    Store,
    Unit,
    UnsupportedCodec,
    clear_tool_results,
    count_tokens,
    offload,
    prune,
    safe_cut,
    trim,
    units,
)
from toolpair.events import RepairEvent, subscribe, unsubscribe
from toolpair.providers import PROVIDERS

__all__ = [
    "CLEARED",
    "PROVIDERS",
    "Block",
    "Codec",
    "Compacted",
    "FileStore",
    "Fix",
    "HistoryError",
    "InvalidHistory",
    "Message",
    "Policy",
    "RepairEvent",
    "Repaired",
    "Store",
    "ToolpairError",
    "Unit",
    "UnsupportedCodec",
    "Violation",
    "check",
    "clear_tool_results",
    "count_tokens",
    "events",
    "offload",
    "prune",
    "repair",
    "safe_cut",
    "subscribe",
    "trim",
    "units",
    "unsubscribe",
    "validate",
]
__version__ = "0.1.0"

# Session files are a layer above the engine: ``format="claude-code"`` (and every other
# agent's format) reaches their readers through this registration, never by an import
# from below.
_api.TRANSCRIPTS.names = tuple(sessions.names())
_api.TRANSCRIPTS.read = sessions.history
_api.TRANSCRIPTS.hint = sessions.hint
