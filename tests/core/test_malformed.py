"""Bad input gets a typed error naming the message index; unknown blocks pass through."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import toolpair

MALFORMED: list[tuple[str, Any, str, int | None, str]] = [
    ("not a list", "hello", "anthropic", None, "history must be a list"),
    ("a number", 42, "openai", None, "history must be a list"),
    ("body without messages", {"model": "m"}, "anthropic", None, "no 'messages'"),
    (
        "message not a dict",
        [{"role": "user", "content": "q"}, "hi"],
        "openai",
        1,
        "must be an object",
    ),
    ("message is None", [None], "anthropic", 0, "must be an object"),
    ("unknown role", [{"role": "robot", "content": "q"}], "openai", 0, "unknown role 'robot'"),
    (
        "missing role",
        [{"content": [{"type": "text", "text": "q"}]}],
        "anthropic",
        0,
        "unknown role",
    ),
    (
        "anthropic content wrong type",
        [{"role": "user", "content": 5}],
        "anthropic",
        0,
        "content must be a string or a list",
    ),
    (
        "anthropic tool_use without id",
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "name": "w", "input": {}}]},
        ],
        "anthropic",
        1,
        "tool_use.id is missing",
    ),
    (
        "anthropic tool_result id not a string",
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}],
        "anthropic",
        0,
        "tool_result.tool_use_id must be a string, got int",
    ),
    (
        "anthropic block without type",
        [{"role": "user", "content": [{"type": "text", "text": "q"}, {"foo": 1}]}],
        "anthropic",
        0,
        "content block has no type",
    ),
    (
        "openai tool_calls not a list",
        [{"role": "assistant", "content": None, "tool_calls": {"id": "c"}}],
        "openai",
        0,
        "tool_calls must be a list",
    ),
    (
        "openai tool call without id",
        [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "w"}}]}],
        "openai",
        0,
        "tool_calls[].id is missing",
    ),
    (
        "openai content wrong type",
        [{"role": "user", "content": {"text": "q"}}],
        "openai",
        0,
        "content must be a string or a list",
    ),
    (
        "bedrock content not a list",
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"toolUse": 3}]}],
        "bedrock",
        0,
        "content must be a list",
    ),
    (
        "bedrock toolUse without id",
        [{"role": "assistant", "content": [{"toolUse": {"name": "w", "input": {}}}]}],
        "bedrock",
        0,
        "toolUse.toolUseId is missing",
    ),
    (
        "responses call without call_id",
        [
            {"role": "user", "content": "q"},
            {"type": "function_call", "name": "w", "arguments": "{}"},
        ],
        "openai-responses",
        1,
        "function_call.call_id is missing",
    ),
    ("responses item without type or role", [{"foo": 1}], "openai-responses", 0, "neither a type"),
    (
        "gemini parts not a list",
        [{"role": "user", "parts": "q"}],
        "gemini",
        0,
        "parts must be a list",
    ),
    (
        "gemini functionCall id not a string",
        [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "w", "id": 3}}]},
        ],
        "gemini",
        1,
        "functionCall.id must be a string",
    ),
]


@pytest.mark.parametrize(
    ("history", "provider", "index", "text"),
    [c[1:] for c in MALFORMED],
    ids=[c[0] for c in MALFORMED],
)
@pytest.mark.parametrize("fn", ["validate", "repair"])
def test_malformed_input_names_the_index(
    fn: str, history: Any, provider: str, index: int | None, text: str
) -> None:
    with pytest.raises(toolpair.InvalidHistory) as e:
        getattr(toolpair, fn)(history, provider)
    assert e.value.index == index
    assert text in str(e.value)
    if index is not None:
        assert str(e.value).startswith(f"message {index}: ")
    assert isinstance(e.value, ValueError)


def test_unknown_blocks_pass_through_untouched() -> None:
    odd = {"type": "hologram", "payload": {"x": 1}}
    h = [
        {"role": "user", "content": [odd, {"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}],
        },
        {"role": "user", "content": [odd]},
    ]
    before = copy.deepcopy(h)
    r = toolpair.repair(h, "anthropic")
    assert h == before
    assert r.messages[0] is h[0]
    assert r.messages[2]["content"][1] is odd
    assert toolpair.validate(r.messages, "anthropic") == []


def test_unknown_responses_items_pass_through() -> None:
    h = [
        {"role": "user", "content": "q"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ]
    r = toolpair.repair(h, "openai-responses")
    assert r.fixes == [] and r.messages[1] is h[1]


def test_unknown_format_name() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        toolpair.validate([], "anthropic", format="cohere")
