"""toolpair: keep tool calls and tool results paired, ordered and sized the way every
LLM provider demands.

    toolpair.validate(history, "anthropic")  -> [Violation, ...]
    toolpair.repair(history, "anthropic")    -> Repaired(messages, fixes, id_map)
    toolpair.check(history, "anthropic")     -> None, or raises HistoryError
"""

from __future__ import annotations

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
from toolpair.providers import PROVIDERS

__all__ = [
    "PROVIDERS",
    "Block",
    "Codec",
    "Fix",
    "HistoryError",
    "InvalidHistory",
    "Message",
    "Policy",
    "Repaired",
    "ToolpairError",
    "Violation",
    "check",
    "repair",
    "validate",
]
__version__ = "0.1.0"
