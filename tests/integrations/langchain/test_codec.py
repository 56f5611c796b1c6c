"""The BaseMessage codec: every place LangChain keeps a call, and the no-mutation,
same-object contract."""

from __future__ import annotations

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

import toolpair
from toolpair import Block, InvalidHistory, Message
from toolpair.integrations.langchain import (
    LangChainCodec,
    provider_for,
    repair_report,
    validate_messages,
)

from .wire import Wire, ai, call, human, tool


def _kinds(message: Message) -> list[tuple[str, str | None]]:
    return [(b.kind, b.id) for b in message.blocks]


def test_decode_roles_and_results() -> None:
    history = [
        SystemMessage("sys"),
        human(),
        ai("call_1", text="looking"),
        tool("call_1", "", status="error", artifact={"raw": 1}, name="weather"),
    ]
    decoded = LangChainCodec().decode(history)
    assert [m.role for m in decoded] == ["system", "user", "assistant", "tool"]
    assert [m.index for m in decoded] == [0, 1, 2, 3]
    assert all(m.native is n for m, n in zip(decoded, history, strict=True))
    assert _kinds(decoded[2]) == [("text", None), ("call", "call_1")]
    (result,) = decoded[3].blocks
    assert (result.kind, result.id, result.name) == ("result", "call_1", "weather")
    assert result.is_error and result.empty
    assert result.native is history[3]


def test_invalid_tool_calls_are_calls() -> None:
    msg = AIMessage(
        "",
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "id": "bad_1", "name": "f", "args": "{", "error": "x"},
            {"type": "invalid_tool_call", "id": None, "name": "f", "args": "{", "error": "x"},
        ],
    )
    (decoded,) = LangChainCodec().decode([msg])
    assert [(b.kind, b.id, b.sub) for b in decoded.blocks] == [
        ("call", "bad_1", "invalid_tool_call")
    ]


def test_tool_use_block_duplicating_tool_calls_is_one_call() -> None:
    msg = AIMessage(
        [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "let me look"},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {}},
        ],
        tool_calls=[call("toolu_1")],
    )
    (decoded,) = LangChainCodec().decode([msg])
    assert [(b.kind, b.id) for b in decoded.blocks] == [
        ("thinking", None),
        ("text", None),
        ("other", "toolu_1"),
        ("call", "toolu_2"),
        ("call", "toolu_1"),
    ]
    assert decoded.blocks[0].native is msg.content[0]


def test_content_calls_depend_on_what_the_provider_package_sends() -> None:
    msg = AIMessage(
        [
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
            {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
        ]
    )
    calls = {
        provider: [
            b.id for b in LangChainCodec(provider).decode([msg])[0].blocks if b.kind == "call"
        ]
        for provider in ("anthropic", "openai", "openai-responses", None)
    }
    assert calls == {
        "anthropic": ["toolu_1"],
        "openai": [],
        "openai-responses": ["call_1"],
        None: ["toolu_1", "call_1"],
    }


def test_v1_standard_blocks() -> None:
    msg = (
        AIMessage(
            content_blocks=[
                {"type": "reasoning", "reasoning": "think"},
                {"type": "text", "text": "hi"},
                {"type": "tool_call", "id": "call_1", "name": "f", "args": {}},
            ]
        )
        if hasattr(AIMessage, "content_blocks") and _v1()
        else None
    )
    if msg is None:
        pytest.skip("v1 content blocks need langchain-core 1.x")
    (decoded,) = LangChainCodec().decode([msg])
    assert [b.kind for b in decoded.blocks if b.kind != "other"] == ["thinking", "text", "call"]
    assert [b.id for b in decoded.blocks if b.kind == "call"] == ["call_1"]


def _v1() -> bool:
    import langchain_core

    return int(langchain_core.__version__.split(".")[0]) >= 1


def test_rename_keeps_the_content_copy_in_step() -> None:
    msg = AIMessage(
        [
            {"type": "text", "text": "x"},
            {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "SF"}},
        ],
        tool_calls=[call("call_1")],
    )
    codec = LangChainCodec()
    (decoded,) = codec.decode([msg])
    blocks = [codec.with_id(b, "abcDEF123") if b.kind == "call" else b for b in decoded.blocks]
    built = codec.build("assistant", blocks, decoded)
    assert isinstance(built, AIMessage)
    assert [c["id"] for c in built.tool_calls] == ["abcDEF123"]
    assert type(built.tool_calls[0]) is dict
    assert built.content[1]["id"] == "abcDEF123"
    assert msg.tool_calls[0]["id"] == "call_1"  # the input is never mutated
    assert msg.content[1]["id"] == "call_1"
    # dropping the call drops its copy too
    rebuilt = codec.build("assistant", [b for b in decoded.blocks if b.kind != "call"], decoded)
    assert rebuilt.tool_calls == []
    assert rebuilt.content == [{"type": "text", "text": "x"}]


