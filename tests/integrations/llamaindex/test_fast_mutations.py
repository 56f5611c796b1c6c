"""LlamaIndex-specific checks the conformance suite does not make: text after a
ToolCallBlock is moved in front of it, and the no-op checker (`certainly_valid`) judges
each LlamaIndex mutation of a valid history alone, and never says valid where the full
rules find something on histories varied in LlamaIndex's own ways.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock

import toolpair
import toolpair._api
from toolpair.engine.fast import certainly_valid
from toolpair.integrations.llamaindex import repair_messages
from toolpair.integrations.llamaindex._repair import _for_anthropic, codec_for
from toolpair.testing.generate import Abs, abstract_history

from .adapter import (
    CALLS_LAST,
    EXAMPLES,
    FAST_PATH,
    FUZZ,
    check_properties,
    histories,
    render,
)
from .history import ThinkingBlock, ToolCallBlock, cache_point, calls, result, say, system, user


@pytest.mark.skipif(ToolCallBlock is None, reason="llama-index-core < 0.14.5")
@pytest.mark.parametrize("provider", CALLS_LAST)
def test_text_after_a_tool_call_block_is_moved_in_front(provider: str) -> None:
    history = [
        user("q"),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[
                ToolCallBlock(tool_call_id="t1", tool_name="add", tool_kwargs={}),
                TextBlock(text="then"),
            ],
        ),
        result("t1", "3"),
        say("done"),
        user("next"),
    ]
    check_properties(history, provider)


# The no-op checker ---------------------------------------------------------------------


def _kwargs(m: ChatMessage, **extra: Any) -> ChatMessage:
    return m.model_copy(update={"additional_kwargs": {**m.additional_kwargs, **extra}})


def _blocks(m: ChatMessage, blocks: list[Any]) -> ChatMessage:
    return m.model_copy(update={"blocks": blocks})


def _call_blocks(m: ChatMessage) -> list[Any]:
    return [b for b in m.blocks if ToolCallBlock is not None and isinstance(b, ToolCallBlock)]


def _with_calls(m: ChatMessage, change: Any) -> ChatMessage:
    found = _call_blocks(m)
    return _blocks(m, [change(b) if b in found else b for b in m.blocks])


def _legacy(m: ChatMessage, shape: str) -> ChatMessage:
    """The calls of ``m`` moved to additional_kwargs, OpenAI- or Anthropic-shaped."""
    found = _call_blocks(m)
    if shape == "openai":
        entries: list[Any] = [
            {
                "id": b.tool_call_id,
                "type": "function",
                "function": {"name": b.tool_name, "arguments": '{"q": 1}'},
            }
            for b in found
        ]
    else:
        entries = [{"id": b.tool_call_id, "name": b.tool_name, "input": {"q": 1}} for b in found]
    kept = [b for b in m.blocks if b not in found]
    return _kwargs(_blocks(m, kept), tool_calls=entries)


_OTHER_ROLE = {
    MessageRole.ASSISTANT: MessageRole.CHATBOT,
    MessageRole.TOOL: MessageRole.FUNCTION,
    MessageRole.SYSTEM: MessageRole.DEVELOPER,
}


def _thinking(m: ChatMessage, signed: bool) -> ChatMessage:
    if ThinkingBlock is None:
        return m
    info = {"signature": "sig"} if signed else {}
    return _blocks(m, [*m.blocks, ThinkingBlock(content="hm", additional_information=info)])


def _call_id_key(m: ChatMessage) -> ChatMessage:
    kwargs = dict(m.additional_kwargs)
    kwargs["call_id"] = kwargs.pop("tool_call_id", None)
    return m.model_copy(update={"additional_kwargs": kwargs})


def _any(m: ChatMessage) -> bool:
    return True


def _is_tool(m: ChatMessage) -> bool:
    return m.role == MessageRole.TOOL


def _is_assistant(m: ChatMessage) -> bool:
    return m.role == MessageRole.ASSISTANT


def _has_calls(m: ChatMessage) -> bool:
    return bool(_call_blocks(m))


#: Shapes real LlamaIndex histories hold that the core generator does not make, each
#: (which messages it applies to, what replaces such a message). Several are hazards
#: the checker must leave to the full path; the others it should clear.
MUTATIONS: dict[str, tuple[Any, Any]] = {
    "blank_text": (_any, lambda m: [_blocks(m, [*m.blocks, TextBlock(text=" ")])]),
    "empty_text": (_any, lambda m: [_blocks(m, [TextBlock(text=""), *m.blocks])]),
    "string_args": (
        _has_calls,
        lambda m: [_with_calls(m, lambda b: b.model_copy(update={"tool_kwargs": '{"q": 1}'}))],
    ),
    "legacy_openai": (_has_calls, lambda m: [_legacy(m, "openai")]),
    "legacy_anthropic": (_has_calls, lambda m: [_legacy(m, "anthropic")]),
    "mirror": (
        _has_calls,
        lambda m: [_kwargs(m, tool_calls=_legacy(m, "openai").additional_kwargs["tool_calls"])],
    ),
    "repeat_call": (
        _has_calls,
        lambda m: [_blocks(m, [*m.blocks, _call_blocks(m)[0]])],
    ),
    "long_id": (
        _has_calls,
        lambda m: [_with_calls(m, lambda b: b.model_copy(update={"tool_call_id": "c" * 41}))],
    ),
    "error_empty": (_is_tool, lambda m: [_kwargs(_blocks(m, []), is_error=True)]),
    "error_blank": (
        _is_tool,
        lambda m: [_kwargs(_blocks(m, [TextBlock(text=" ")]), is_error=True)],
    ),
    "error_full": (_is_tool, lambda m: [_kwargs(m, is_error=True)]),
    "call_id_key": (_is_tool, lambda m: [_call_id_key(m)]),
    "unsigned_thinking": (_is_assistant, lambda m: [_thinking(m, signed=False)]),
    "signed_thinking": (_is_assistant, lambda m: [_thinking(m, signed=True)]),
    "other_role": (
        lambda m: m.role in _OTHER_ROLE,
        lambda m: [m.model_copy(update={"role": _OTHER_ROLE[m.role]})],
    ),
    "cache_point": (
        _any,
        lambda m: [_blocks(m, [*m.blocks, cache_point()])],
    ),
    "image": (
        _any,
        lambda m: [_blocks(m, [*m.blocks, ImageBlock(url="https://example.com/i.png")])],
    ),
    "call_in_user": (
        lambda m: m.role == MessageRole.USER,
        lambda m: [_blocks(m, [*m.blocks, ToolCallBlock(tool_call_id="u1", tool_name="x")])],
    ),
    "text_after_call": (_has_calls, lambda m: [_blocks(m, [*m.blocks, TextBlock(text="so")])]),
    "image_after_call": (
        _has_calls,
        lambda m: [_blocks(m, [*m.blocks, ImageBlock(url="https://example.com/i.png")])],
    ),
    "drop_result": (_is_tool, lambda m: []),
    "duplicate_result": (_is_tool, lambda m: [m, m.model_copy()]),
    "user_before_result": (_is_tool, lambda m: [user("hello?"), m]),
    "orphan_after": (
        _any,
        lambda m: [
            m,
            ChatMessage(
                role=MessageRole.TOOL, content="boo", additional_kwargs={"tool_call_id": "ghost"}
            ),
        ],
    ),
    "system_before": (_any, lambda m: [system("rule x"), m]),
    "empty_assistant_before": (_any, lambda m: [ChatMessage(role=MessageRole.ASSISTANT), m]),
    "empty_user_before": (_any, lambda m: [ChatMessage(role=MessageRole.USER), m]),
    "say_after": (_any, lambda m: [m, say("bye ")]),
    "user_after": (_any, lambda m: [m, user("more")]),
}


def _reuse_an_id(history: list[ChatMessage]) -> list[ChatMessage]:
    """A later call (and its results) takes the id of an earlier one."""
    callers = [k for k, m in enumerate(history) if _has_calls(m)]
    if len(callers) < 2:
        return history
    a, b = callers[0], callers[-1]
    new = _call_blocks(history[a])[0].tool_call_id
    old = _call_blocks(history[b])[0].tool_call_id
    out = list(history)
    for k in range(b, len(out)):
        m = out[k]
        if _has_calls(m):
            out[k] = _with_calls(
                m,
                lambda c: (
                    c.model_copy(update={"tool_call_id": new}) if c.tool_call_id == old else c
                ),
            )
        elif _is_tool(m) and m.additional_kwargs.get("tool_call_id") == old:
            out[k] = _kwargs(m, tool_call_id=new)
    return out


#: Mutations of a whole history.
WHOLE: dict[str, Any] = {
    "reuse_an_id": _reuse_an_id,
    "say_at_end": lambda h: [*h, say("bye ")],
    "call_at_end": lambda h: [*h, calls("t9")],
    "some_results_at_end": lambda h: [*h, calls("t8", "t9"), result("t8")],
    "all_results_at_end": lambda h: [*h, calls("t8", "t9"), result("t9"), result("t8")],
}


@st.composite
def varied_histories(draw: st.DrawFn) -> list[ChatMessage]:
    """A valid or defective generated history with up to two of the mutations."""
    valid = draw(st.booleans())
    history = render(draw(abstract_history())) if valid else draw(histories())
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from([*sorted(MUTATIONS), *sorted(WHOLE)]))
        if name in WHOLE:
            history = WHOLE[name](history)
            continue
        applies, change = MUTATIONS[name]
        at = [k for k, m in enumerate(history) if applies(m)]
        if name == "call_in_user" and ToolCallBlock is None:
            at = []
        if at:
            k = draw(st.sampled_from(at))
            history[k : k + 1] = change(history[k])
    return history


def certain(history: list[ChatMessage], provider: str) -> bool:
    """The no-op checker's verdict, and when it is "certainly valid", proof that the
    full rules find nothing (and, for Anthropic, that no call needs lowering)."""
    codec = codec_for(provider)
    p = toolpair._api.parse(history, provider, codec, {})
    if not certainly_valid(codec, provider, history, p.ctx):
        return False
    assert p.profile.rules(p.messages, p.ctx) == []
    if provider == "anthropic":
        assert _for_anthropic(history)[1] == []
    return True


@pytest.mark.parametrize("provider", FAST_PATH)
@pytest.mark.parametrize("name", [*sorted(MUTATIONS), *sorted(WHOLE)])
@settings(FUZZ, max_examples=max(3, EXAMPLES // 8))
@given(base=abstract_history())
def test_certainly_valid_judges_each_mutation_alone(
    provider: str, name: str, base: list[Abs]
) -> None:
    """One mutation of a valid history, at every message it applies to: each hazard
    alone, where nothing else sends the history down the full path first."""
    history = render(base)
    if name in WHOLE:
        certain(WHOLE[name](history), provider)
        return
    applies, change = MUTATIONS[name]
    if name == "call_in_user" and ToolCallBlock is None:
        return
    for k, m in enumerate(history):
        if applies(m):
            certain([*history[:k], *change(m), *history[k + 1 :]], provider)


@pytest.mark.parametrize("provider", FAST_PATH)
@settings(FUZZ, max_examples=EXAMPLES * 3)
@given(history=varied_histories())
def test_certainly_valid_implies_the_rules_find_nothing(
    provider: str, history: list[ChatMessage]
) -> None:
    event(f"input certainly valid: {certain(history, provider)}")
    try:
        out = repair_messages(history, provider)
    except toolpair.InvalidHistory:
        return
    fast = certain(out.messages, provider)
    event(f"repaired certainly valid: {fast}")
    if fast:
        # The output holds nothing the checker leaves to the full path, so repairing it
        # again is the fast path, which hands back the very same messages.
        assert provider in FAST_PATH
        again = repair_messages(out.messages, provider)
        assert again.fixes == []
        assert all(a is b for a, b in zip(again.messages, out.messages, strict=True))
