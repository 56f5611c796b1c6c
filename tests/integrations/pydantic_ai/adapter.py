"""The pydantic-ai adapter for the conformance suite (`toolpair.conformance`), and the
pieces other tests here share: generated histories in ``ModelRequest``/``ModelResponse``
types (error results are ``outcome="failed"`` returns, ``RetryPromptPart`` on 1.x
without outcomes), an independent pairing checker, pydantic-ai specific hazards for the
fast path, and the real model classes' request bodies (`wire`)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from pydantic_ai import direct
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from toolpair.conformance import Adapter, changes
from toolpair.integrations.pydantic_ai import PydanticAICodec, repair
from toolpair.testing.generate import (
    HOSTED_ON,
    Abs,
    answers_a_call,
    blank_one_id,
    defective,
)

from .history import T0, call, req, res, ret, user
from .wire import WIRE_MODELS, Capture

HAS_OUTCOME = "outcome" in {f.name for f in dataclasses.fields(ToolReturnPart)}


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
HOISTED = ("anthropic", "bedrock", "gemini", "vertex")


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
    it (`_answers_after`). A host profile is read as the API it is hosted on."""
    provider = HOSTED_ON.get(provider, provider)
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


# Hazards added to generated histories, for the fast path -------------------------------


def _retry_part(content: Any, call_id: str | None) -> Any:
    """A retry prompt as this pydantic-ai version writes it: 2.x answers a call with a
    ``retried`` return and sends call-less feedback as a `RetryFeedbackPart`; 1.x has
    `RetryPromptPart` for both."""
    import pydantic_ai.messages as m

    if hasattr(m, "RetryFeedbackPart"):
        if call_id is not None:
            return ToolReturnPart(
                "get_x", content, tool_call_id=call_id, timestamp=T0, outcome="retried"
            )
        return m.RetryFeedbackPart(content, retry=m.RetryInfo("validation_error"), timestamp=T0)
    if call_id is not None:
        return m.RetryPromptPart(content, tool_name="get_x", tool_call_id=call_id, timestamp=T0)
    return m.RetryPromptPart(content, timestamp=T0)


def _legacy_retry(content: Any, call_id: str | None) -> Any:
    """`RetryPromptPart` itself, deprecated on 2.x but still read by the codec."""
    from pydantic_ai.messages import RetryPromptPart

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if call_id is None:
            return RetryPromptPart(content, timestamp=T0)
        return RetryPromptPart(content, tool_name="get_x", tool_call_id=call_id, timestamp=T0)


def _server_call() -> Any:
    import pydantic_ai.messages as m

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = getattr(m, "NativeToolCallPart", None) or m.BuiltinToolCallPart
    return cls("web_search", {"q": "x"}, tool_call_id="srvtoolu_1", provider_name="anthropic")


HAZARDS = (
    "retry_for_return",
    "legacy_retry_for_return",
    "retry_feedback",
    "empty_error_return",
    "blank_text",
    "trailing_space",
    "system_prompt",
    "thinking",
    "empty_message",
    "move_part",
    "blank_in_list",
    "server_tool",
)


def _replace_part(history: list[ModelMessage], i: int, k: int, part: Any) -> None:
    parts = list(history[i].parts)
    parts[k] = part
    history[i] = dataclasses.replace(history[i], parts=parts)


def _insert_part(history: list[ModelMessage], i: int, k: int, part: Any) -> None:
    parts = list(history[i].parts)
    parts.insert(k, part)
    history[i] = dataclasses.replace(history[i], parts=parts)


def _where(history: list[ModelMessage], kind: str) -> list[tuple[int, int]]:
    return [
        (i, k) for i, m in enumerate(history) for k, p in enumerate(m.parts) if p.part_kind == kind
    ]


