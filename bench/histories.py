"""Deterministic, realistic agent histories for the benchmarks.

One seeded neutral conversation (a long tool loop) is rendered into each wire format and
each framework's own message types, so every format sees the same content. The sizes are
fixed so that no ratio can improve by inflating the content:

- one to three calls per assistant turn, half of the call turns open with a text block;
- text blocks average 600 characters (uniform 200..1000);
- call arguments are JSON objects of about 100 characters;
- tool results average 2,000 characters (uniform 500..3500), one in 30 is an error;
- every tenth step or so the assistant answers in text and the user asks again.

Defects ("1% defects": one defect per hundred messages) are applied to the neutral
conversation before rendering, in rotation: a dangling call (its result is missing), an
orphan result (its call is missing), a duplicated result, a user message between a call
turn and its results, and a result whose id a gateway rewrote.
"""

from __future__ import annotations

import itertools
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

SEED = 20240610
_ALNUM = string.ascii_letters + string.digits
_TOOLS = ("search_docs", "read_file", "run_query", "get_weather", "fetch_url", "list_issues")
_DEFECTS = ("dangling", "orphan", "duplicate", "interrupt", "rewritten_id")


@cache
def _corpus(seed: int) -> str:
    rng = random.Random(seed)
    words = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 10)))
        for _ in range(2000)
    ]
    return " ".join(rng.choice(words) for _ in range(120_000))


@dataclass(slots=True)
class Call:
    id: str
    name: str
    args: dict[str, Any]


@dataclass(slots=True)
class Result:
    id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(slots=True)
class Event:
    """``user`` (text), ``call`` (optional text and calls), ``results``, ``say`` (text)."""

    kind: str
    text: str | None = None
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)


def events(seed: int = SEED) -> Iterator[Event]:
    """The neutral conversation, endless; the same seed gives the same prefix."""
    corpus = _corpus(seed)
    rng = random.Random(seed + 2)

    def text(lo: int, hi: int) -> str:
        n = rng.randint(lo, hi)
        start = rng.randrange(0, len(corpus) - n)
        return corpus[start : start + n]

    def token() -> str:
        return "".join(rng.choices(_ALNUM, k=24))

    yield Event("user", text(200, 1000))
    while True:
        calls = []
        for _ in range(rng.randint(1, 3)):
            # {"query": "...", "limit": NN, "offset": NNN}: about 100 characters.
            args = {"query": text(40, 80), "limit": rng.randint(10, 99), "offset": 100}
            calls.append(Call(token(), rng.choice(_TOOLS), args))
        opener = text(200, 1000) if rng.random() < 0.5 else None
        yield Event("call", opener, calls)
        yield Event(
            "results",
            results=[
                Result(c.id, c.name, text(500, 3500), is_error=rng.random() < 1 / 30) for c in calls
            ],
        )
        if rng.random() < 0.1:
            yield Event("say", text(200, 1000))
            yield Event("user", text(200, 1000))


# Each renderer turns one event into native messages of its format.
Renderer = Callable[[Event], list[Any]]


def _content(r: Result) -> str:
    return r.content


def _anthropic(e: Event) -> list[Any]:
    if e.kind in ("user", "say"):
        role = "user" if e.kind == "user" else "assistant"
        return [{"role": role, "content": [{"type": "text", "text": e.text}]}]
    if e.kind == "call":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": e.text}] if e.text else []
        blocks += [
            {"type": "tool_use", "id": "toolu_01" + c.id[:22], "name": c.name, "input": c.args}
            for c in e.calls
        ]
        return [{"role": "assistant", "content": blocks}]
    results = []
    for r in e.results:
        b: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": "toolu_01" + r.id[:22],
            "content": r.content,
        }
        if r.is_error:
            b["is_error"] = True
        results.append(b)
    return [{"role": "user", "content": results}]


def _bedrock(e: Event) -> list[Any]:
    if e.kind in ("user", "say"):
        role = "user" if e.kind == "user" else "assistant"
        return [{"role": role, "content": [{"text": e.text}]}]
    if e.kind == "call":
        blocks: list[dict[str, Any]] = [{"text": e.text}] if e.text else []
        blocks += [
            {"toolUse": {"toolUseId": "tooluse_" + c.id[:22], "name": c.name, "input": c.args}}
            for c in e.calls
        ]
        return [{"role": "assistant", "content": blocks}]
    return [
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_" + r.id[:22],
                        "content": [{"text": r.content}],
                        "status": "error" if r.is_error else "success",
                    }
                }
                for r in e.results
            ],
        }
    ]


