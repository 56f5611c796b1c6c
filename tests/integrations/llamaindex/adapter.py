"""The LlamaIndex adapter for the conformance suite (`toolpair.conformance`), and the
pieces other tests here share: generated histories in ``ChatMessage`` types
(ToolCallBlocks, or legacy ``additional_kwargs`` calls before 0.14.5; empty call ids,
which LlamaIndex allows), an independent pairing checker, and the bodies the real
Anthropic and OpenAI LLM classes send (`wire`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock

from toolpair.conformance import Adapter, changes
from toolpair.integrations.llamaindex import GuardedLLM, LlamaIndexCodec, repair_messages
from toolpair.testing.generate import Abs, blank_one_id, chat_problems, defective

from .history import ThinkingBlock, ToolCallBlock, calls, legacy_calls, result, say, system, user
from .wire import FakeAnthropic, FakeOpenAI, accept_all, anthropic_llm, openai_llm

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
HOISTED = ("anthropic", "bedrock", "gemini", "vertex")


def _not_sent(m: ChatMessage, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the converter
    lifts it out, an empty assistant message the Anthropic API merges away."""
    if m.role == MessageRole.SYSTEM:
        return provider in HOISTED
    empty = m.role == MessageRole.ASSISTANT and not m.blocks and not _calls(m)
    return empty and provider == "anthropic"


def simple_problems(history: list[ChatMessage], provider: str) -> list[str]:
    """Written without the codec (`toolpair.testing.generate.chat_problems` over LlamaIndex's
    blocks and legacy ``additional_kwargs``)."""
    return chat_problems(
        [m for m in history if not _not_sent(m, provider)],
        provider,
        role=lambda m: str(m.role.value),
        call_ids=_calls,
        result_id=_result_id,
    )


def images(history: list[ChatMessage]) -> list[str]:
    return [str(b.url) for m in history for b in m.blocks if isinstance(b, ImageBlock)]


def check_properties(history: list[Any], provider: str) -> None:
    """The suite's repair properties for one history, for tests that take other paths."""
    LlamaIndexAdapter().check_repair(history, provider)


# Histories made step by step from LlamaIndex's own pieces, for the wire properties ----

STEP_IDS = ["toolu_a", "toolu_b", "toolu_c", "toolu_d"]

#: One history step: (kind, ids, text flag).
step = st.one_of(
    st.tuples(st.just("user"), st.just(()), st.booleans()),
    st.tuples(st.just("say"), st.just(()), st.booleans()),
    st.tuples(
        st.just("calls"),
        st.lists(st.sampled_from(STEP_IDS), min_size=1, max_size=3, unique=True),
        st.booleans(),
    ),
    st.tuples(
        st.just("result"),
        st.lists(st.sampled_from(STEP_IDS), min_size=1, max_size=1),
        st.booleans(),
    ),
)


def _build(steps: list[tuple[str, Any, bool]], with_system: bool) -> list[ChatMessage]:
    history: list[ChatMessage] = [system("You add numbers.")] if with_system else []
    for n, (kind, ids, flag) in enumerate(steps):
        if kind == "user":
            history.append(user(f"question {n}"))
        elif kind == "say":
            history.append(say(f"answer {n}"))
        elif kind == "calls":
            history.append(calls(*ids, text=f"calling {n}" if flag else ""))
        else:
            history.append(result(ids[0], text=f"result {n}"))
    return history


step_histories = st.builds(_build, st.lists(step, min_size=1, max_size=9), st.booleans())


_SERVERS: dict[str, Any] = {
    "anthropic": FakeAnthropic([], check=accept_all),
    "openai": FakeOpenAI([], check=accept_all),
}
_LLMS: dict[str, Any] = {
    "anthropic": anthropic_llm(_SERVERS["anthropic"]),
    "openai": openai_llm(_SERVERS["openai"]),
}


def _sent(provider: str, history: list[ChatMessage]) -> dict[str, Any]:
    """The request body the real LlamaIndex LLM sends for ``history``."""
    server = _SERVERS[provider]
    server.bodies.clear()
    _LLMS[provider].chat(history)
    (body,) = server.bodies
    return body


@st.composite
def answered(draw: st.DrawFn) -> list[ChatMessage]:
    """Histories whose every call is answered right after it, so that accepted bodies
    are common."""
    out: list[ChatMessage] = [user("question")]
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        ids = [f"toolu_{n + i}" for i in range(draw(st.integers(0, 2)))]
        n += len(ids)
        if ids:
            out.append(calls(*ids, text="calling" if draw(st.booleans()) else ""))
            out.extend(result(i) for i in draw(st.permutations(ids)))
        out.append(say("answer"))
        out.append(user("next"))
    return out


#: The models `wire`'s LLMs are made with.
MODEL_IDS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o"}


class LlamaIndexAdapter(Adapter):
    name = "llamaindex"
    integration = "toolpair.integrations.llamaindex"
    wire_providers = tuple(sorted(_LLMS))
    models = MODEL_IDS
    # Every provider: the core's checkers read the codec's skeleton.
    fast_providers = Adapter.providers

    def codec(self, provider: str) -> LlamaIndexCodec:
        return LlamaIndexCodec()

    def build(self, history: list[Any]) -> list[ChatMessage]:
        return render(history)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        return _sent(provider, list(messages))

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        return repair_messages(list(messages), provider).messages

    def wire_histories(self) -> Any:
        return st.one_of(step_histories, super().wire_histories())

    def harm_histories(self) -> Any:
        # No image the LLM would fetch before sending.
        return st.one_of(histories().filter(lambda h: not images(h)), step_histories, answered())

    def changes(self, messages: Sequence[Any], provider: str) -> list[str]:
        fixed = repair_messages(list(messages), provider, model=self.model(provider))
        return changes(fixed.fixes, fixed.messages, messages)

    def send_repaired(self, messages: Sequence[Any], provider: str) -> Any:
        # The GuardedLLM around the same LLM, with the provider and model it reads off it.
        guarded = GuardedLLM(llm=_LLMS[provider])
        assert guarded.model == self.model(provider)
        server = _SERVERS[provider]
        server.bodies.clear()
        guarded.chat(list(messages))
        (body,) = server.bodies
        return body

    def dump(self, messages: Sequence[Any]) -> Any:
        return [m.model_dump() for m in messages]

    def images(self, messages: Sequence[Any]) -> list[Any]:
        return images(list(messages))

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(list(messages), provider)
