"""The LangChain adapter for the conformance suite (`toolpair.conformance`): generated
histories in ``BaseMessage`` types, checked through `LangChainCodec` for every provider
profile, and sent through the real ChatAnthropic / ChatOpenAI request path (`wire`).
The LangGraph adapter builds on it (LangGraph's messages are LangChain's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from toolpair.conformance import changes
from toolpair.integrations.langchain import LangChainCodec, repair_messages, repair_report
from toolpair.testing import Adapter
from toolpair.testing.generate import Abs, chat_problems

from .wire import MODELS, Wire, ai, call, human, tool

#: Providers whose converter lifts system messages out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini", "vertex")
#: The model each `wire` chat model targets.
MODEL_IDS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini"}
MODEL_IDS["openai-responses"] = MODEL_IDS["openai"]
IDS = ["call_a", "call_b", "call_c", "call_d"]


def render(msgs: list[Abs]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in msgs:
        if m.role == "system":
            out.append(SystemMessage(m.parts[0][1]))
        elif m.role == "assistant":
            content: list[Any] = []
            calls = []
            for p in m.parts:
                if p[0] == "text":
                    content.append({"type": "text", "text": p[1]})
                elif p[0] == "thinking":
                    content.append({"type": "thinking", "thinking": "hm", "signature": p[1]})
                elif p[0] == "call":
                    calls.append(call(p[1], p[2]))
            out.append(AIMessage(content, tool_calls=calls))
        else:
            pending: list[Any] = []
            for p in m.parts:
                if p[0] == "result":
                    if pending:
                        out.append(HumanMessage(pending))
                        pending = []
                    out.append(tool(p[1], p[3], name=p[2], status="error" if p[4] else "success"))
                elif p[0] == "text":
                    pending.append({"type": "text", "text": p[1]})
                elif p[0] == "image":
                    pending.append(
                        {
                            "type": "image_url",
                            "image_url": {"url": f"https://example.com/{p[1]}.png"},
                        }
                    )
            if pending or not m.parts:
                out.append(HumanMessage(pending))
    return out


def _not_sent(m: BaseMessage, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the converter
    lifts it out, an empty assistant message langchain-anthropic leaves out."""
    if isinstance(m, SystemMessage):
        return provider in HOISTED
    empty = isinstance(m, AIMessage) and not m.content and not m.tool_calls
    return empty and not m.invalid_tool_calls and provider == "anthropic"


def _role(m: BaseMessage) -> str:
    return "tool" if isinstance(m, ToolMessage) else "assistant" if isinstance(m, AIMessage) else ""


def simple_problems(history: Sequence[BaseMessage], provider: str) -> list[str]:
    """Written without the codec (`toolpair.testing.generate.chat_problems` over LangChain's
    fields); invalid tool calls are calls too."""
    return chat_problems(
        [m for m in history if not _not_sent(m, provider)],
        provider,
        role=_role,
        call_ids=lambda m: [c["id"] or "" for c in [*m.tool_calls, *m.invalid_tool_calls]],
        result_id=lambda m: m.tool_call_id,
    )


# Histories made of LangChain's own pieces, as agents and trimming leave them: tool
# messages anywhere, parallel calls, error results, and (``mostly_valid``) every call
# answered, so the wire properties also meet valid input.
def _message(draw: Any) -> BaseMessage:
    kind = draw(st.sampled_from(["human", "ai_calls", "ai_text", "tool", "tool"]))
    if kind == "human":
        return HumanMessage(draw(st.sampled_from(["q", "next", "hurry"])))
    if kind == "ai_text":
        return AIMessage(draw(st.sampled_from(["done", "ok"])))
    if kind == "ai_calls":
        ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
        return ai(*ids, text=draw(st.sampled_from(["", "looking"])))
    status = draw(st.sampled_from(["success", "success", "error"]))
    return tool(draw(st.sampled_from(IDS)), "result", status=status)


@st.composite
def histories(draw: Any) -> list[BaseMessage]:
    body = [_message(draw) for _ in range(draw(st.integers(1, 7)))]
    head: list[BaseMessage] = [SystemMessage("sys")] if draw(st.booleans()) else []
    return [*head, *body]