def _chat(id_of: Callable[[str], str], named: bool) -> Renderer:
    def render(e: Event) -> list[Any]:
        if e.kind == "user":
            return [{"role": "user", "content": e.text}]
        if e.kind == "say":
            return [{"role": "assistant", "content": e.text}]
        if e.kind == "call":
            calls = [
                {
                    "id": id_of(c.id),
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in e.calls
            ]
            return [{"role": "assistant", "content": e.text, "tool_calls": calls}]
        out = []
        for r in e.results:
            m = {"role": "tool", "tool_call_id": id_of(r.id), "content": r.content}
            if named:
                m["name"] = r.name
            out.append(m)
        return out

    return render


def _responses(e: Event) -> list[Any]:
    if e.kind == "user":
        return [{"type": "message", "role": "user", "content": e.text}]
    if e.kind == "say":
        return [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": e.text}],
            }
        ]
    if e.kind == "call":
        out: list[Any] = []
        if e.text:
            out.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": e.text}],
                }
            )
        out += [
            {
                "type": "function_call",
                "call_id": "call_" + c.id,
                "name": c.name,
                "arguments": json.dumps(c.args),
            }
            for c in e.calls
        ]
        return out
    return [
        {"type": "function_call_output", "call_id": "call_" + r.id, "output": r.content}
        for r in e.results
    ]


_MSG_IDS = itertools.count(1)


def _agents_items(e: Event) -> list[Any]:
    """Responses items as the Agents SDK stores a model's output: assistant messages
    with an id and status (its chat converter rejects output text without them)."""
    out = _responses(e)
    for n, item in enumerate(out):
        if item.get("role") == "assistant":
            out[n] = {**item, "id": f"msg_{next(_MSG_IDS)}", "status": "completed"}
    return out


def _gemini(e: Event) -> list[Any]:
    if e.kind in ("user", "say"):
        role = "user" if e.kind == "user" else "model"
        return [{"role": role, "parts": [{"text": e.text}]}]
    if e.kind == "call":
        parts: list[dict[str, Any]] = [{"text": e.text}] if e.text else []
        parts += [
            {"functionCall": {"id": "fc_" + c.id[:16], "name": c.name, "args": c.args}}
            for c in e.calls
        ]
        return [{"role": "model", "parts": parts}]
    return [
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "fc_" + r.id[:16],
                        "name": r.name,
                        "response": {"error": r.content} if r.is_error else {"result": r.content},
                    }
                }
                for r in e.results
            ],
        }
    ]


WIRE: dict[str, Renderer] = {
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "openai": _chat(lambda i: "call_" + i, named=False),
    "openai-responses": _responses,
    "gemini": _gemini,
    # Mistral call ids are 9 alphanumeric characters.
    "mistral": _chat(lambda i: i[:9], named=True),
}


def take(render: Renderer, n: int, seed: int = SEED) -> list[Event]:
    """The shortest prefix of the conversation, ending at a step boundary, whose
    rendering has at least ``n`` messages."""
    out: list[Event] = []
    count = 0
    for e in events(seed):
        out.append(e)
        count += len(render(e))
        if count >= n and e.kind in ("results", "user"):
            return out
    raise AssertionError("unreachable")


def render(render_one: Renderer, evs: list[Event]) -> list[Any]:
    out: list[Any] = []
    for e in evs:
        out.extend(render_one(e))
    return out


def with_defects(evs: list[Event], count: int, seed: int = SEED) -> list[Event]:
    """A copy of ``evs`` with ``count`` defects, each at a different step."""
    rng = random.Random(seed + 1)
    steps = [i for i, e in enumerate(evs) if e.kind == "call" and i + 1 < len(evs)]
    chosen = sorted(rng.sample(steps, min(count, len(steps))))
    where = {i: _DEFECTS[k % len(_DEFECTS)] for k, i in enumerate(chosen)}
    out: list[Event] = []
    i = 0
    while i < len(evs):
        e = evs[i]
        kind = where.get(i)
        if kind is None:
            out.append(e)
            i += 1
            continue
        call, res = e, evs[i + 1]
        results = list(res.results)
        calls = list(call.calls)
        if kind == "orphan" and len(calls) < 2 and not call.text:
            kind = "dangling"
        if kind == "dangling":
            results = results[:-1]
        elif kind == "orphan":
            calls = calls[:-1]
        elif kind == "duplicate":
            results.append(results[0])
        elif kind == "rewritten_id":
            r = results[-1]
            results[-1] = Result(r.id[::-1], r.name, r.content, r.is_error)
        out.append(Event("call", call.text, calls))
        if kind == "interrupt":
            out.append(Event("user", "Stop, use the cached copy instead."))
        if results:
            out.append(Event("results", results=results))
        i += 2
    return out