@st.composite
def hazardous(draw: st.DrawFn, history: list[ModelMessage]) -> list[ModelMessage]:
    """``history`` with a few pydantic-ai specific hazards; new messages where changed,
    so the original (possibly a repair's output sharing objects) stays as it was."""
    out = list(history)
    requests = [i for i, m in enumerate(out) if isinstance(m, ModelRequest)]
    responses = [i for i, m in enumerate(out) if isinstance(m, ModelResponse)]
    contents = st.sampled_from(["fix the args", "", "  ", None, [], ["x"]])
    for h in draw(st.lists(st.sampled_from(HAZARDS), max_size=3)):
        returns = _where(out, "tool-return")
        texts = _where(out, "text") + _where(out, "user-prompt")
        if h in ("retry_for_return", "legacy_retry_for_return", "empty_error_return") and returns:
            i, k = draw(st.sampled_from(returns))
            cid = out[i].parts[k].tool_call_id
            content = draw(contents)
            if h == "retry_for_return":
                part = _retry_part(content if content is not None else "", cid)
            elif h == "legacy_retry_for_return":
                part = _legacy_retry(content if content is not None else "", cid)
            elif HAS_OUTCOME:
                part = ToolReturnPart("get_x", content, tool_call_id=cid, outcome="failed")
            else:
                part = ToolReturnPart("get_x", content, tool_call_id=cid)
            _replace_part(out, i, k, part)
        elif h == "retry_feedback" and requests:
            i = draw(st.sampled_from(requests))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(out, i, k, _retry_part(draw(st.sampled_from(["use JSON", ""])), None))
        elif h == "blank_text" and texts:
            i, k = draw(st.sampled_from(texts))
            text = draw(st.sampled_from(["", " ", "\n", "ok "]))
            part = out[i].parts[k]
            _replace_part(out, i, k, dataclasses.replace(part, content=text))
        elif h == "trailing_space":
            out.append(res(TextPart(draw(st.sampled_from(["done ", "done\n", "done"])))))
        elif h == "system_prompt" and requests:
            i = draw(st.sampled_from(requests))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(out, i, k, SystemPromptPart("be brief", timestamp=T0))
        elif h == "thinking" and responses:
            i = draw(st.sampled_from(responses))
            k = draw(st.integers(0, len(out[i].parts)))
            _insert_part(
                out, i, k, ThinkingPart("hm", signature=draw(st.sampled_from(["s", None])))
            )
        elif h == "empty_message":
            i = draw(st.integers(0, len(out)))
            out.insert(i, draw(st.sampled_from([req(), res()])))
        elif h == "move_part" and out:
            i = draw(st.integers(0, len(out) - 1))
            parts = list(out[i].parts)
            if len(parts) > 1:
                a, b = draw(st.permutations(range(len(parts))))[:2]
                parts[a], parts[b] = parts[b], parts[a]
                out[i] = dataclasses.replace(out[i], parts=parts)
        elif h == "blank_in_list" and requests:
            i = draw(st.sampled_from(requests))
            part = UserPromptPart([draw(st.sampled_from(["", " ", "look"])), ImageUrl("u")])
            _insert_part(out, i, draw(st.integers(0, len(out[i].parts))), part)
        elif h == "server_tool" and responses:
            _insert_part(out, draw(st.sampled_from(responses)), 0, _server_call())
    return out


# Histories as agent runs write them: requests and responses alternate -----------------

IDS = ["t1", "t2", "t3"]

request_part = st.one_of(
    st.builds(user, st.sampled_from(["hi", "more", "why?"])),
    st.builds(ret, st.sampled_from(IDS), st.sampled_from([1, "done", ""])),
)
response_part = st.one_of(
    st.builds(TextPart, st.sampled_from(["ok", "let me check"])),
    st.builds(call, st.sampled_from(IDS), st.integers(0, 3)),
)
request = st.lists(request_part, min_size=1, max_size=3).map(lambda ps: req(*ps))
response = st.lists(response_part, min_size=1, max_size=3).map(lambda ps: res(*ps))


