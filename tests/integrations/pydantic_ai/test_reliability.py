"""Issue 9 at the framework level: properties 1-4 of the core's wire-format suite, for
generated pydantic-ai histories, for every provider profile, through `PydanticAICodec`.

The histories are the core generator's (``tests/core/gen.py``: every defect repair
handles), rendered into ``ModelRequest``/``ModelResponse`` lists with this suite's own
builders (`pai_histories`), plus empty call ids, which pydantic-ai allows. Error results
are ``outcome="failed"`` returns (``RetryPromptPart`` on 1.x without outcomes).
``TOOLPAIR_FUZZ`` sets the example count.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pai_histories import T0, req, res, user
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import toolpair
from toolpair.integrations.pydantic_ai import PydanticAICodec

sys.path.append(str(Path(__file__).parents[2] / "core"))
from gen import Abs, answers_a_call, blank_one_id, check_repair_properties, defective

EXAMPLES = int(os.environ.get("TOOLPAIR_FUZZ", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HAS_OUTCOME = "outcome" in {f.name for f in dataclasses.fields(ToolReturnPart)}


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    abstract, _ = draw(defective())
    if draw(st.booleans()) and draw(st.booleans()):
        blank_one_id(draw, abstract)
    return render(abstract)


def _result(call_id: str, name: str, content: str, is_error: bool) -> Any:
    if not is_error:
        return ToolReturnPart(name, content, tool_call_id=call_id, timestamp=T0)
    if HAS_OUTCOME:
        return ToolReturnPart(name, content, tool_call_id=call_id, timestamp=T0, outcome="failed")
    from pydantic_ai.messages import RetryPromptPart

    return RetryPromptPart(content, tool_name=name, tool_call_id=call_id, timestamp=T0)


def render(msgs: list[Abs]) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for m in msgs:
        if m.role == "system":
            out.append(req(SystemPromptPart(m.parts[0][1], timestamp=T0)))
        elif m.role == "assistant":
            parts: list[Any] = []
            for p in m.parts:
                if p[0] == "text":
                    parts.append(TextPart(p[1]))
                elif p[0] == "thinking":
                    parts.append(ThinkingPart("hm", signature=p[1]))
                elif p[0] == "call":
                    parts.append(ToolCallPart(p[2], {"q": 1}, tool_call_id=p[1]))
            out.append(res(*parts))
        else:
            rparts: list[Any] = []
            for p in m.parts:
                if p[0] == "result":
                    rparts.append(_result(p[1], p[2], p[3], p[4]))
                elif p[0] == "text":
                    rparts.append(user(p[1]))
                elif p[0] == "image":
                    rparts.append(UserPromptPart([ImageUrl(p[1])], timestamp=T0))
            out.append(req(*rparts))
    return out


def _results(m: ModelRequest) -> list[str]:
    return [
        p.tool_call_id
        for p in m.parts
        if p.part_kind == "tool-return"
        or (p.part_kind == "retry-prompt" and getattr(p, "tool_name", None) is not None)
    ]


#: Providers whose wire format lifts system prompts out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini")


def _not_sent(m: ModelMessage, provider: str) -> bool:
    """A message that is no turn on the wire: a request holding only system prompts
    where they are lifted out, an empty response the Anthropic mapping leaves out."""
    if isinstance(m, ModelRequest):
        kinds = {p.part_kind for p in m.parts}
        return bool(kinds) and kinds <= {"system-prompt"} and provider in HOISTED
    return not m.parts and provider == "anthropic"


def _answers_after(rest: list[ModelMessage], provider: str) -> list[str]:
    """The results that answer the response just before ``rest``: those of the next
    request; of the next run of requests for Anthropic (the Messages API merges adjacent
    user turns); for OpenAI Chat and Mistral, where every return is its own tool
    message, the returns up to the first other part."""
    got: list[str] = []
    for nxt in rest:
        if not isinstance(nxt, ModelRequest):
            break
        if provider in ("openai", "mistral"):
            for p in nxt.parts:
                if not _results(ModelRequest(parts=[p])):
                    return got
                got += _results(ModelRequest(parts=[p]))
            continue
        got += _results(nxt)
        if provider != "anthropic":
            break
    return got


def simple_problems(history: list[ModelMessage], provider: str) -> list[str]:
    """Written without the codec: every call is answered exactly once after it and no
    result answers nothing; except on the Responses API (a flat item list, where an
    output only has to follow its call), a response's calls are answered right after
    it (`_answers_after`)."""
    problems = []
    calls: Counter[str] = Counter()
    results: Counter[str] = Counter()
    history = [m for m in history if not _not_sent(m, provider)]
    for i, m in enumerate(history):
        if isinstance(m, ModelRequest):
            for k in _results(m):
                if not answers_a_call(k, calls, results, provider):
                    problems.append(f"result {k!r} at {i} answers no call")
                results[k] += 1
        else:
            want = [p.tool_call_id for p in m.parts if p.part_kind == "tool-call"]
            calls.update(want)
            got = _answers_after(history[i + 1 :], provider)
            if want and provider != "openai-responses" and Counter(got) != Counter(want):
                problems.append(f"calls {want} at {i} answered in the next request by {got}")
    if calls != results:
        problems.append(f"calls {sorted(calls.elements())}, results {sorted(results.elements())}")
    return problems


def codec(provider: str) -> PydanticAICodec:
    return PydanticAICodec()


def dump(history: list[ModelMessage]) -> list[Any]:
    return [dataclasses.asdict(m) for m in history]


def images(history: list[ModelMessage]) -> list[str]:
    return [
        c.url
        for m in history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
        for c in p.content
        if isinstance(c, ImageUrl)
    ]


def check_properties(history: list[ModelMessage], provider: str) -> None:
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
def test_repair_properties(provider: str, history: list[ModelMessage]) -> None:
    check_properties(history, provider)
