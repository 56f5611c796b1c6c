"""Real LangGraph graphs, tools and checkpointers for the thread tests, in one module so
a shared conformance suite can build the same stuck threads.

Every graph is the framework's own (``create_react_agent``, ``create_agent``, or a
``StateGraph`` with the prebuilt ``ToolNode``), checkpointed by a real saver. The only
stand-in is the chat model: a scripted fake that issues tool calls and records exactly
what it was sent.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.types import interrupt
from pydantic import Field

INVALID_CHAT_HISTORY = "Found AIMessages with tool_calls that do not have a corresponding"


def call(call_id: str, name: str = "weather", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"city": "Paris"}, "id": call_id, "type": "tool_call"}


def ai_calls(*calls: dict[str, Any], text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=list(calls))


class ScriptedModel(FakeMessagesListChatModel):
    """A chat model that replies with the scripted messages in turn (tool calls kept)
    and records every message list it is sent."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kw)


def model(*replies: AIMessage | str) -> ScriptedModel:
    """A scripted model; a string reply is a plain answer."""
    return ScriptedModel(
        responses=[AIMessage(r) if isinstance(r, str) else r for r in replies] + [AIMessage("done")]
    )


class Ledger:
    """The tools of one test, counting how often each really ran."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    def tools(self) -> list[BaseTool]:
        runs = self.runs

        @tool
        def weather(city: str) -> str:
            """The weather in a city."""
            runs[f"weather:{city}"] += 1
            return f"sunny in {city}"

        @tool
        def approve(action: str) -> str:
            """Ask a human to approve an action first."""
            runs[f"approve:{action}"] += 1
            answer = interrupt({"approve": action})
            return f"{action}: {answer}"

        @tool
        def flaky(x: str) -> str:
            """A tool whose backend is down."""
            runs[f"flaky:{x}"] += 1
            # Fail a moment later than a sibling call finishes: when one task of a step
            # raises, LangGraph cancels the others, and the tests want the sibling's
            # result to exist (as a pending write) deterministically.
            time.sleep(0.05)
            raise RuntimeError("backend down")

        return [weather, approve, flaky]


def raising_tool_node(tools: Sequence[BaseTool]) -> ToolNode:
    """A ToolNode that re-raises tool errors: the default of langgraph-prebuilt >= 1.0.2,
    spelled out so every supported version behaves the same."""
    return ToolNode(list(tools), handle_tool_errors=False)


def react_agent(llm: Any, tools: Sequence[BaseTool], checkpointer: Any, **kw: Any) -> Any:
    return create_react_agent(llm, raising_tool_node(tools), checkpointer=checkpointer, **kw)


def langchain_agent(llm: Any, tools: Sequence[BaseTool], checkpointer: Any, **kw: Any) -> Any:
    from langchain.agents import create_agent

    return create_agent(llm, list(tools), checkpointer=checkpointer, **kw)


def hand_built(
    llm: Any,
    tools: Sequence[BaseTool],
    checkpointer: Any,
    *,
    before_model: Callable[[list[BaseMessage]], Any] | None = None,
) -> Any:
    """The textbook graph: a model node, a ToolNode, ``tools_condition`` between them.
    ``before_model`` (a runnable or function) transforms what the model is sent."""

    def agent(state: MessagesState) -> dict[str, Any]:
        messages = list(state["messages"])
        if before_model is not None:
            invoke = getattr(before_model, "invoke", before_model)
            messages = invoke(messages)
        return {"messages": [llm.invoke(messages)]}

    return loop_graph(agent, raising_tool_node(tools), checkpointer)


def loop_graph(agent: Any, tools: Any, checkpointer: Any) -> Any:
    """``agent`` and ``tools`` nodes with ``tools_condition`` between them, compiled."""
    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def parent_with_subgraph(llm: Any, tools: Sequence[BaseTool], checkpointer: Any) -> tuple[Any, Any]:
    """A parent graph whose single node is a hand-built agent graph (sharing the
    ``messages`` key): the child's state is checkpointed under its own namespace."""
    child = hand_built(llm, tools, None)
    g = StateGraph(MessagesState)
    g.add_node("worker", child)
    g.add_edge(START, "worker")
    g.add_edge("worker", END)
    return g.compile(checkpointer=checkpointer), child


