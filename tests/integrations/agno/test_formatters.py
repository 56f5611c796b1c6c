"""The breaks particular to one agno formatter, each checked on the body that formatter
really produces."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from agno.models.message import Message

import toolpair
from toolpair.integrations import agno as tp_agno

from .harness import (
    GEMINI_SUPPORTED,
    MODELS,
    POISONED,
    Capture,
    answer,
    ask,
    call,
    calls_ab,
    result,
    seeded_agent,
)

MEDIA_NOTE = "The tool call above generated the attached media."


@pytest.fixture(autouse=True)
def _clean_patch() -> Any:
    yield
    tp_agno.unpatch()


def bodies(provider: str, stored: list[Message]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request body without and with the patch."""
    plain, fixed = Capture(), Capture()
    seeded_agent(MODELS[provider](plain), stored).run("And now?", session_id="s1")
    with tp_agno.patched():
        seeded_agent(MODELS[provider](fixed), stored).run("And now?", session_id="s1")
    return plain.last, fixed.last


@pytest.mark.parametrize(
    "stored",
    [
        # agno's own media follow-up written after the results
        [
            ask(),
            calls_ab(),
            result("call_A"),
            result("call_B", "rainy"),
            Message(role="user", content=MEDIA_NOTE),
            answer(),
        ],
        # results split by a user message
        POISONED["split_batch"](),
    ],
    ids=["media_after_results", "results_split_by_user"],
)
def test_bedrock_results_stay_one_turn(stored: list[Message]) -> None:
    plain, fixed = bodies("bedrock", stored)
    assert toolpair.validate(plain, "bedrock")
    assert toolpair.validate(fixed, "bedrock") == []
    roles = [m["role"] for m in fixed["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    turn = next(m for m in fixed["messages"] if any("toolResult" in b for b in m["content"]))
    assert [b["toolResult"]["toolUseId"] for b in turn["content"]] == ["call_A", "call_B"]


def test_responses_result_with_none_content_is_sent() -> None:
    stored = [ask(), calls_ab(), result("call_A"), result("call_B", None), answer()]
    plain, fixed = bodies("openai-responses", stored)
    assert toolpair.validate(plain, "openai-responses")
    assert toolpair.validate(fixed, "openai-responses") == []
    outputs = [i for i in fixed["input"] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["sunny", ""]


@pytest.mark.skipif(not GEMINI_SUPPORTED, reason="agno before normalize_tool_messages")
def test_gemini_result_without_tool_name_is_a_function_response() -> None:
    stored = [
        ask(),
        calls_ab(),
        result("call_A"),
        Message(role="tool", tool_call_id="call_B", content="rainy"),
        answer(),
    ]
    plain, fixed = bodies("gemini", stored)
    assert toolpair.validate(plain, "gemini")
    assert toolpair.validate(fixed, "gemini") == []
    responses = [
        p["functionResponse"]
        for c in fixed["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert [r["name"] for r in responses] == ["get_weather", "get_weather"]
    assert stored[3].tool_name is None


def test_mistral_assistant_with_reasoning_keeps_its_calls() -> None:
    mistral = pytest.importorskip("agno.utils.models.mistral")
    stored = [
        ask(),
        Message(
            role="assistant",
            content="",
            reasoning_content="I should look it up.",
            tool_calls=[call("call_A", "Paris")],
        ),
        result("call_A"),
        Message(role="user", content="And now?"),
    ]

    def wire(messages: list[Message]) -> list[dict[str, Any]]:
        return [m.model_dump(exclude_none=True) for m in mistral.format_messages(messages)]

    assert toolpair.validate(wire(stored), "mistral")
    fixed = tp_agno.repair_messages(stored, "mistral")
    assert toolpair.validate(wire(list(fixed)), "mistral") == []
    assert stored[1].reasoning_content == "I should look it up."


def test_agno_error_results_are_read_as_errors() -> None:
    stored = [
        ask(),
        calls_ab(),
        result("call_A", "boom", tool_call_error=True),
        result("call_B", "rainy"),
    ]
    msgs = tp_agno.AgnoCodec().decode(stored)
    assert [b.is_error for m in msgs for b in m.blocks if b.kind == "result"] == [True, False]
    fixed = tp_agno.repair_messages(stored[:3], "anthropic")
    synthetic = [m for m in fixed if getattr(m, "toolpair_synthetic", False)]
    assert [(m.tool_call_id, m.tool_call_error, m.tool_name) for m in synthetic] == [
        ("call_B", True, "get_weather")
    ]
