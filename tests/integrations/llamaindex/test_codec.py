"""The ChatMessage codec: what it reads, what it builds, and that it never mutates."""

from __future__ import annotations

import json

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from toolpair import Block, InvalidHistory
from toolpair.integrations.llamaindex import LlamaIndexCodec

from .history import (
    ToolCallBlock,
    calls,
    legacy_calls,
    needs_blocks,
    result,
    say,
    snapshot,
    system,
    user,
)

codec = LlamaIndexCodec()


def kinds(history: list[ChatMessage]) -> list[tuple[str, list[tuple[str, str | None]]]]:
    return [(m.role, [(b.kind, b.id) for b in m.blocks]) for m in codec.decode(history)]


def test_decode_roles_calls_and_results_keep_native_objects() -> None:
    history = [system("be brief"), user("1+2?"), calls("c1", "c2", text="adding"), result("c2")]
    history.append(result("c1"))
    decoded = codec.decode(history)
    assert [m.role for m in decoded] == ["system", "user", "assistant", "tool", "tool"]
    assert [(b.kind, b.id, b.name) for b in decoded[2].blocks] == [
        ("text", None, None),
        ("call", "c1", "add"),
        ("call", "c2", "add"),
    ]
    assert decoded[2].blocks[0].text == "adding"
    assert [m.native for m in decoded] == history
    assert all(m.index == i for i, m in enumerate(decoded))
    tool = decoded[3]
    assert len(tool.blocks) == 1
    assert tool.blocks[0].kind == "result"
    assert tool.blocks[0].id == "c2"
    assert tool.blocks[0].native is history[3]


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_decode_legacy_tool_calls_after_content(shape: str) -> None:
    msg = legacy_calls("c1", "c2", text="thinking aloud", shape=shape)
    (decoded,) = codec.decode([msg])
    assert [(b.kind, b.id, b.name) for b in decoded.blocks] == [
        ("text", None, None),
        ("call", "c1", "add"),
        ("call", "c2", "add"),
    ]
    assert decoded.blocks[1].native is msg.additional_kwargs["tool_calls"][0]


def test_decode_legacy_sdk_objects() -> None:
    from openai.types.chat import ChatCompletionMessageToolCall

    entry = ChatCompletionMessageToolCall(
        id="call_sdk", type="function", function={"name": "add", "arguments": "{}"}
    )
    msg = ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": [entry]})
    (decoded,) = codec.decode([msg])
    assert [(b.kind, b.id, b.name) for b in decoded.blocks] == [("call", "call_sdk", "add")]


@needs_blocks
def test_blocks_win_over_the_openai_mirror() -> None:
    # The OpenAI LLM writes its calls twice; reading both would double every call.
    msg = calls("c1")
    msg.additional_kwargs["tool_calls"] = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    ]
    assert kinds([msg]) == [("assistant", [("call", "c1")])]


@needs_blocks
def test_decode_string_arguments_and_thinking() -> None:
    from llama_index.core.base.llms.types import ThinkingBlock

    thinking = ThinkingBlock(content="hmm", additional_information={"signature": "sig=="})
    call = ToolCallBlock(tool_call_id="c1", tool_name="add", tool_kwargs='{"a": 1}')
    msg = ChatMessage(role=MessageRole.ASSISTANT, blocks=[thinking, call])
    (decoded,) = codec.decode([msg])
    assert [b.kind for b in decoded.blocks] == ["thinking", "call"]
    assert decoded.blocks[0].native is thinking


def test_result_ids_flags_and_missing_ids() -> None:
    err = ChatMessage(
        role=MessageRole.TOOL,
        content="",
        additional_kwargs={"tool_call_id": "c1", "is_error": True},
    )
    responses = ChatMessage(role=MessageRole.TOOL, content="x", additional_kwargs={"call_id": "c2"})
    function = ChatMessage(role=MessageRole.FUNCTION, content="y", additional_kwargs={})
    blocks = [m.blocks[0] for m in codec.decode([err, responses, function])]
    assert [(b.id, b.is_error, b.empty) for b in blocks] == [
        ("c1", True, True),
        ("c2", False, False),
        (None, False, False),
    ]


