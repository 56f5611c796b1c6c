"""The LangGraph adapter for the conformance suite (`toolpair.conformance`). LangGraph's
messages are LangChain's, so it builds on the LangChain adapter
(`tests.integrations.langchain.adapter`: the same
generated histories, the same real ChatAnthropic / ChatOpenAI formatters on a mock
transport), and puts LangGraph's own entry points in the path:

- repair is `repair_hook` given the chat model, as ``create_react_agent`` runs it;
- the repaired history is sent by a real ``create_react_agent`` graph run with
  ``pre_model_hook=repair_hook(model)``, so the body is what the graph's model call sends;
- the unrepaired history is sent by the chat model itself (the graph's model call): a
  ``create_react_agent`` graph refuses a history with an unanswered call before its
  model is called, so a graph run would show nothing of what the formatter sends;
- the codec is the one the integration picks (the LangChain codec, whose skeleton gives
  every provider's no-op path), and its fast path is held to the full rules;
- `repair_hook(trim=...)` and `summarize_hook` are compaction entry points next to the
  core's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langgraph.prebuilt import create_react_agent

from toolpair.conformance import CORE_COMPACTORS, Adapter, Compactor
from toolpair.integrations.langchain import LangChainCodec
from toolpair.integrations.langgraph import repair_hook, summarize_hook
from toolpair.integrations.langgraph._common import codec

from ..langchain.adapter import LangChainAdapter
from ..langchain.wire import MODELS, Wire


def _hook_input(hook: Any, messages: Sequence[Any]) -> list[Any]:
    """What ``hook`` (a ``pre_model_hook``) hands the model for a state of ``messages``."""
    return list(hook({"messages": list(messages)})["llm_input_messages"])


def _hook_trim(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    trim = {"max_tokens": 60, "token_counter": "approximate"}
    return _hook_input(repair_hook(provider, model=a.model(provider), trim=trim), messages)


def _summarize(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    hook = summarize_hook(
        lambda older: f"{len(older)} earlier messages",
        max_tokens=60,
        provider=provider,
        model=a.model(provider),
        persist=False,
    )
    return _hook_input(hook, messages)


def _plain(m: BaseMessage) -> BaseMessage:
    if not isinstance(m.content, list) or isinstance(m, ToolMessage):
        return m
    if not all(isinstance(b, dict) and b.get("type") == "text" for b in m.content):
        return m
    return m.model_copy(update={"content": "".join(b["text"] for b in m.content)})


def _long_id(m: AIMessage) -> AIMessage:
    calls = [{**c, "id": (c["id"] or "") + "y" * 40} for c in m.tool_calls]
    return m.model_copy(update={"tool_calls": calls})


@st.composite
def _perturbed(draw: Any, history: list[BaseMessage]) -> list[BaseMessage]:
    """``history`` with shapes the thread no-op path must give up on or get right: list
    content, over-long and empty ids, invalid tool calls, a message subclass. Half the
    time text-only content is first made a plain string, the shape of a LangGraph
    thread (and the only one the no-op path answers "valid" for)."""
    out = [_plain(m) for m in history] if draw(st.booleans()) else list(history)
    for _ in range(draw(st.integers(0, 3))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        m = out[i]
        kind = draw(st.sampled_from(["list", "long_id", "blank_id", "invalid", "chunk"]))
        if (
            kind == "list"
            and isinstance(m, (AIMessage, HumanMessage))
            and isinstance(m.content, str)
        ):
            out[i] = m.model_copy(update={"content": [{"type": "text", "text": m.content}]})
        elif kind == "long_id" and isinstance(m, AIMessage) and m.tool_calls:
            out[i] = _long_id(m)
        elif kind == "blank_id" and isinstance(m, AIMessage) and m.tool_calls:
            calls = [{**m.tool_calls[0], "id": ""}, *m.tool_calls[1:]]
            out[i] = m.model_copy(update={"tool_calls": calls})
        elif kind == "invalid" and isinstance(m, AIMessage):
            bad = {"name": "weather", "args": "{", "id": "call_bad", "error": "bad JSON"}
            out[i] = m.model_copy(update={"invalid_tool_calls": [bad]})
        elif kind == "chunk" and type(m) is AIMessage and isinstance(m.content, str):
            out[i] = AIMessageChunk(content=m.content, tool_calls=m.tool_calls)
    return out


class LangGraphAdapter(LangChainAdapter):
    name = "langgraph"
    # LangGraph's messages and dumps are LangChain's: the LangChain env checks those
    # hooks on toolpair.integrations.langchain; this module has no dump reader of its own.
    integration = None
    #: Every provider: the core's checkers read the LangChain codec's skeleton.
    fast_providers = Adapter.providers

    def __init__(self) -> None:
        self._graphs: dict[str, tuple[Any, Wire]] = {}

    def codec(self, provider: str) -> LangChainCodec:
        return codec(provider)

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        # The hook as an application installs it: given the chat model the agent calls
        # (its provider and model id apply), or a provider name and model id.
        if provider in MODELS:
            return _hook_input(repair_hook(MODELS[provider](Wire())), messages)
        return _hook_input(repair_hook(provider, model=self.model(provider)), messages)

    def _graph(self, provider: str) -> tuple[Any, Wire]:
        if provider not in self._graphs:
            wire = Wire()
            model = MODELS[provider](wire)
            graph = create_react_agent(model, [], pre_model_hook=repair_hook(model))
            self._graphs[provider] = (graph, wire)
        return self._graphs[provider]

    def send_repaired(self, messages: Sequence[Any], provider: str) -> Any:
        # A real graph run: the state's messages go through the hook to the model node.
        # The graph gets copies, as its input: add_messages gives messages without an id
        # one in place, which would change the caller's history.
        graph, wire = self._graph(provider)
        before = len(wire.bodies)
        graph.invoke({"messages": [m.model_copy() for m in messages]})
        assert len(wire.bodies) == before + 1, "the graph made no single model call"
        return wire.bodies[-1]

    def compactors(self) -> dict[str, Compactor]:
        return {**CORE_COMPACTORS, "repair_hook_trim": _hook_trim, "summarize_hook": _summarize}

    def perturb(self, draw: Any, messages: list[Any]) -> list[Any]:
        return draw(_perturbed(messages))