@st.composite
def alternating(draw: st.DrawFn) -> list[ModelMessage]:
    """Requests and responses alternate, as in every history an agent run writes; the
    last request ends with a user turn, as every run's request does."""
    turns = draw(st.integers(0, 3))
    out: list[ModelMessage] = [req(user("start"))]
    for _ in range(turns):
        out.append(draw(response))
        out.append(draw(request))
    last = out[-1]
    out[-1] = req(*last.parts, user("now answer")) if turns else req(user("start"), user("go"))
    return out


@st.composite
def answered(draw: st.DrawFn) -> list[ModelMessage]:
    """Histories whose every call is answered in the next request (results in any
    order, maybe followed by user text), so that accepted bodies are common."""
    out: list[ModelMessage] = [req(user("start"))]
    n = 0
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, 2))
        ids = [f"t{n + i}" for i in range(k)]
        n += k
        text = [TextPart("let me check")] if draw(st.booleans()) or not ids else []
        out.append(res(*text, *(call(i) for i in ids)))
        parts: list[Any] = [ret(i) for i in draw(st.permutations(ids))]
        if draw(st.booleans()) or not parts:
            parts.append(user("more"))
        out.append(req(*parts))
    last = out[-1]
    out[-1] = req(*last.parts, user("now answer"))
    return out


#: The model each `wire` model class targets.
MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o",
    "openai-responses": "gpt-4o",
    "bedrock": "anthropic.claude-3-5-sonnet-20240620-v1:0",
}


class PydanticAIAdapter(Adapter):
    name = "pydantic-ai"
    integration = "toolpair.integrations.pydantic_ai"
    models = MODEL_IDS
    wire_providers = tuple(sorted(WIRE_MODELS))
    #: The providers the codec has a checker for.
    fast_providers = ("anthropic", "openai", "portable")
    foreign_dumps = ([{"type": "human", "data": {"content": "hi"}}],)

    def codec(self, provider: str) -> PydanticAICodec:
        return PydanticAICodec()

    def build(self, history: list[Any]) -> list[ModelMessage]:
        return render(history)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        # `direct.model_request` maps the history as stored (none of pydantic-ai's own
        # cleaning), so the wire shows exactly what the codec read.
        capture = Capture()
        asyncio.run(direct.model_request(WIRE_MODELS[provider](capture), list(messages)))
        return capture.last

    def wire_histories(self) -> Any:
        return st.one_of(alternating(), super().wire_histories())

    def harm_histories(self) -> Any:
        return st.one_of(alternating(), answered())

    def changes(self, messages: Sequence[Any], provider: str) -> list[str]:
        fixed = repair(list(messages), provider, model=self.model(provider))
        return changes(fixed.fixes, fixed.messages, messages)

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        if provider != "bedrock":
            return True
        # pydantic-ai's Bedrock mapping sends a ThinkingPart another provider wrote as
        # user text, in the request before it: after a tool return that makes a turn
        # of results and text, which Bedrock rejects, while the codec reads the part
        # as thinking. Not comparable until the codec models that mapping.
        return not any(
            isinstance(p, ThinkingPart) and p.provider_name != "bedrock"
            for m in messages
            if isinstance(m, ModelResponse)
            for p in m.parts
        )

    def perturb(self, draw: Any, messages: list[Any]) -> list[Any]:
        return draw(hazardous(messages)) if draw(st.booleans()) else messages

    def dump(self, messages: Sequence[Any]) -> Any:
        return [dataclasses.asdict(m) for m in messages]

    def images(self, messages: Sequence[Any]) -> list[Any]:
        return images(list(messages))

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(list(messages), provider)


# For the tests here that run the repair properties on other paths ---------------------

FUZZ = settings(
    max_examples=int(os.environ.get("TOOLPAIR_FUZZ", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    """The suite's generated defective histories, some with an empty call id."""
    abstract, _ = draw(defective())
    if draw(st.booleans()) and draw(st.booleans()):
        blank_one_id(draw, abstract)
    return render(abstract)


def check_properties(history: list[Any], provider: str) -> None:
    """The suite's repair properties for one history, for tests that take other paths."""
    PydanticAIAdapter().check_repair(history, provider)