@cache
def wire(fmt: str, n: int, defects: bool = False) -> list[Any]:
    """A history of about ``n`` messages in wire format ``fmt``, valid or with one
    defect per hundred messages (cached: callers must not mutate it)."""
    r = WIRE[fmt]
    evs = take(r, n)
    if defects:
        evs = with_defects(evs, max(1, n // 100))
    return render(r, evs)


# Framework histories ---------------------------------------------------------------


def _langchain() -> Renderer:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def render(e: Event) -> list[Any]:
        if e.kind == "user":
            return [HumanMessage(e.text)]
        if e.kind == "say":
            return [AIMessage(e.text)]
        if e.kind == "call":
            calls = [
                {"id": "toolu_01" + c.id[:22], "name": c.name, "args": c.args, "type": "tool_call"}
                for c in e.calls
            ]
            return [AIMessage(e.text or "", tool_calls=calls)]
        return [
            ToolMessage(
                r.content,
                tool_call_id="toolu_01" + r.id[:22],
                name=r.name,
                status="error" if r.is_error else "success",
            )
            for r in e.results
        ]

    return render


def _pydantic_ai() -> Renderer:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    def render(e: Event) -> list[Any]:
        if e.kind == "user":
            return [ModelRequest(parts=[UserPromptPart(e.text or "")])]
        if e.kind == "say":
            return [ModelResponse(parts=[TextPart(e.text or "")])]
        if e.kind == "call":
            parts: list[Any] = [TextPart(e.text)] if e.text else []
            parts += [
                ToolCallPart(c.name, c.args, tool_call_id="toolu_01" + c.id[:22]) for c in e.calls
            ]
            return [ModelResponse(parts=parts)]
        return [
            ModelRequest(
                parts=[
                    ToolReturnPart(r.name, r.content, tool_call_id="toolu_01" + r.id[:22])
                    for r in e.results
                ]
            )
        ]

    return render


def _agno() -> Renderer:
    from agno.models.message import Message

    def render(e: Event) -> list[Any]:
        if e.kind == "user":
            return [Message(role="user", content=e.text)]
        if e.kind == "say":
            return [Message(role="assistant", content=e.text)]
        if e.kind == "call":
            calls = [
                {
                    "id": "toolu_01" + c.id[:22],
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for c in e.calls
            ]
            return [Message(role="assistant", content=e.text, tool_calls=calls)]
        return [
            Message(
                role="tool",
                tool_call_id="toolu_01" + r.id[:22],
                tool_name=r.name,
                content=r.content,
                tool_call_error=r.is_error,
            )
            for r in e.results
        ]

    return render


def _llamaindex() -> Renderer:
    from llama_index.core.base.llms.types import (
        ChatMessage,
        MessageRole,
        TextBlock,
        ToolCallBlock,
    )

    def render(e: Event) -> list[Any]:
        if e.kind == "user":
            return [ChatMessage(role=MessageRole.USER, content=e.text)]
        if e.kind == "say":
            return [ChatMessage(role=MessageRole.ASSISTANT, content=e.text)]
        if e.kind == "call":
            blocks: list[Any] = [TextBlock(text=e.text)] if e.text else []
            blocks += [
                ToolCallBlock(
                    tool_call_id="toolu_01" + c.id[:22], tool_name=c.name, tool_kwargs=c.args
                )
                for c in e.calls
            ]
            return [ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)]
        return [
            ChatMessage(
                role=MessageRole.TOOL,
                content=r.content,
                additional_kwargs={"tool_call_id": "toolu_01" + r.id[:22], "name": r.name},
            )
            for r in e.results
        ]

    return render


def _google_adk() -> Renderer:
    # ADK's request contents for Gemini: google-genai Contents, ADK's own call ids
    # stripped (calls and responses pair by name and place), one Content per event.
    from google.genai import types

    def render(e: Event) -> list[Any]:
        if e.kind in ("user", "say"):
            role = "user" if e.kind == "user" else "model"
            return [types.Content(role=role, parts=[types.Part(text=e.text or "")])]
        if e.kind == "call":
            parts = [types.Part(text=e.text)] if e.text else []
            parts += [
                types.Part(function_call=types.FunctionCall(name=c.name, args=c.args))
                for c in e.calls
            ]
            return [types.Content(role="model", parts=parts)]
        return [
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            name=r.name,
                            response={"error": r.content} if r.is_error else {"result": r.content},
                        )
                    )
                    for r in e.results
                ],
            )
        ]

    return render


FRAMEWORKS: dict[str, Callable[[], Renderer]] = {
    "langchain": _langchain,
    "pydantic-ai": _pydantic_ai,
    "agno": _agno,
    "llamaindex": _llamaindex,
    # The Agents SDK's items are Responses input items, shaped as its runner stores them.
    "openai-agents": lambda: _agents_items,
    "openai-agents-chat": lambda: _agents_items,
    "google-adk": _google_adk,
    # Strands keeps Converse messages, each result with its status, for every model.
    "strands": lambda: _bedrock,
}


def framework(name: str, n: int, defects: bool = False) -> list[Any]:
    """A history of about ``n`` messages in framework ``name``'s own types."""
    r = FRAMEWORKS[name]()
    evs = take(r, n)
    if defects:
        evs = with_defects(evs, max(1, n // 100))
    return render(r, evs)