@pytest.mark.parametrize(
    ("history", "index"),
    [
        ([{"role": "user", "content": "hi"}], 0),
        ([ChatMessage(role=MessageRole.USER, content="hi"), "text"], 1),
        ([ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": "c1"})], 0),
        ([ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": [3]})], 0),
    ],
)
def test_bad_input_names_the_message(history: list[object], index: int) -> None:
    with pytest.raises(InvalidHistory) as info:
        codec.decode(history)
    assert info.value.index == index


def test_make_result_is_a_tool_message_answering_the_call() -> None:
    (msg,) = codec.decode([calls("c1")])
    call = msg.blocks[0]
    made = codec.make_result(call, "No result was recorded.", is_error=True)
    assert (made.kind, made.id, made.name, made.synthetic, made.is_error) == (
        "result",
        "c1",
        "add",
        True,
        True,
    )
    native = made.native
    assert native.role == MessageRole.TOOL
    assert native.additional_kwargs["tool_call_id"] == "c1"
    assert native.content == "No result was recorded."
    # Round trip: what the codec makes, it reads back the same way.
    (again,) = codec.decode([native])
    assert (again.blocks[0].id, again.blocks[0].is_error) == ("c1", True)


def test_build_assistant_copies_the_template_without_mutating_it() -> None:
    history = [calls("c1", "c2", text="two calls")]
    before = snapshot(history)
    (msg,) = codec.decode(history)
    text, c1, c2 = msg.blocks
    renamed = codec.with_id(c2, "c2x")
    built = codec.build("assistant", [text, c1, renamed], msg)
    assert built is not history[0]
    assert snapshot(history) == before
    (rebuilt,) = codec.decode([built])
    assert [(b.kind, b.id) for b in rebuilt.blocks] == [
        ("text", None),
        ("call", "c1"),
        ("call", "c2x"),
    ]
    assert rebuilt.blocks[0].native is text.native


@needs_blocks
def test_renaming_a_block_call_renames_its_mirror() -> None:
    msg = calls("c1", "c2")
    mirror = [
        {"id": i, "type": "function", "function": {"name": "add", "arguments": "{}"}}
        for i in ("c1", "c2")
    ]
    msg.additional_kwargs["tool_calls"] = mirror
    before = snapshot([msg])
    (decoded,) = codec.decode([msg])
    built = codec.build(
        "assistant", [decoded.blocks[0], codec.with_id(decoded.blocks[1], "zz")], decoded
    )
    assert [e["id"] for e in built.additional_kwargs["tool_calls"]] == ["c1", "zz"]
    assert snapshot([msg]) == before


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_legacy_calls_are_rebuilt_in_additional_kwargs(shape: str) -> None:
    history = [legacy_calls("c1", shape=shape)]
    before = snapshot(history)
    (msg,) = codec.decode(history)
    built = codec.build("assistant", [codec.with_id(msg.blocks[0], "n1")], msg)
    assert [e["id"] for e in built.additional_kwargs["tool_calls"]] == ["n1"]
    assert snapshot(history) == before


def test_result_with_id_and_as_text() -> None:
    history = [result("c1", "42")]
    before = snapshot(history)
    block = codec.decode(history)[0].blocks[0]
    renamed = codec.with_id(block, "c9")
    assert renamed.native.additional_kwargs["tool_call_id"] == "c9"
    assert codec.build("tool", [renamed], None) is renamed.native
    text = codec.result_as_text(block)
    assert text.kind == "text"
    assert "42" in (text.text or "")
    as_user = codec.build("user", [text], codec.decode(history)[0])
    assert as_user.role == MessageRole.USER
    assert "tool_call_id" not in as_user.additional_kwargs
    assert snapshot(history) == before


def test_an_id_less_observation_becomes_its_own_text() -> None:
    block = codec.decode([result(None, "Observation: 3")])[0].blocks[0]
    assert codec.result_as_text(block).text == "Observation: 3"


def test_make_text_builds_a_new_message() -> None:
    block = codec.make_text("Understood.", "assistant")
    built = codec.build("assistant", [block], None)
    assert built.role == MessageRole.ASSISTANT
    assert built.blocks == [TextBlock(text="Understood.")]


def test_build_keeps_an_unknown_block_as_is() -> None:
    from llama_index.core.base.llms.types import CacheControl, CachePoint

    point = CachePoint(cache_control=CacheControl(type="ephemeral"))
    msg = ChatMessage(role=MessageRole.USER, blocks=[TextBlock(text="hi"), point])
    (decoded,) = codec.decode([msg])
    assert [b.kind for b in decoded.blocks] == ["text", "other"]
    built = codec.build("user", decoded.blocks, decoded)
    assert built.blocks[1] is point
    assert json.loads(built.model_dump_json())["role"] == "user"


def test_blocks_have_no_kind_the_core_does_not_know() -> None:
    known = {"text", "image", "call", "result", "thinking", "other"}
    history = [user("hi"), calls("c1"), result("c1"), say("ok")]
    assert {b.kind for m in codec.decode(history) for b in m.blocks} <= known
    assert isinstance(codec.decode(history)[1].blocks[0], Block)
