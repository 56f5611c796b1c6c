"""The no-op checker for ChatMessage lists: a realistic valid history takes the fast
path (nothing is decoded, the very same messages come back), and each hazard leaves it
to the full path. That "certainly valid" never hides a violation is a property of the
conformance suite (test_conformance.py) and of test_fast_mutations.py."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock

import toolpair
from toolpair import InvalidHistory
from toolpair.engine.fast import certainly_valid, check
from toolpair.integrations.llamaindex import (
    LlamaIndexCodec,
    repair_messages,
    validate_messages,
)
from toolpair.integrations.llamaindex._repair import CODEC, codec_for
from toolpair.providers import Context

from .history import (
    ThinkingBlock,
    ToolCallBlock,
    cache_point,
    calls,
    legacy_calls,
    needs_blocks,
    result,
    say,
    system,
    user,
)

FAST_PATH = ("anthropic", "openai")


def ctx(**values: Any) -> Context:
    return Context(shape="chat", format="llamaindex", **values)


def _texts(*texts: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=[TextBlock(text=t) for t in texts])


def fast(history: list[Any], provider: str, **values: Any) -> bool:
    """The verdict the core takes from the codec `repair_messages` reads ``provider``'s
    histories with (exceptions mean "full path")."""
    return certainly_valid(codec_for(provider), provider, history, ctx(**values))


def realistic(exchanges: int = 60) -> list[ChatMessage]:
    """A long agent history as LlamaIndex stores it: a system prompt, user turns (one
    with an image), assistant turns that think (signed), say something and call tools
    in parallel, one tool message per result, and a final answer per question."""
    out: list[ChatMessage] = [system("You are a helpful agent.")]
    n = 0
    for k in range(exchanges):
        question = user(f"question {k}")
        if k % 7 == 0:
            question = question.model_copy(
                update={"blocks": [*question.blocks, ImageBlock(url="https://example.com/a.png")]}
            )
        out.append(question)
        for step in range(k % 3 + 1):
            ids = [f"toolu_01{n + j:022d}" for j in range(step % 2 + 1)]
            n += len(ids)
            msg = calls(*ids, text=f"checking {k}.{step}", name="search")
            if ThinkingBlock is not None and step == 0:
                thought = ThinkingBlock(content="hm", additional_information={"signature": "s1"})
                msg = msg.model_copy(update={"blocks": [thought, *msg.blocks]})
            out.append(msg)
            out.extend(result(i, f"found {i}") for i in ids)
        out.append(say(f"answer {k}"))
    return out


@pytest.fixture
def no_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof that the fast path was taken: the full path would decode."""

    def refuse(self: Any, messages: Any) -> Any:
        raise AssertionError("decoded: the full path was taken")

    monkeypatch.setattr(LlamaIndexCodec, "decode", refuse)


@pytest.mark.parametrize("provider", FAST_PATH)
def test_a_realistic_valid_history_is_certainly_valid(provider: str) -> None:
    history = realistic()
    assert check(CODEC, provider, history, ctx()) is True
    assert toolpair.validate(history, provider, format=CODEC) == []


@pytest.mark.usefixtures("no_decoding")
@pytest.mark.parametrize("provider", FAST_PATH)
def test_repairing_a_valid_history_hands_back_the_very_same_messages(provider: str) -> None:
    history = realistic()
    r = repair_messages(history, provider)
    assert r.fixes == [] and r.id_map == {} and not r.changed
    assert r.messages is not history
    assert len(r.messages) == len(history)
    assert all(a is b for a, b in zip(r.messages, history, strict=True))
    assert (r.provider, r.format) == (provider, "llamaindex")
    assert validate_messages(history, provider) == []
    # The same through the core with the codec, and with policy options.
    assert toolpair.repair(history, provider, format=CODEC).fixes == []
    assert repair_messages(history, provider, orphans="text").fixes == []


def test_policy_options_are_still_checked_on_the_fast_path() -> None:
    with pytest.raises(TypeError):
        repair_messages(realistic(2), "anthropic", no_such_option=True)
    with pytest.raises(TypeError):
        repair_messages(realistic(2), "anthropic", policy=toolpair.Policy(), orphans="text")


def test_an_unknown_provider_is_still_an_error() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        repair_messages(realistic(2), "nonesuch")


@pytest.mark.parametrize("provider", ["bedrock", "gemini", "mistral", "openai-responses"])
def test_other_providers_take_the_full_path(provider: str) -> None:
    assert check(CODEC, provider, realistic(3), ctx()) is None


def test_system_messages_between_calls_and_results_are_left_out_on_anthropic() -> None:
    """Anthropic lifts system messages out of the turn list; OpenAI sends them."""
    history = [user("q"), calls("c1"), system("note"), result("c1"), say("done")]
    assert fast(history, "anthropic")
    assert validate_messages(history, "anthropic") == []
    assert not fast(history, "openai")
    assert validate_messages(history, "openai")