def test_make_result_and_text() -> None:
    codec = LangChainCodec()
    call_block = Block("call", call("call_1"), id="call_1", name="weather")
    result = codec.make_result(call_block, "No result.", is_error=True)
    assert result.synthetic and result.is_error and result.id == "call_1"
    assert isinstance(result.native, ToolMessage)
    assert (result.native.tool_call_id, result.native.status) == ("call_1", "error")
    assert codec.build("tool", [result], None) is result.native
    as_text = codec.result_as_text(codec.decode([tool("call_9", "sunny")])[0].blocks[0])
    assert "sunny" in as_text.text and "call_9" in as_text.text
    assert isinstance(codec.build("user", [as_text], None), HumanMessage)


def test_orphans_as_text_policy() -> None:
    history = [human(), tool("call_9", "sunny"), AIMessage("ok"), human("next")]
    result = repair_report(history, "openai", orphans="text")
    assert not any(isinstance(m, ToolMessage) for m in result.messages)
    assert any("sunny" in str(m.content) for m in result.messages)
    assert validate_messages(result.messages, "openai") == []


def test_remove_messages_are_left_alone() -> None:
    remove_all = RemoveMessage(id="__remove_all__")
    history = [remove_all, human(), ai("call_1"), human("new")]
    fixed = repair_report(history, "anthropic").messages
    assert fixed[0] is remove_all
    assert [type(m).__name__ for m in fixed] == [
        "RemoveMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert validate_messages(fixed, "anthropic") == []


def test_malformed_input_names_the_index() -> None:
    with pytest.raises(InvalidHistory) as err:
        LangChainCodec().decode([human(), {"role": "user", "content": "x"}])
    assert err.value.index == 1
    with pytest.raises(InvalidHistory):
        toolpair.validate([human(), 3], "anthropic", format=LangChainCodec())


def test_dict_input_is_converted() -> None:
    fixed = repair_report(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            {"role": "user", "content": "next"},
        ],
        "openai",
    ).messages
    assert [m.type for m in fixed] == ["human", "ai", "tool", "human"]


class ChatAnthropic:  # same class name as the real one: detection is by name only
    pass


class ChatMistralAI:
    pass


class ChatOpenAI:
    def __init__(self, responses: bool) -> None:
        self.use_responses_api = responses


def test_provider_for() -> None:
    assert provider_for(None) == "portable"
    assert provider_for("gemini") == "gemini"
    assert provider_for(ChatAnthropic()) == "anthropic"
    assert provider_for(ChatMistralAI()) == "mistral"
    assert provider_for(ChatOpenAI(False)) == "openai"
    assert provider_for(ChatOpenAI(True)) == "openai-responses"
    assert provider_for(object()) == "portable"


def test_provider_for_real_models(wire: Wire) -> None:
    w = wire
    assert provider_for(w.anthropic()) == "anthropic"
    assert provider_for(w.openai()) == "openai"
    assert provider_for(w.openai(responses=True)) == "openai-responses"
    bound = w.openai().bind_tools([{"type": "web_search_preview"}])
    assert provider_for(bound) == "openai-responses"
    assert provider_for(w.anthropic().bind_tools([])) == "anthropic"
