"""Issue 9 at the framework level: properties 1-4 of the core's wire-format suite, for
generated agno histories, for every provider profile, through `AgnoCodec`.

The histories are the core generator's (``tests/core/gen.py``: every defect repair
handles), rendered into agno ``Message`` lists with this suite's own builders
(`_agno_harness`). agno writes no empty ids (the codec rejects one as malformed), so
that defect is not generated here. ``TOOLPAIR_FUZZ`` sets the example count.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _agno_harness import call
from agno.media import Image
from agno.models.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolpair
from toolpair.integrations.agno import AgnoCodec

sys.path.append(str(Path(__file__).parents[2] / "core"))
from gen import Abs, answers_a_call, check_repair_properties, defective

EXAMPLES = int(os.environ.get("TOOLPAIR_FUZZ", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    abstract, _ = draw(defective())
    return render(abstract)


def _content(ts: list[str]) -> Any:
    if not ts:
        return None
    return ts[0] if len(ts) == 1 else [{"type": "text", "text": t} for t in ts]


def _user(m: Abs) -> list[Message]:
    """A user turn: its results as tool messages, the text and images between them as
    user messages, in order."""
    out: list[Message] = []
    ts: list[str] = []
    imgs: list[Image] = []
    for p in [*m.parts, ("end",)]:
        if p[0] in ("result", "end") and (ts or imgs):
            out.append(Message(role="user", content=_content(ts), images=imgs or None))
            ts, imgs = [], []
        if p[0] == "result":
            out.append(
                Message(
                    role="tool",
                    tool_call_id=p[1],
                    tool_name=p[2],
                    content=p[3],
                    tool_call_error=p[4] or None,
                )
            )
        elif p[0] == "text":
            ts.append(p[1])
        elif p[0] == "image":
            imgs.append(Image(url=p[1]))
    return out


def render(msgs: list[Abs]) -> list[Message]:
    out: list[Message] = []
    for m in msgs:
        if m.role == "system":
            out.append(Message(role="system", content=m.parts[0][1]))
        elif m.role == "assistant":
            calls = [call(p[1], "Paris") for p in m.parts if p[0] == "call"]
            thinking = any(p[0] == "thinking" for p in m.parts)
            out.append(
                Message(
                    role="assistant",
                    content=_content([p[1] for p in m.parts if p[0] == "text"]),
                    tool_calls=calls or None,
                    reasoning_content="hm" if thinking else None,
                )
            )
        else:
            out.extend(_user(m))
    return out


#: Providers whose formatter lifts system messages out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini")


def _not_sent(m: Message, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the formatter
    lifts it out, an empty assistant message the Anthropic API merges away."""
    if m.role == "system":
        return provider in HOISTED
    empty = m.role == "assistant" and not m.content and not m.tool_calls
    return empty and provider == "anthropic"


def simple_problems(history: list[Message], provider: str) -> list[str]:
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
        if m.role == "tool":
            k = str(m.tool_call_id)
            if not answers_a_call(k, calls, results, provider):
                problems.append(f"result {k!r} at {i} answers no call")
            results[k] += 1
        elif m.role == "assistant":
            want = [c["id"] for c in m.tool_calls or []]
            calls.update(want)
            want = run + want
            if (
                provider == "anthropic"
                and i + 1 < len(history)
                and history[i + 1].role == "assistant"
            ):
                run = want  # the Messages API merges adjacent assistant turns
                continue
            run = []
            after = history[i + 1 : i + 1 + len(want)]
            got = [r.tool_call_id if r.role == "tool" else None for r in after]
            if provider != "openai-responses" and Counter(got) != Counter(want):
                problems.append(f"calls {want} at {i} answered right after by {got}")
    if calls != results:
        problems.append(f"calls {sorted(calls.elements())}, results {sorted(results.elements())}")
    return problems


def codec(provider: str) -> AgnoCodec:
    return AgnoCodec(provider)


def dump(history: list[Message]) -> list[Any]:
    """Each message as a dict, string content split where the codec joins the texts of
    merged messages (with a blank line), so every text is seen on its own."""
    out = []
    for m in history:
        d = m.model_dump()
        if isinstance(d["content"], str):
            d["content"] = d["content"].split("\n\n")
        out.append(d)
    return out


