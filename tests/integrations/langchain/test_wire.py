"""Poisoned LangChain histories through the real ChatAnthropic / ChatOpenAI request path:
the body they put on the wire fails the provider's rules before toolpair and passes
after it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

import toolpair
from toolpair.integrations.langchain import codec_for, repair_messages, repair_report

from .wire import MODELS, Wire, ai, call, human, tool

SYS = SystemMessage("sys")
INVALID = AIMessage(
    "",
    invalid_tool_calls=[
        {
            "type": "invalid_tool_call",
            "id": "call_9",
            "name": "weather",
            "args": '{"city": ',
            "error": "truncated JSON",
        }
    ],
)
TOOL_USE_ONLY = AIMessage(
    [
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "SF"}},
    ]
)
# trim_messages(strategy="first", allow_partial=True) on [text, tool_use] content keeps
# the text block and, untouched, tool_calls (reference experiment G).
PARTIAL = AIMessage([{"type": "text", "text": "let me look"}], tool_calls=[call("toolu_1")])

ALL = frozenset(MODELS)
RESPONSES = frozenset({"openai-responses"})

#: name -> (history, providers on which LangChain's own request is already valid).
CASES: dict[str, tuple[list[BaseMessage], frozenset[str]]] = {
    # trim_messages(max_tokens=3, token_counter=len, include_system=True)
    "trim_orphan_result": (
        [SYS, tool("call_2"), AIMessage("SF sunny"), human("thanks")],
        frozenset(),
    ),
    "dangling_call": ([human(), ai("call_1"), human("new question")], frozenset()),
    # trim_messages(strategy="first", end_on="tool"): half a parallel group
    "half_parallel_group": ([SYS, human(), ai("call_1", "call_2"), tool("call_1")], frozenset()),
    # a HumanMessage between the call and its result is merged in front of the result
    "interjection": (
        [human(), ai("call_1"), human("hurry"), tool("call_1"), AIMessage("done"), human("next")],
        RESPONSES,
    ),
    # SummarizationMiddleware's cut on split calls keeps T(a) without AI(a)
    "summarization_split_calls": (
        [
            human("Here is a summary of the conversation to date:"),
            ai("call_b"),
            tool("call_a"),
            tool("call_b"),
            AIMessage("done"),
            human("next"),
        ],
        frozenset(),
    ),
    "invalid_tool_call": ([human(), INVALID, human("next")], frozenset()),
    # langchain-openai drops tool_use blocks: only Anthropic receives this call
    "tool_use_block": ([human(), TOOL_USE_ONLY, human("next")], ALL - {"anthropic"}),
    "partial_trim_keeps_calls": ([human(), PARTIAL], frozenset()),
    "duplicate_result": (
        [human(), ai("call_1"), tool("call_1"), tool("call_1", "again"), human("next")],
        frozenset(),
    ),
    "result_before_call": ([human(), tool("call_1"), ai("call_1"), human("next")], RESPONSES),
}


def _send(wire: Wire, provider: str, messages: list[BaseMessage]) -> dict[str, Any]:
    return wire.send(MODELS[provider](wire), messages)


@pytest.mark.parametrize("provider", sorted(MODELS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_poisoned_history_is_valid_on_the_wire_after_repair(
    wire: Wire, case: str, provider: str
) -> None:
    history, already_valid = CASES[case]
    snapshot = [m.model_dump() for m in history]
    before = toolpair.validate(_send(wire, provider, history), provider)
    if case == "invalid_tool_call" and not codec_for(MODELS[provider](wire)).invalid_calls_sent:
        already_valid = ALL  # langchain-anthropic before 1.7.x never sent invalid calls
    if provider in already_valid:
        assert before == []
    else:
        assert before, f"{case} should be rejected by {provider} before repair"

    model = MODELS[provider](wire)
    fixed = repair_messages(history, model)
    after = toolpair.validate(wire.send(model, fixed), provider)
    assert after == []
    # Repair reads; it never writes back.
    assert [m.model_dump() for m in history] == snapshot


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_valid_history_is_returned_as_is(wire: Wire, provider: str) -> None:
    history = [SYS, human(), ai("call_1", "call_2"), tool("call_1"), tool("call_2"), human("ok")]
    assert toolpair.validate(_send(wire, provider, history), provider) == []
    result = repair_report(history, MODELS[provider](wire))
    assert result.fixes == []
    assert all(a is b for a, b in zip(result.messages, history, strict=True))


def test_untouched_messages_keep_their_identity(wire: Wire) -> None:
    history = [SYS, human(), ai("call_1"), human("new question"), AIMessage("answer")]
    fixed = repair_messages(history, wire.anthropic())
    assert [type(m).__name__ for m in fixed] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
        "AIMessage",
    ]
    for original in (history[0], history[1], history[2], history[3], history[4]):
        assert any(m is original for m in fixed)
    synthetic = fixed[3]
    assert synthetic.tool_call_id == "call_1"
    assert synthetic.status == "error"
    assert "city" not in str(synthetic.content)  # a fact, never an echo of the input


def test_lcel_chain_sends_a_valid_body(wire: Wire) -> None:
    model = wire.anthropic()
    chain = repair_messages(provider=model) | model
    history = [SYS, tool("call_2"), AIMessage("SF sunny"), human("thanks")]
    reply = chain.invoke(history)
    assert reply.content == "ok"
    body = wire.bodies[-1]
    assert toolpair.validate(body, "anthropic") == []
    assert body["messages"] == [
        {"role": "assistant", "content": "SF sunny"},
        {"role": "user", "content": "thanks"},
    ]


def test_anthropic_error_result_keeps_is_error(wire: Wire) -> None:
    history = [human(), ai("call_1"), tool("call_1", "boom", status="error"), human("next")]
    body = _send(wire, "anthropic", repair_messages(history, "anthropic"))
    result = body["messages"][2]["content"][0]
    assert result["is_error"] is True
    assert result["tool_use_id"] == "call_1"


def test_empty_error_result_is_repaired_for_anthropic(wire: Wire) -> None:
    history = [human(), ai("call_1"), tool("call_1", "", status="error"), human("next")]
    assert toolpair.validate(_send(wire, "anthropic", history), "anthropic")
    fixed = repair_messages(history, "anthropic")
    assert toolpair.validate(_send(wire, "anthropic", fixed), "anthropic") == []
