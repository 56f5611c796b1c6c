"""toolpair for the OpenAI Agents SDK (``openai-agents``, import ``agents``): repair of
every model call's input, pair-safe session reads and trimming.

    from toolpair.integrations.openai_agents import with_toolpair
    result = await Runner.run(agent, "hi", run_config=with_toolpair())

The SDK's items are OpenAI Responses input items, so the core's ``openai-responses``
codec reads them; they are judged with the rules of the provider the agent's model
really talks to. `load_dump`, `load_session_file`, `dump_messages` (the ``toolpair``
command) and `poisoned_history` (the pytest plugin) need only the standard library; the
rest imports the SDK on first use.
"""

from __future__ import annotations

from typing import Any

from ._hooks import (
    DEFAULT_PROVIDER,
    dump_messages,
    load_dump,
    load_session_file,
    poisoned_history,
)

_LAZY = {
    "ToolpairInputFilter": "._filter",
    "ToolpairModel": "._filter",
    "ToolpairModelProvider": "._filter",
    "with_toolpair": "._filter",
    "repair_items": "._filter",
    "PairSafeSession": "._session",
    "trim_filter": "._session",
    "newest_units": "._session",
    "detect_provider": "._detect",
}

__all__ = [
    "DEFAULT_PROVIDER",
    "PairSafeSession",
    "ToolpairInputFilter",
    "ToolpairModel",
    "ToolpairModelProvider",
    "detect_provider",
    "dump_messages",
    "load_dump",
    "load_session_file",
    "newest_units",
    "poisoned_history",
    "repair_items",
    "trim_filter",
    "with_toolpair",
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module = importlib.import_module(where, __name__)
    value = getattr(module, "detect" if name == "detect_provider" else name)
    globals()[name] = value
    return value