def images(history: list[Message]) -> list[str | None]:
    return [img.url for m in history for img in m.images or []]


def check_properties(history: list[Message], provider: str) -> None:
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
def test_repair_properties(provider: str, history: list[Message]) -> None:
    check_properties(history, provider)


# --- the no-op checker ---------------------------------------------------------------

#: The providers `AgnoCodec.certainly_valid` answers for; every other one gets None.
FAST = ("anthropic", "openai")


def _retext(m: Message, text: str) -> Message:
    return m.model_copy(update={"content": text})


@st.composite
def perturbed(draw: st.DrawFn, history: list[Message]) -> list[Message]:
    """``history`` with agno-specific shapes the core generator does not make: list
    content, blank and trailing-space texts, empty error results, the other role
    spellings, Responses call_ids, long ids, reasoning, images anywhere, empty
    messages, and messages dropped, repeated or swapped."""
    out = list(history)
    for _ in range(draw(st.integers(0, 3))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        m = out[i]
        kind = draw(
            st.sampled_from(
                (
                    "list",
                    "blank",
                    "trailing",
                    "empty_error",
                    "role",
                    "call_id",
                    "long_id",
                    "reasoning",
                    "media",
                    "empty",
                    "drop",
                    "repeat",
                    "swap",
                )
            )
        )
        if kind == "list" and isinstance(m.content, str):
            out[i] = m.model_copy(update={"content": [{"type": "text", "text": m.content}]})
        elif kind == "blank" and m.role != "tool":
            out[i] = _retext(m, draw(st.sampled_from(("", " ", "\n"))))
        elif kind == "trailing" and isinstance(m.content, str):
            out[i] = _retext(m, m.content + draw(st.sampled_from((" ", "\n"))))
        elif kind == "empty_error" and m.role == "tool":
            content = draw(st.sampled_from((None, "", " ", [])))
            out[i] = m.model_copy(update={"content": content, "tool_call_error": True})
        elif kind == "role":
            other = {"assistant": "model", "system": "developer"}.get(m.role)
            if other is not None:
                out[i] = m.model_copy(update={"role": other})
        elif kind in ("call_id", "long_id") and m.tool_calls:
            k = draw(st.integers(0, len(m.tool_calls) - 1))
            tc = dict(m.tool_calls[k])
            if kind == "call_id":
                tc["call_id"] = draw(st.sampled_from((tc["id"], "fc_" + tc["id"])))
            else:
                tc["id"] = tc["id"] + "x" * 40
            calls = [*m.tool_calls[:k], tc, *m.tool_calls[k + 1 :]]
            out[i] = m.model_copy(update={"tool_calls": calls})
        elif kind == "reasoning" and m.role == "assistant":
            out[i] = m.model_copy(update={"reasoning_content": "so"})
        elif kind == "media" and m.role != "tool":
            out[i] = m.model_copy(update={"images": [*(m.images or []), Image(url="pic")]})
        elif kind == "empty":
            out.insert(i, Message(role=draw(st.sampled_from(("assistant", "user")))))
        elif kind == "drop":
            del out[i]
        elif kind == "repeat":
            out.insert(i, m)
        elif kind == "swap" and i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], m
    return out


@st.composite
def fast_cases(draw: st.DrawFn) -> tuple[list[Message], str]:
    history = draw(histories())
    if draw(st.booleans()):
        # Repaired for any provider: the outputs are the likeliest "valid" histories.
        target = draw(st.sampled_from(toolpair.PROVIDERS))
        history = list(toolpair.repair(history, target, format=AgnoCodec()).messages)
    return draw(perturbed(history)), draw(st.sampled_from(FAST))


# Cheap per example, and the shapes it must catch (an id reused turns later) are
# rare draws: more examples than the repair properties get.
@settings(FUZZ, max_examples=max(EXAMPLES, 150))
@given(case=fast_cases())
def test_certainly_valid_never_hides_a_violation(case: tuple[list[Message], str]) -> None:
    # The agno no-op checker may only say "valid" where decoding and the full rules
    # find nothing.
    from toolpair._api import parse

    history, provider = case
    codec = AgnoCodec()
    p = parse(history, provider, codec, {})
    if codec.certainly_valid(history, provider, p.ctx) is True:
        assert p.profile.rules(p.messages, p.ctx) == []