@st.composite
def mostly_valid(draw: Any) -> list[BaseMessage]:
    out: list[BaseMessage] = [HumanMessage("q")]
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 3))):
        free = [i for i in IDS if i not in used]
        if not free:
            break
        ids = draw(st.lists(st.sampled_from(free), min_size=1, max_size=2, unique=True))
        used.update(ids)
        out.append(ai(*ids))
        out.extend(tool(i) for i in draw(st.permutations(ids)))
        if draw(st.booleans()):
            out.append(AIMessage("done"))
            out.append(HumanMessage("next"))
    return out


NATIVE_IDS = ["toolu_a", "toolu_b", "call.c"]


@st.composite
def native_histories(draw: Any) -> list[BaseMessage]:
    """Histories mixing native tool_use/tool_result blocks with tool_calls/ToolMessages,
    ending on a user turn."""
    out: list[BaseMessage] = [human("q")]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["native", "native", "calls", "text"]))
        if kind == "native":
            ids = draw(st.lists(st.sampled_from(NATIVE_IDS), min_size=1, max_size=2, unique=True))
            out.append(
                AIMessage(
                    [{"type": "tool_use", "id": i, "name": "weather", "input": {}} for i in ids]
                )
            )
            answered = draw(st.lists(st.sampled_from(ids), max_size=len(ids), unique=True))
            blocks: list[Any] = [
                {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in answered
            ]
            if draw(st.booleans()):
                blocks.append({"type": "text", "text": "more"})
            if blocks:
                out.append(HumanMessage(blocks))
        elif kind == "calls":
            ids = draw(st.lists(st.sampled_from(["c1", "c2"]), min_size=1, max_size=2, unique=True))
            out.append(ai(*ids))
            out.extend(tool(i) for i in draw(st.permutations(ids)))
        else:
            out.append(AIMessage("done"))
            out.append(human("next"))
    if not isinstance(out[-1], HumanMessage) or out[-1].content == []:
        out.append(human("go"))
    return out


class LangChainAdapter(Adapter):
    name = "langchain"
    integration = "toolpair.integrations.langchain"
    models = MODEL_IDS
    wire_providers = tuple(sorted(MODELS))
    # Every provider: the core's checkers read the LangChain codec's skeleton.
    fast_providers = Adapter.providers
    foreign_dumps = (
        [{"kind": "request", "parts": []}],
        [{"type": "human", "data": {"content": "hi"}, "extra": 1}],
    )

    def codec(self, provider: str) -> LangChainCodec:
        return LangChainCodec(provider)

    def build(self, history: list[Any]) -> list[BaseMessage]:
        return render(history)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        wire = Wire()
        return wire.send(MODELS[provider](wire), messages)

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        # With a chat model, the provider comes from the model, as an application
        # passes it.
        target = MODELS[provider](Wire()) if provider in MODELS else provider
        return repair_messages(list(messages), target)

    def wire_histories(self) -> Any:
        return st.one_of(histories(), mostly_valid(), super().wire_histories())

    def valid_histories(self) -> Any:
        return st.one_of(mostly_valid(), super().valid_histories())

    def harm_histories(self) -> Any:
        return st.one_of(histories(), mostly_valid(), native_histories())

    def changes(self, messages: Sequence[Any], provider: str) -> list[str]:
        # The chat model, as an application passes it: provider and model come from it.
        result = repair_report(list(messages), MODELS[provider](Wire()))
        return changes(result.fixes, result.messages, messages)

    def wire_format(self, provider: str) -> str | None:
        # An OpenAI body carrying a passed-through tool_result part is still an OpenAI body.
        return provider

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        if provider != "openai-responses":
            return True
        # langchain-openai silently drops a function_call whose call_id an earlier one
        # used, so the wire loses the second call (its output is then an orphan there),
        # while the codec reads both calls, answered, as valid. Not comparable.
        calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
        return len(calls) == len(set(calls))

    def dump(self, messages: Sequence[Any]) -> Any:
        return [m.model_dump() for m in messages]

    def images(self, messages: Sequence[Any]) -> list[Any]:
        return [
            p["image_url"]["url"]
            for m in messages
            if isinstance(m.content, list)
            for p in m.content
            if isinstance(p, dict) and p.get("type") == "image_url"
        ]

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(messages, provider)
