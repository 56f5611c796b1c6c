"""Issue 9 at the framework level: properties 1-4 of the core's wire-format suite, for
generated LlamaIndex histories, for every provider profile, through `LlamaIndexCodec`.

The histories are the core generator's (``tests/core/gen.py``: every defect repair
handles), rendered into ``ChatMessage`` lists with this suite's own builders
(`li_history`: ToolCallBlocks, or legacy ``additional_kwargs`` calls before 0.14.5),
plus empty call ids, which LlamaIndex allows. ``TOOLPAIR_FUZZ`` sets the example count.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from li_history import ToolCallBlock, calls, legacy_calls, result, say, system, user
from llama_index.core.base.llms.types import (
    CacheControl,
    CachePoint,
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
)

import toolpair
import toolpair._api
from toolpair._fast import certainly_valid
from toolpair.integrations.llamaindex import LlamaIndexCodec, repair_messages
from toolpair.integrations.llamaindex._repair import CODEC, _for_anthropic

sys.path.append(str(Path(__file__).parents[2] / "core"))
from gen import (
    Abs,
    abstract_history,
    answers_a_call,
    blank_one_id,
    check_repair_properties,
    defective,
)

try:
    from llama_index.core.base.llms.types import ThinkingBlock
except ImportError:  # llama-index-core < 0.14.3
    ThinkingBlock = None  # type: ignore[assignment,misc]

EXAMPLES = int(os.environ.get("TOOLPAIR_FUZZ", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


#: The providers the LlamaIndex codec has a no-op checker for.
FAST_PATH = ("anthropic", "openai")

#: The providers on which text after a ToolCallBlock is a violation that repair moves.
CALLS_LAST = ("anthropic", "portable")


@st.composite
def histories(draw: st.DrawFn, calls_last: bool = False) -> list[ChatMessage]:
    abstract, _ = draw(defective())
    if draw(st.booleans()) and draw(st.booleans()):
        blank_one_id(draw, abstract)
    if calls_last:
        for m in abstract:
            if m.role == "assistant":
                m.parts = sorted(m.parts, key=lambda p: p[0] == "call")
    return render(abstract)


def _assistant(m: Abs) -> ChatMessage:
    blocks: list[Any] = []
    for p in m.parts:
        if p[0] == "text":
            blocks.append(TextBlock(text=p[1]))
        elif p[0] == "thinking" and ThinkingBlock is not None:
            blocks.append(ThinkingBlock(content="hm", additional_information={"signature": p[1]}))
        elif p[0] == "call" and ToolCallBlock is not None:
            blocks.append(ToolCallBlock(tool_call_id=p[1], tool_name=p[2], tool_kwargs={"q": 1}))
    ids = [p[1] for p in m.parts if p[0] == "call"]
    if ToolCallBlock is None and ids:
        legacy = legacy_calls(*ids)
        return legacy.model_copy(update={"blocks": blocks})
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


def render(msgs: list[Abs]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for m in msgs:
        if m.role == "system":
            out.append(system(m.parts[0][1]))
        elif m.role == "assistant":
            out.append(_assistant(m))
        else:
            pending: list[Any] = []
            for p in m.parts:
                if p[0] == "result":
                    if pending:
                        out.append(ChatMessage(role=MessageRole.USER, blocks=pending))
                        pending = []
                    kwargs: dict[str, Any] = {"tool_call_id": p[1]}
                    if p[4]:
                        kwargs["is_error"] = True
                    out.append(
                        ChatMessage(role=MessageRole.TOOL, content=p[3], additional_kwargs=kwargs)
                    )
                elif p[0] == "text":
                    pending.append(TextBlock(text=p[1]))
                elif p[0] == "image":
                    pending.append(ImageBlock(url=f"https://example.com/{p[1]}"))
            if pending or not m.parts:
                out.append(ChatMessage(role=MessageRole.USER, blocks=pending))
    return out


def _calls(m: ChatMessage) -> list[str]:
    ids = [b.tool_call_id for b in m.blocks if getattr(b, "block_type", None) == "tool_call"]
    if not ids:
        ids = [c["id"] for c in m.additional_kwargs.get("tool_calls") or []]
    return [i or "" for i in ids]


def _result_id(m: ChatMessage) -> str:
    return str(m.additional_kwargs.get("tool_call_id") or "")


#: Providers whose converter lifts system messages out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini")


def _not_sent(m: ChatMessage, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the converter
    lifts it out, an empty assistant message the Anthropic API merges away."""
    if m.role == MessageRole.SYSTEM:
        return provider in HOISTED
    empty = m.role == MessageRole.ASSISTANT and not m.blocks and not _calls(m)
    return empty and provider == "anthropic"


def simple_problems(history: list[ChatMessage], provider: str) -> list[str]:
    """Written without the codec: every call is answered by exactly one tool message
    after it and no tool message answers nothing; except on the Responses API (a flat
    item list, where an output only has to follow its call), a call's results are the
    tool messages right after it (after the run of assistant messages, for Anthropic)."""
    problems = []
    calls: Counter[str] = Counter()
    results: Counter[str] = Counter()
    run: list[str] = []
    history = [m for m in history if not _not_sent(m, provider)]
    for i, m in enumerate(history):
        if m.role == MessageRole.TOOL:
            k = _result_id(m)
            if not answers_a_call(k, calls, results, provider):
                problems.append(f"result {k!r} at {i} answers no call")
            results[k] += 1
        elif m.role == MessageRole.ASSISTANT:
            want = _calls(m)
            calls.update(want)
            want = run + want
            if (
                provider == "anthropic"
                and i + 1 < len(history)
                and history[i + 1].role == MessageRole.ASSISTANT
            ):
                run = want  # the Messages API merges adjacent assistant turns
                continue
            run = []
            after = history[i + 1 : i + 1 + len(want)]
            got = [_result_id(r) if r.role == MessageRole.TOOL else None for r in after]
            if provider != "openai-responses" and Counter(got) != Counter(want):
                problems.append(f"calls {want} at {i} answered right after by {got}")
    if calls != results:
        problems.append(f"calls {sorted(calls.elements())}, results {sorted(results.elements())}")
    return problems


def codec(provider: str) -> LlamaIndexCodec:
    return LlamaIndexCodec()


def dump(history: list[ChatMessage]) -> list[Any]:
    return [m.model_dump() for m in history]


def images(history: list[ChatMessage]) -> list[str]:
    return [str(b.url) for m in history for b in m.blocks if isinstance(b, ImageBlock)]


def check_properties(history: list[ChatMessage], provider: str) -> None:
    check_repair_properties(
        history,
        provider,
        codec(provider),
        simple=lambda out: simple_problems(out, provider),
        dump=dump,
        images=images,
    )


@pytest.mark.parametrize("provider", toolpair.PROVIDERS)
@FUZZ
@given(data=st.data())
def test_repair_properties(provider: str, data: st.DataObject) -> None:
    history = data.draw(histories(calls_last=False), label="history")
    check_properties(history, provider)


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
        lambda m: [
            _blocks(m, [*m.blocks, CachePoint(cache_control=CacheControl(type="ephemeral"))])
        ],
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
    p = toolpair._api.parse(history, provider, CODEC, {})
    if not certainly_valid(CODEC, provider, history, p.ctx):
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
