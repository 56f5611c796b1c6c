"""The agno adapter for the conformance suite (`toolpair.conformance`): generated
histories in agno ``Message`` types (agno writes no empty ids, so none are generated),
an independent pairing checker, agno-specific shapes for the fast path, and the body
a real agno ``Agent`` run puts on the wire (`harness`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agno.agent import Agent
from agno.exceptions import ModelProviderError
from agno.media import Image
from agno.models.message import Message
from hypothesis import strategies as st

from toolpair.conformance import Adapter, Unsendable, without_images
from toolpair.integrations import agno as tp_agno
from toolpair.integrations.agno import AgnoCodec
from toolpair.integrations.agno._patch import _formatter_fixes, merge_converse_turns
from toolpair.testing.generate import Abs, abstract_history, chat_problems, defective

from .harness import MODELS, PROVIDERS, Capture, call, tools


def _content(ts: list[str], lists: bool = True) -> Any:
    if not ts:
        return None
    if len(ts) == 1 or not lists:
        return "\n\n".join(ts)
    return [{"type": "text", "text": t} for t in ts]


def _user(m: Abs, lists: bool = True) -> list[Message]:
    """A user turn: its results as tool messages, the text and images between them as
    user messages, in order."""
    out: list[Message] = []
    ts: list[str] = []
    imgs: list[Image] = []
    for p in [*m.parts, ("end",)]:
        if p[0] in ("result", "end") and (ts or imgs):
            out.append(Message(role="user", content=_content(ts, lists), images=imgs or None))
            ts, imgs = [], []
        if p[0] == "result":
            out.append(
                Message(
                    role="tool",
                    tool_call_id=p[1],
                    # The name of the call `render` makes (the harness's one tool):
                    # Gemini pairs a response with its call by name.
                    tool_name="get_weather",
                    content=p[3],
                    tool_call_error=p[4] or None,
                )
            )
        elif p[0] == "text":
            ts.append(p[1])
        elif p[0] == "image":
            imgs.append(Image(url=p[1]))
    return out


def render(msgs: list[Abs], lists: bool = True) -> list[Message]:
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
                    content=_content([p[1] for p in m.parts if p[0] == "text"], lists),
                    tool_calls=calls or None,
                    reasoning_content="hm" if thinking else None,
                )
            )
        else:
            out.extend(_user(m, lists))
    return out


#: Providers whose formatter lifts system messages out of the turn list.
HOISTED = ("anthropic", "bedrock", "gemini", "vertex")


def _not_sent(m: Message, provider: str) -> bool:
    """A message that is no turn on the wire: a system message where the formatter
    lifts it out, an empty assistant message the Anthropic API merges away."""
    if m.role == "system":
        return provider in HOISTED
    empty = m.role == "assistant" and not m.content and not m.tool_calls
    return empty and provider == "anthropic"


def simple_problems(history: list[Message], provider: str) -> list[str]:
    """Written without the codec (`toolpair.testing.generate.chat_problems` over agno's fields)."""
    return chat_problems(
        [m for m in history if not _not_sent(m, provider)],
        provider,
        role=lambda m: str(m.role),
        call_ids=lambda m: [c["id"] for c in m.tool_calls or []],
        result_id=lambda m: str(m.tool_call_id),
    )


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


# Histories as an agent run sees them ---------------------------------------------------


@st.composite
def agent_histories(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    # "fc_" ids are valid item ids on every provider, so only pairing decides the verdict.
    for t in range(draw(st.integers(1, 3))):
        out.append(Message(role="user", content=f"question {t}"))
        ids = [f"fc_{t}{j}" for j in range(draw(st.integers(0, 3)))]
        if not ids:
            out.append(Message(role="assistant", content=f"answer {t}"))
            continue
        out.append(
            Message(
                role="assistant", content="Checking.", tool_calls=[call(i, "Paris") for i in ids]
            )
        )
        answered = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
        results = [
            Message(role="tool", tool_call_id=i, tool_name="get_weather", content="sunny")
            for i in draw(st.permutations(answered))
        ]
        if results and draw(st.booleans()):
            results.insert(draw(st.integers(0, len(results))), Message(role="user", content="hm?"))
        if draw(st.booleans()):
            results.append(
                Message(role="tool", tool_call_id=f"gone_{t}", tool_name="get_weather", content="?")
            )
        out.extend(results)
        if draw(st.booleans()):
            out.append(Message(role="assistant", content=f"answer {t}"))
    out.append(Message(role="user", content="And now?"))
    return out


def wire_body(provider: str, history: list[Message]) -> dict[str, Any]:
    """The request body a real agno agent run sends for ``history``."""
    cap = Capture()
    agent = Agent(model=MODELS[provider](cap), tools=tools(), telemetry=False)
    # An SDK's client-side validation may refuse the request agno built (an empty
    # assistant message through the Bedrock formatter): then nothing is sent, and agno
    # raises (2.x) or logs the error and returns (3.x).
    try:
        agent.run(input=history)
    except ModelProviderError as e:
        if not cap.bodies:
            raise Unsendable(str(e)) from e
        raise
    if not cap.bodies:
        raise Unsendable("the agent run sent no request")
    return cap.last


#: The model id each `harness` model class targets.
MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4o",
    "openai-responses": "gpt-4o",
    "gemini": "gemini-2.5-flash",
    "bedrock": "anthropic.claude-3-5-sonnet-20240620-v1:0",
}


@st.composite
def answered(draw: st.DrawFn) -> list[Message]:
    """Histories whose every call is answered right after it, so that accepted bodies
    are common."""
    out: list[Message] = []
    for t in range(draw(st.integers(1, 3))):
        out.append(Message(role="user", content=f"question {t}"))
        ids = [f"fc_{t}{j}" for j in range(draw(st.integers(0, 2)))]
        if ids:
            calls = [
                {
                    "id": i,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
                for i in ids
            ]
            out.append(Message(role="assistant", content="Checking.", tool_calls=calls))
            out.extend(
                Message(role="tool", tool_call_id=i, tool_name="get_weather", content="sunny")
                for i in draw(st.permutations(ids))
            )
        out.append(Message(role="assistant", content=f"answer {t}"))
    out.append(Message(role="user", content="And now?"))
    return out


class AgnoAdapter(Adapter):
    name = "agno"
    integration = "toolpair.integrations.agno"
    models = MODEL_IDS
    wire_providers = PROVIDERS
    # Gemini's wire has no ids, only counts: a mispaired batch of the right size is
    # accepted there, so only "valid here implies valid there" holds.
    one_way_verdict = ("gemini",)
    #: The providers `AgnoCodec.certainly_valid` answers for.
    # Every provider: the core's checkers read the codec's skeleton.
    fast_providers = tuple(PROVIDERS)
    blank_ids = False

    def codec(self, provider: str) -> AgnoCodec:
        return AgnoCodec(provider)

    def build(self, history: list[Any]) -> list[Message]:
        return render(history)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        # The formatter as agno ships it: a patch left on by another test would repair
        # the request before it is captured.
        tp_agno.unpatch()
        return wire_body(provider, list(messages))

    def wire_histories(self) -> Any:
        # Several texts of one message are joined into one string here: agno's older
        # Bedrock formatter passes list content through to Converse as it is.
        built = defective().map(lambda d: render(without_images(d[0]), lists=False))
        return st.one_of(agent_histories(), built)

    def valid_histories(self) -> Any:
        return abstract_history().map(lambda h: render(without_images(h), lists=False))

    def harm_histories(self) -> Any:
        return st.one_of(agent_histories(), answered())

    def changes(self, messages: Sequence[Any], provider: str) -> list[str]:
        # agno's repair hands back the very list when it has nothing to do.
        out = tp_agno.repair_messages(messages, provider, model=self.model(provider))
        return [] if out is messages else ["repair_messages returned a new list"]

    def send_repaired(self, messages: Sequence[Any], provider: str) -> Any:
        # The patch is how an application puts toolpair in agno's path: it repairs the
        # history and also undoes the formatters' own mangling (`_formatter_fixes`,
        # Bedrock's unmerged same-role turns), which the codec cannot see.
        with tp_agno.patched():
            return wire_body(provider, list(messages))

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        # Shapes an unpatched formatter mangles into another request than the codec
        # reads (what the patch corrects) say nothing about the verdicts.
        if _formatter_fixes(list(messages), provider) != list(messages):
            return False
        if provider == "bedrock":
            tp_agno.unpatch()
            try:
                turns = wire_body(provider, list(messages))["messages"]
            except Unsendable:
                return False
            return merge_converse_turns(turns) == turns
        if provider == "openai-responses":
            # agno derives a function_call's item id from its call_id, so a call_id
            # reused in a later turn gives two items the same id, which the Responses
            # API rejects; the codec reads the reuse as valid (an output pairs with any
            # earlier call), and repair leaves it. Not comparable until the codec has
            # repair rename reused ids there.
            ids = [c.get("id") for m in messages for c in m.tool_calls or []]
            return len(ids) == len(set(ids))
        return True

    def perturb(self, draw: Any, messages: list[Any]) -> list[Any]:
        return draw(perturbed(messages))

    def dump(self, messages: Sequence[Any]) -> Any:
        return dump(list(messages))

    def images(self, messages: Sequence[Any]) -> list[Any]:
        return images(list(messages))

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str]:
        return simple_problems(list(messages), provider)
