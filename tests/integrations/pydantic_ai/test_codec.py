"""The ModelMessage codec on its own: every part kind, no mutation, typed errors."""

from __future__ import annotations

import copy

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolReturnPart,
    UserPromptPart,
)

import toolpair
from toolpair.integrations.pydantic_ai import PydanticAICodec

from .history import T0, call, req, res, ret, user


def _native_parts() -> tuple[type, type]:
    import pydantic_ai.messages as m

    call_cls = getattr(m, "NativeToolCallPart", None) or m.BuiltinToolCallPart
    ret_cls = getattr(m, "NativeToolReturnPart", None) or m.BuiltinToolReturnPart
    return call_cls, ret_cls


@pytest.mark.filterwarnings("ignore:.*RetryPromptPart.*")
def test_decode_every_part_kind() -> None:
    server_call, server_ret = _native_parts()
    history = [
        req(SystemPromptPart("sys"), user("q1")),
        res(
            ThinkingPart("hmm", signature="sig"),
            TextPart("calling"),
            server_call("web_search", {"q": "x"}, tool_call_id="srv1", provider_name="anthropic"),
            server_ret("web_search", {"r": 1}, tool_call_id="srv1", provider_name="anthropic"),
            call("t1"),
            call("t2"),
        ),
        req(
            ret("t1", ""),
            RetryPromptPart("bad args", tool_name="get_x", tool_call_id="t2"),
            RetryPromptPart("answer in JSON"),
            user("next"),
        ),
    ]
    view = PydanticAICodec().decode(history)
    assert [m.role for m in view] == ["user", "assistant", "user"]
    assert all(m.native is history[m.index] for m in view)
    assert [b.kind for b in view[0].blocks] == ["other", "text"]
    assert [b.kind for b in view[1].blocks] == [
        "thinking",
        "text",
        "server_call",
        "server_result",
        "call",
        "call",
    ]
    assert [(b.id, b.name) for b in view[1].blocks if b.kind == "call"] == [
        ("t1", "get_x"),
        ("t2", "get_x"),
    ]
    results = [b for b in view[2].blocks if b.kind == "result"]
    assert [(b.id, b.is_error, b.empty) for b in results] == [
        ("t1", False, True),
        ("t2", True, False),
    ]
    assert [b.kind for b in view[2].blocks[2:]] == ["text", "text"]
    assert view[2].blocks[3].text == "next"
    for m in view:
        for b, part in zip(m.blocks, history[m.index].parts, strict=True):
            assert b.native is part


def test_failed_outcome_is_an_error_result() -> None:
    part = ToolReturnPart("get_x", "boom", tool_call_id="t1")
    if not hasattr(part, "outcome"):
        pytest.skip("this pydantic-ai has no tool return outcomes")
    failed = ToolReturnPart("get_x", "boom", tool_call_id="t1", outcome="failed")
    [m] = PydanticAICodec().decode([req(failed)])
    assert m.blocks[0].is_error


@pytest.mark.parametrize(
    "bad, index",
    [
        ([req(user("q")), "not a message"], 1),
        ([req(call("t1"))], 0),
        ([res(ret("t1"))], 0),
        ([req(user("q")), res(object())], 1),
    ],
)
def test_malformed_input_names_the_message(bad: list[object], index: int) -> None:
    with pytest.raises(toolpair.InvalidHistory) as err:
        PydanticAICodec().decode(bad)
    assert err.value.index == index


def test_build_copies_the_template_and_never_mutates() -> None:
    codec = PydanticAICodec()
    history = [req(user("q1"), ret("t1")), res(TextPart("a"), call("t1"))]
    snapshot = copy.deepcopy(history)
    view = codec.decode(history)
    request = codec.build("user", list(reversed(view[0].blocks)), view[0])
    assert isinstance(request, ModelRequest) and request is not history[0]
    assert [type(p) for p in request.parts] == [ToolReturnPart, UserPromptPart]
    response = codec.build("assistant", view[1].blocks[:1], view[1])
    assert isinstance(response, ModelResponse)
    assert response.timestamp == T0 and response.model_name == "m"
    assert history == snapshot
    assert isinstance(codec.build("user", [], None), ModelRequest)
    assert isinstance(codec.build("assistant", [], None), ModelResponse)


def test_make_result_answers_the_call() -> None:
    codec = PydanticAICodec()
    [_, response] = codec.decode([req(user("q")), res(call("t7"))])
    block = codec.make_result(response.blocks[0], "No result.", is_error=True)
    part = block.native
    assert block.kind == "result" and block.synthetic and block.id == "t7"
    assert isinstance(part, ToolReturnPart)
    assert (part.tool_call_id, part.tool_name, part.content) == ("t7", "get_x", "No result.")
    # Deterministic bytes: the timestamp is the calling response's, not "now".
    assert part.timestamp == T0
    if hasattr(part, "outcome"):
        assert part.outcome == "failed" and block.is_error


def test_with_id_and_result_as_text_copy() -> None:
    codec = PydanticAICodec()
    history = [res(call("a b")), req(ret("a b", {"v": 1}))]
    view = codec.decode(history)
    renamed = codec.with_id(view[0].blocks[0], "a_b")
    assert renamed.id == "a_b" and renamed.native.tool_call_id == "a_b"
    assert history[0].parts[0].tool_call_id == "a b"
    text = codec.result_as_text(view[1].blocks[0])
    assert text.kind == "text" and isinstance(text.native, UserPromptPart)
    assert "a b" in (text.text or "") and '"v"' in (text.text or "")
    assistant_text = codec.make_text("Understood.", "assistant")
    assert isinstance(assistant_text.native, TextPart)
