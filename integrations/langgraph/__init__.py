"""toolpair for LangGraph: unstick checkpointed threads, repair what the model sees in
any graph, and compact pair-safely.

    from toolpair.integrations.langgraph import repair_thread, repair_hook
    report = repair_thread(graph, {"configurable": {"thread_id": "42"}}, model)
    agent = create_react_agent(model, tools, pre_model_hook=repair_hook(model))

Messages are judged by the LangChain codec, exactly as `toolpair.integrations.langchain`
judges them; ``create_agent`` graphs take its ``ToolpairMiddleware``.
"""

from __future__ import annotations

from ._common import host_for, model_id, rules_for
from ._file import load_thread
from ._hooks import repair_hook, repair_node, summarize_hook, summary_split
from ._thread import (
    DEFAULT_PROVIDER,
    PENDING_TOOL_CALLS,
    InterruptPending,
    NoToolNode,
    ThreadRepair,
    UnknownActiveAgent,
    acheck_thread,
    arepair_thread,
    check_thread,
    repair_thread,
    tool_nodes,
)

__all__ = [
    "DEFAULT_PROVIDER",
    "PENDING_TOOL_CALLS",
    "InterruptPending",
    "NoToolNode",
    "ThreadRepair",
    "UnknownActiveAgent",
    "acheck_thread",
    "arepair_thread",
    "check_thread",
    "host_for",
    "load_thread",
    "model_id",
    "repair_hook",
    "repair_node",
    "repair_thread",
    "rules_for",
    "summarize_hook",
    "summary_split",
    "tool_nodes",
]
