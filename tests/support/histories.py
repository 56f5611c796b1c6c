"""Poisoned wire histories (and their valid twins) the gateway tests share: the LiteLLM
guardrail, the proxy and the ASGI middleware send them through real clients and servers.
A call left without its result in each wire format, and a result without its call."""

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

ORPHAN_RESPONSES: list[dict[str, Any]] = [
    {"role": "user", "content": "weather?"},
    {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{}"},
    {"role": "user", "content": "and?"},
]
