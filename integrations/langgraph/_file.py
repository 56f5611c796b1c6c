"""Reading a thread's history straight from a LangGraph SQLite checkpoint file, for the
``toolpair check FILE --thread ID`` command (no graph needed, nothing written)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from langchain_core.messages import BaseMessage

from toolpair import Codec

from ._common import codec

__all__ = ["load_thread"]


def load_thread(
    path: str, thread_id: str, *, key: str = "messages", provider: Any = None
) -> tuple[list[BaseMessage], Codec]:
    """The ``key`` messages of the latest checkpoint of ``thread_id`` (root namespace)
    in the SQLite checkpoint file ``path``, with the results its unfinished step already
    wrote (pending writes, merged as ``add_messages`` merges them), and the codec that
    reads them. Raises ``LookupError`` for a thread the file does not hold."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph.message import add_messages

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        config = {"configurable": {"thread_id": str(thread_id), "checkpoint_ns": ""}}
        found = saver.get_tuple(config)  # type: ignore[arg-type]
    finally:
        conn.close()
    if found is None:
        raise LookupError(f"thread {thread_id!r} has no checkpoint in {path}")
    messages: list[Any] = list(found.checkpoint.get("channel_values", {}).get(key) or [])
    for _task, channel, value in found.pending_writes or []:
        if channel == key:
            messages = list(add_messages(messages, value))
    return messages, codec(provider)
