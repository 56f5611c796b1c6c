"""Poisoned wire histories (and their valid twins) the gateway tests share: the LiteLLM
guardrail, the proxy and the ASGI middleware send them through real clients and servers.
A call left without its result in each wire format, a result without its call, and
the blocks Anthropic's API version 2026-10-21 refuses in some turns (the core's rule tests
share those)."""

from __future__ import annotations

from typing import Any

TOOLS = [
    {
        "type": "function",
        "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}},
    }
]

DANGLING_CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        ],
    },
    {"role": "user", "content": "and?"},
]

VALID_CHAT: list[dict[str, Any]] = [
    *DANGLING_CHAT[:2],
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "user", "content": "and?"},
]

DANGLING_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}},
        ],
    },
    {"role": "user", "content": "and?"},
]

ORPHAN_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": "no call"},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "1"}],
    },
]

ORPHAN_RESPONSES: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{}"},
    {"role": "user", "content": "and?"},
]

# Blocks Anthropic's API version 2026-10-21 refuses where they stand in these histories:
# a document in an assistant turn, citations in a user turn.
NOTE = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "n"}}
CITED = {
    "type": "text",
    "text": "as the notes say",
    "citations": [
        {
            "type": "char_location",
            "cited_text": "n",
            "document_index": 0,
            "start_char_index": 0,
            "end_char_index": 1,
        }
    ],
}


def log_flood(secret: str, first_id: str) -> list[dict[str, Any]]:
    """20,000 unanswered calls whose first id would forge a log line (``first_id``),
    around user turns and inputs of ``secret``: what a repair's log line must neither
    quote nor let grow."""
    calls = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "n", "input": {"q": secret}}
        for i in range(20000)
    ]
    calls[0]["id"] = first_id
    return [
        {"role": "user", "content": secret},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": secret},
    ]
