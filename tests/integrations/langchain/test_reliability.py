"""Issue 9 at the framework level: properties 1-4 of the core's wire-format suite, for
generated LangChain histories, for every provider profile, through `LangChainCodec`.

The histories are the core generator's (``tests/core/gen.py``: every defect repair
handles), rendered into ``BaseMessage`` lists with this suite's own builders (`lc_wire`),
plus empty call ids, which LangChain allows. ``TOOLPAIR_FUZZ`` sets the example count.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from lc_wire import call, tool

import toolpair
from toolpair.integrations.langchain import LangChainCodec

sys.path.append(str(Path(__file__).parents[2] / "core"))
from gen import Abs, answers_a_call, blank_one_id, check_repair_properties, defective

EXAMPLES = int(os.environ.get("TOOLPAIR_FUZZ", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    abstract, _ = draw(defective())
    if draw(st.booleans()) and draw(st.booleans()):
        blank_one_id(draw, abstract)
    return render(abstract)


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
                    pending.append({"type": "image_url", "image_url": {"url": p[1]}})
            if pending or not m.parts:
                out.append(HumanMessage(pending))
    return out


#: Providers whose converter lifts system messages out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini")


def _not_sent(m: BaseMessage, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the converter
    lifts it out, an empty assistant message langchain-anthropic leaves out."""
    if isinstance(m, SystemMessage):
        return provider in HOISTED
    empty = isinstance(m, AIMessage) and not m.content and not m.tool_calls
    return empty and not m.invalid_tool_calls and provider == "anthropic"


def simple_problems(history: list[BaseMessage], provider: str) -> list[str]:
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
        if isinstance(m, ToolMessage):
            if not answers_a_call(m.tool_call_id, calls, results, provider):
                problems.append(f"result {m.tool_call_id!r} at {i} answers no call")
            results[m.tool_call_id] += 1
        elif isinstance(m, AIMessage):
            want = [c["id"] or "" for c in [*m.tool_calls, *m.invalid_tool_calls]]
            calls.update(want)
            want = run + want
            if (
                provider == "anthropic"
                and i + 1 < len(history)
                and isinstance(history[i + 1], AIMessage)
            ):
                run = want  # the Messages API merges adjacent assistant turns
                continue
            run = []
            after = history[i + 1 : i + 1 + len(want)]
            got = [r.tool_call_id if isinstance(r, ToolMessage) else None for r in after]
            if provider != "openai-responses" and Counter(got) != Counter(want):
                problems.append(f"calls {want} at {i} answered right after by {got}")
    if calls != results:
        problems.append(f"calls {sorted(calls.elements())}, results {sorted(results.elements())}")
    return problems


def codec(provider: str) -> LangChainCodec:
    return LangChainCodec(provider)


def dump(history: list[BaseMessage]) -> list[Any]:
    return [m.model_dump() for m in history]


def images(history: list[BaseMessage]) -> list[str]:
    return [
        p["image_url"]["url"]
        for m in history
        if isinstance(m.content, list)
        for p in m.content
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]


def check_properties(history: list[BaseMessage], provider: str) -> None:
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
@given(history=histories())
def test_repair_properties(provider: str, history: list[BaseMessage]) -> None:
    check_properties(history, provider)