def test_anthropic_shaped_legacy_calls_are_sent_as_they_are() -> None:
    history = [user("q"), legacy_calls("c1", shape="anthropic"), result("c1"), say("3")]
    assert fast(history, "anthropic")
    assert fast(history, "openai")


def test_openai_shaped_legacy_calls_are_fine_for_openai_only() -> None:
    history = [user("q"), legacy_calls("c1", "c2"), result("c2"), result("c1"), say("3")]
    assert fast(history, "openai")
    assert not fast(history, "anthropic")
    r = repair_messages(history, "anthropic")
    assert [f.kind for f in r.fixes] == ["call_lowered"]


@needs_blocks
def test_what_the_openai_llm_stores_is_lowered_for_anthropic() -> None:
    """String arguments in the ToolCallBlock, the SDK's calls mirrored in
    additional_kwargs: valid for OpenAI, rewritten for Anthropic."""
    block = ToolCallBlock(tool_call_id="call_1", tool_name="add", tool_kwargs='{"a": 1}')
    mirror = [{"id": "call_1", "type": "function", "function": {"name": "add"}}]
    asked = ChatMessage(
        role=MessageRole.ASSISTANT, blocks=[block], additional_kwargs={"tool_calls": mirror}
    )
    history = [user("q"), asked, result("call_1"), say("1")]
    assert fast(history, "openai")
    assert not fast(history, "anthropic")
    assert [f.kind for f in repair_messages(history, "anthropic").fixes] == ["call_lowered"]


def _assistant(*blocks: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=list(blocks))


def _call(call_id: str) -> Any:
    return ToolCallBlock(tool_call_id=call_id, tool_name="add", tool_kwargs={"a": 1})


def _error(call_id: str, text: str) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.TOOL,
        content=text,
        additional_kwargs={"tool_call_id": call_id, "is_error": True},
    )


def _thinking(info: dict[str, Any]) -> Any:
    return ThinkingBlock(content="hm", additional_information=info)


def _with(msg: ChatMessage, *blocks: Any) -> ChatMessage:
    return msg.model_copy(update={"blocks": [*msg.blocks, *blocks]})