@contextmanager
def saver(kind: str, tmp_path: Any) -> Iterator[Any]:
    """A real checkpointer: ``memory`` (InMemorySaver) or ``sqlite`` (a file)."""
    if kind == "memory":
        yield InMemorySaver()
        return
    conn = sqlite3.connect(str(tmp_path / "checkpoints.sqlite"), check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def messages_of(graph: Any, config: Any) -> list[BaseMessage]:
    return list(graph.get_state(config).values.get("messages", []))


def results(messages: Sequence[BaseMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def cfg(thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# ----------------------------------------------------------------------------- the wire


class AnthropicWire:
    """A real ``ChatAnthropic`` on a mock HTTP transport that records every request body,
    answers with the scripted replies in turn, and rejects what Anthropic rejects about
    pairing (every ``tool_use`` answered by a ``tool_result`` at the head of the next
    message; every ``tool_result`` answering a ``tool_use`` of the previous message) with
    Anthropic's own 400 body. The rules are written out here, independent of toolpair.
    """

    def __init__(self, *replies: list[dict[str, Any]] | str) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.rejected: list[str] = []

    @staticmethod
    def tool_use(call_id: str, name: str = "weather", **args: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": name, "input": args or {"city": "Paris"}}

    @staticmethod
    def pairing_error(messages: list[dict[str, Any]]) -> str | None:
        def blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
            content = m.get("content")
            return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []

        for i, m in enumerate(messages):
            uses = [b["id"] for b in blocks(m) if b.get("type") == "tool_use"]
            if m["role"] == "assistant" and uses:
                nxt = messages[i + 1] if i + 1 < len(messages) else {"role": "user", "content": []}
                lead: list[str] = []
                for b in blocks(nxt) if nxt["role"] == "user" else []:
                    if b.get("type") != "tool_result":
                        break
                    lead.append(b["tool_use_id"])
                if missing := [x for x in uses if x not in lead]:
                    return (
                        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                        "have a corresponding `tool_result` block in the next message."
                    )
            if m["role"] == "user":
                prev = messages[i - 1] if i else {"role": "user", "content": []}
                prev_uses = {b["id"] for b in blocks(prev) if b.get("type") == "tool_use"}
                for j, b in enumerate(blocks(m)):
                    if b.get("type") == "tool_result" and b["tool_use_id"] not in prev_uses:
                        return (
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {b['tool_use_id']}. Each `tool_result` "
                            "block must have a corresponding `tool_use` block in the previous "
                            "message."
                        )
        return None

    def _handle(self, request: Any) -> Any:
        import json

        body = json.loads(request.content)
        self.bodies.append(body)
        error = self.pairing_error(body["messages"])
        if error is not None:
            self.rejected.append(error)
            payload = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": error},
            }
            return ANTHROPIC_HTTP.Response(400, json=payload)
        reply = self.replies.pop(0) if self.replies else "done"
        content = [{"type": "text", "text": reply}] if isinstance(reply, str) else reply
        uses = any(b.get("type") == "tool_use" for b in content)
        return ANTHROPIC_HTTP.Response(
            200,
            json={
                "id": f"msg_{len(self.bodies)}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "tool_use" if uses else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 1},
            },
        )

    def model(self, **kwargs: Any) -> Any:
        import anthropic
        from langchain_anthropic import ChatAnthropic

        llm = ChatAnthropic(model="claude-sonnet-4-5", api_key="x", max_retries=0, **kwargs)
        transport = ANTHROPIC_HTTP.MockTransport(self._handle)
        client = anthropic.Anthropic(
            **dict(llm._client_params),
            http_client=anthropic.DefaultHttpxClient(transport=transport),
        )
        # ChatAnthropic has no http_client field: seed its cached client instead.
        llm.__dict__["_client"] = client
        return llm


def _anthropic_http() -> Any:
    import importlib

    # The anthropic SDK moved from httpx to httpx2 (2.x); its transports are those of
    # whichever HTTP package its own base client imports.
    base = importlib.import_module("anthropic._base_client")
    return getattr(base, "httpx2", None) or base.httpx


ANTHROPIC_HTTP: Any = _anthropic_http()
