"""Pair-safe memory: windows cut at unit boundaries, tool calls counted, no orphans."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer

import toolpair
from toolpair.integrations.llamaindex import (
    PairSafeMemory,
    PairSafeMemoryBuffer,
    validate_messages,
)

from .history import ToolCallBlock, calls, needs_blocks, result, say, snapshot, system, user
from .wire import FakeAnthropic, anthropic_llm
from .wire import say as reply


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _conversation() -> list[ChatMessage]:
    return [
        system("You add numbers."),
        user("word " * 200),
        calls("toolu_1"),
        result("toolu_1", "3"),
        say("It is 3."),
        user("Two more?"),
        calls("toolu_2", "toolu_3"),
        result("toolu_3", "result " * 30),
        result("toolu_2", "5"),
    ]


def _ids(window: list[ChatMessage]) -> list[str | None]:
    return [m.additional_kwargs.get("tool_call_id") for m in window if m.role == MessageRole.TOOL]


def test_window_keeps_whole_units_from_a_user_turn() -> None:
    history = _conversation()
    before = snapshot(history)
    memory = PairSafeMemoryBuffer.from_defaults(chat_history=list(history), token_limit=120)
    window = memory.get()
    # The long first turn is gone; the second starts at its user message, whole.
    assert window[0] is history[0]
    assert window[1:] == history[5:]
    assert all(a is b for a, b in zip(window[1:], history[5:], strict=True))
    assert validate_messages(window, "anthropic") == []
    assert snapshot(history) == before


def test_plain_buffer_cuts_the_pair_where_pair_safe_does_not() -> None:
    # One long user turn, then a call and its short result: ChatMemoryBuffer keeps
    # just the result on recent llama-index-core, or nothing on older ones.
    history = [user("word " * 400), calls("toolu_1"), result("toolu_1")]
    plain = ChatMemoryBuffer.from_defaults(chat_history=list(history), token_limit=60).get()
    assert plain in ([], [history[-1]])
    safe = PairSafeMemoryBuffer.from_defaults(chat_history=list(history), token_limit=60).get()
    # The newest turn does not fit whole: it is kept from its call on, with the user
    # message that opened it, rather than cut.
    assert safe == history
    assert validate_messages(safe, "anthropic") == []


@needs_blocks
def test_tool_calls_count() -> None:
    big = ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="write", tool_kwargs={"text": "x " * 500})
        ],
    )
    memory = PairSafeMemoryBuffer.from_defaults()
    assert memory.count_tokens(big) > 400
    # Memory's own estimate skips ToolCallBlocks; PairSafeMemory's does not.
    assert PairSafeMemory.from_defaults()._estimate_token_count(big) > 400


def test_stored_orphans_never_come_back() -> None:
    history = [user("hi"), result("toolu_gone"), say("hm"), user("go"), calls("toolu_L")]
    window = PairSafeMemoryBuffer.from_defaults(chat_history=list(history)).get()
    assert validate_messages(window, "openai") == []
    assert "toolu_gone" not in _ids(window)
    assert _ids(window) == ["toolu_L"]


def test_pair_safe_memory_repairs_what_it_reads() -> None:
    history = [user("hi"), calls("toolu_L"), user("still there?")]
    memory = PairSafeMemory.from_defaults(session_id="s", chat_history=list(history))
    window = asyncio.run(memory.aget())
    assert validate_messages(window, "openai") == []
    assert _ids(window) == ["toolu_L"]


def test_function_agent_with_pair_safe_memory_alone_sends_valid_bodies() -> None:
    history = [
        user("word " * 400),
        calls("toolu_1"),
        result("toolu_1"),
        user("x"),
        calls("toolu_L"),
    ]
    memory = PairSafeMemoryBuffer.from_defaults(
        chat_history=list(history), token_limit=80, provider="anthropic"
    )
    server = FakeAnthropic([reply("ok")])
    agent = FunctionAgent(tools=[add], llm=anthropic_llm(server), streaming=False)

    async def go() -> Any:
        return await agent.run(user_msg="hello", memory=memory)

    assert str(asyncio.run(go())) == "ok"
    assert server.rejected == []
    assert toolpair.validate(server.bodies[0], "anthropic") == []


IDS = ["toolu_a", "toolu_b", "toolu_c"]
steps = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 60)),
        st.tuples(st.just("say"), st.integers(1, 60)),
        st.tuples(
            st.just("calls"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2, unique=True)
        ),
        st.tuples(st.just("result"), st.sampled_from(IDS)),
    ),
    min_size=1,
    max_size=10,
)


def _history(spec: list[tuple[str, Any]]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for kind, arg in spec:
        if kind == "user":
            out.append(user(" ".join(["word"] * arg)))
        elif kind == "say":
            out.append(say(" ".join(["word"] * arg)))
        elif kind == "calls":
            out.append(calls(*arg))
        else:
            out.append(result(arg, " ".join(["out"] * 10)))
    return out


@settings(max_examples=80, deadline=None)
@given(steps, st.integers(1, 200), st.sampled_from(["openai", "anthropic"]))
def test_no_window_ever_holds_an_orphan(
    spec: list[tuple[str, Any]], limit: int, provider: str
) -> None:
    history = _history(spec)
    memory = PairSafeMemoryBuffer.from_defaults(
        chat_history=list(history), token_limit=limit, provider=provider
    )
    window = memory.get()
    assert validate_messages(window, provider) == []
    # Every real message in the window comes from the store, in order (results may
    # move: repair puts a misplaced one back after its call).
    stored = [m for m in window if m.role != MessageRole.TOOL and any(m is h for h in history)]
    positions = [next(i for i, h in enumerate(history) if h is m) for m in stored]
    assert positions == sorted(positions)