#: (name, history builder, providers, whether the provider really rejects it). A
#: hazard with False is one the checker is stricter about than the rules: it only
#: costs a full pass.
HAZARDS: list[tuple[str, Any, tuple[str, ...], bool]] = [
    ("dangling_call_at_end", lambda: [user("q"), calls("c1")], FAST_PATH, True),
    (
        "dangling_call_mid",
        lambda: [user("q"), calls("c1"), user("?"), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "some_results_missing",
        lambda: [user("q"), calls("c1", "c2"), result("c1"), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "some_results_missing_at_end",
        lambda: [user("q"), calls("c1", "c2"), result("c1")],
        FAST_PATH,
        True,
    ),
    ("orphan_tool_message", lambda: [user("q"), result("c9"), say("ok")], FAST_PATH, True),
    (
        "orphan_after_its_run",
        lambda: [user("q"), calls("c1"), result("c1"), say("ok"), result("c1")],
        FAST_PATH,
        True,
    ),
    (
        "duplicate_result",
        lambda: [user("q"), calls("c1"), result("c1"), result("c1"), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "result_behind_user_text",
        lambda: [user("q"), calls("c1"), user("hurry"), result("c1"), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "result_with_no_id",
        lambda: [user("q"), calls("c1"), result(None), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        # A4 holds ids unique inside one assistant turn: a later turn may reuse one.
        "call_id_reused_later",
        lambda: [user("q"), calls("c1"), result("c1"), calls("c1"), result("c1"), say("ok")],
        ("anthropic",),
        False,
    ),
    (
        "call_id_repeated_in_a_message",
        lambda: [user("q"), calls("c1", "c1"), result("c1"), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "empty_call_id",
        lambda: [user("q"), calls(""), result(""), say("ok")],
        FAST_PATH,
        True,
    ),
    (
        "call_id_with_a_space",
        lambda: [user("q"), calls("call 1"), result("call 1"), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "call_id_with_a_newline",
        lambda: [user("q"), calls("a\nb"), result("a\nb"), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "call_id_not_ascii",
        lambda: [user("q"), calls("caf\u00e9"), result("caf\u00e9"), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "one_bad_call_id_among_good_ones",
        lambda: [user("q"), calls("c1", "c 2", "c3"), *map(result, ["c1", "c 2", "c3"]), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "call_id_of_41_characters",
        lambda: [user("q"), calls("c" * 41), result("c" * 41), say("ok")],
        ("openai",),
        True,
    ),
    ("blank_user_text", lambda: [user(" "), say("hi")], ("anthropic",), True),
    # Valid: the formatter drops an empty TextBlock, and a whitespace-only one beside
    # real text is accepted; the checker refuses every blank text all the same.
    ("empty_user_text", lambda: [_texts("", "q"), say("hi")], ("anthropic",), False),
    ("blank_user_text_beside_text", lambda: [_texts("q", "\n"), say("hi")], ("anthropic",), False),
    ("blank_assistant_text", lambda: [user("q"), say("\n")], ("anthropic",), True),
    ("trailing_whitespace_at_the_end", lambda: [user("q"), say("done ")], ("anthropic",), True),
    (
        "trailing_whitespace_then_a_system_message",
        lambda: [user("q"), say("done "), system("x")],
        ("anthropic",),
        True,
    ),
    (
        "empty_error_result",
        lambda: [user("q"), calls("c1"), _error("c1", ""), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "tool_between_system_and_its_call",
        lambda: [user("q"), calls("c1"), system("x"), result("c1"), say("ok")],
        ("openai",),
        True,
    ),
    (
        "openai_shaped_legacy_calls",
        lambda: [user("q"), legacy_calls("c1"), result("c1"), say("ok")],
        ("anthropic",),
        True,
    ),
    (
        "not_a_chat_message",
        lambda: [user("q"), {"role": "assistant", "content": "hi"}],
        FAST_PATH,
        True,
    ),
    (
        "legacy_calls_not_a_list",
        lambda: [
            user("q"),
            ChatMessage(role=MessageRole.ASSISTANT, additional_kwargs={"tool_calls": "c1"}),
        ],
        FAST_PATH,
        True,
    ),
]

if ToolCallBlock is not None:
    HAZARDS += [
        (
            "text_after_a_call",
            lambda: [user("q"), _assistant(_call("c1"), TextBlock(text="so")), result("c1")],
            ("anthropic",),
            True,
        ),
        (
            "image_after_a_call",
            lambda: [
                user("q"),
                _assistant(_call("c1"), ImageBlock(url="https://example.com/a.png")),
                result("c1"),
                say("ok"),
            ],
            ("anthropic",),
            True,
        ),
        (
            "text_after_a_call_in_the_next_assistant_message",
            lambda: [user("q"), calls("c1"), say("so"), result("c1"), say("ok")],
            FAST_PATH,
            True,
        ),
        (
            "string_arguments",
            lambda: [
                user("q"),
                _assistant(ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs="{}")),
                result("c1"),
                say("ok"),
            ],
            ("anthropic",),
            True,
        ),
    ]

if ThinkingBlock is not None:
    HAZARDS += [
        (
            "unsigned_thinking",
            lambda: [user("q"), _with(say("ok"), _thinking({}))],
            ("anthropic",),
            True,
        ),
        (
            "thinking_in_a_user_message",
            lambda: [_with(user("q"), _thinking({"signature": "s"})), say("ok")],
            ("anthropic",),
            False,
        ),
    ]

#: User-side blocks the codec reads as ``other`` (no rule reads inside them): content of
#: the user's turn, as text is, so they keep the no-op path where the rules accept them.
UNREAD: list[tuple[str, Any]] = [
    (
        "cache_point",
        lambda: [_with(user("q"), cache_point())],
    ),
]
if ToolCallBlock is not None:
    UNREAD.append(
        ("call_block_in_a_user_message", lambda: [_with(user("q"), _call("c1")), say("ok")])
    )


@pytest.mark.parametrize("build", [b for _, b in UNREAD], ids=[n for n, _ in UNREAD])
def test_user_side_blocks_no_rule_reads_keep_the_fast_path(build: Any) -> None:
    history = build()
    assert validate_messages(history, "anthropic") == []
    assert fast(history, "anthropic")
    # Before a result still due, they are content before it: the full path's.
    unread = ChatMessage(role=MessageRole.USER, blocks=history[0].blocks[1:])
    due = [user("q"), calls("c1"), unread, result("c1")]
    assert not fast(due, "anthropic")


def _cases() -> list[Any]:
    return [
        pytest.param(build, provider, flagged, id=f"{name}-{provider}")
        for name, build, providers, flagged in HAZARDS
        for provider in providers
    ]


@pytest.mark.parametrize(("build", "provider", "flagged"), _cases())
def test_each_hazard_takes_the_full_path(build: Any, provider: str, flagged: bool) -> None:
    history = build()
    assert not fast(history, provider)
    if not flagged:
        assert validate_messages(history, provider) == []
        return
    try:
        found = validate_messages(history, provider)
    except InvalidHistory:
        return  # malformed: the full path says so
    assert found


@pytest.mark.parametrize(
    "values", [{"thinking": True}, {"thinking": False}, {"tools": [{"name": "add"}]}]
)
def test_context_the_anthropic_rules_read_takes_the_full_path(values: dict[str, Any]) -> None:
    history = realistic(3)
    assert fast(history, "anthropic")
    assert not fast(history, "anthropic", **values)


def test_a_hazard_after_a_long_valid_prefix_is_still_found() -> None:
    history = [*realistic(), calls("toolu_late")]
    assert not fast(history, "anthropic")
    r = repair_messages(history, "anthropic")
    assert [f.kind for f in r.fixes] == ["synthetic_result"]
    assert all(a is b for a, b in zip(r.messages, history[:-1], strict=False))
