"""toolpair for LangChain: repair and pair-safe trimming of ``BaseMessage`` lists.

    from toolpair.integrations.langchain import repair_messages, trim_messages
    chain = prompt | trim_messages(max_tokens=4000, token_counter="approximate") \\
        | repair_messages(provider=model) | model

``ToolpairMiddleware`` (for ``langchain.agents.create_agent``) is imported on first use,
so this package needs only ``langchain-core``. For the ``toolpair`` command and the pytest
plugin: `load_dump` / `dump_messages` (``messages_to_dict`` output) and `poisoned_history`.
"""

from __future__ import annotations

from typing import Any

from ._codec import LangChainCodec
from ._hooks import dump_messages, load_dump, poisoned_history
from ._repair import (
    codec_for,
    model_for,
    provider_for,
    repair_messages,
    repair_report,
    validate_messages,
    with_repair,
)
from ._signatures import signature_models
from ._trim import trim_messages

__all__ = [
    "LangChainCodec",
    "ToolpairMiddleware",
    "codec_for",
    "dump_messages",
    "load_dump",
    "model_for",
    "poisoned_history",
    "provider_for",
    "repair_messages",
    "repair_report",
    "signature_models",
    "trim_messages",
    "validate_messages",
    "with_repair",
]


def __getattr__(name: str) -> Any:
    if name == "ToolpairMiddleware":
        from .middleware import ToolpairMiddleware

        return ToolpairMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
