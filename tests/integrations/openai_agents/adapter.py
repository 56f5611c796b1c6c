"""The OpenAI Agents SDK adapter for the conformance suite (`toolpair.conformance`).

The SDK's history is OpenAI Responses input items (plain dicts, as
``result.to_input_list()`` and sessions give them back), read by the core's
``openai-responses`` codec, or by the integration's `ChatItemsCodec` (the same codec
with a no-op path) for the Chat Completions rules. The wire is a real ``Runner.run``
of an agent on the real OpenAIResponsesModel / OpenAIChatCompletionsModel over a mock
transport (`harness`); repair is `repair_items` (what the filter and the model
wrapper send), the repaired request is a run with `with_toolpair()`, and `trim_filter`
is a compaction entry point next to the core's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents import Agent, Runner
from agents.run import CallModelData, ModelInputData
from hypothesis import strategies as st

from toolpair._model import Codec
from toolpair.conformance import CORE_COMPACTORS, Adapter, Compactor
from toolpair.formats import CODECS
from toolpair.integrations.openai_agents import repair_items, trim_filter, with_toolpair
from toolpair.integrations.openai_agents._codec import CHAT_CODEC
from toolpair.testing.generate import Abs

from .harness import Server, message


def render(msgs: list[Abs]) -> list[dict[str, Any]]:
    """The items the SDK stores for an abstract history: assistant output items with
    their item ids and status, as the Responses API returns them; user text and images
    as easy input messages; error results as plain outputs (the SDK sends a failed
    tool's error text as its output)."""
    out: list[dict[str, Any]] = []
    n = 0
    for m in msgs:
        if m.role == "system":
            out.append({"role": "system", "content": m.parts[0][1]})
            continue
        for p in m.parts:
            n += 1
            if p[0] == "text" and m.role == "assistant":
                out.append(
                    {
                        "id": f"msg_{n}",
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": p[1], "annotations": []}],
                    }
                )
            elif p[0] == "text":
                out.append({"role": "user", "content": p[1]})
            elif p[0] == "image":
                image = {"type": "input_image", "image_url": p[1], "detail": "auto"}
                out.append({"role": "user", "content": [image]})
            elif p[0] == "thinking":
                out.append({"id": f"rs_{n}", "type": "reasoning", "summary": []})
            elif p[0] == "call":
                out.append(
                    {
                        "id": f"fc_{n}",
                        "type": "function_call",
                        "call_id": p[1],
                        "name": p[2],
                        "arguments": "{}",
                        "status": "completed",
                    }
                )
            elif p[0] == "result":
                out.append({"type": "function_call_output", "call_id": p[1], "output": p[3]})
    return out


#: Items the SDK writes that the generator does not make, for the fast path: custom
#: tool calls and their outputs, hosted tool calls, system messages, assistant messages
#: as easy input messages, ids at and over OpenAI's 40-character limit, empty ids.
_IDS = st.sampled_from(["call_a", "call_b", "x" * 40, "y" * 41, ""])
_EXTRA = st.one_of(
    st.builds(
        lambda i: {"type": "function_call", "call_id": i, "name": "f", "arguments": ""}, _IDS
    ),
    st.builds(lambda i: {"type": "function_call_output", "call_id": i, "output": "o"}, _IDS),
    st.builds(lambda i: {"type": "custom_tool_call", "call_id": i, "name": "c", "input": ""}, _IDS),
    st.builds(lambda i: {"type": "custom_tool_call_output", "call_id": i, "output": "o"}, _IDS),
    st.just({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
    st.just({"role": "system", "content": "s"}),
    st.just({"type": "message", "role": "assistant", "content": "t", "id": "msg_x"}),
    st.just({"type": "reasoning", "id": "rs_x", "summary": []}),
)


@st.composite
def _perturbed(draw: Any, items: list[Any]) -> list[Any]:
    out = list(items)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["insert", "drop", "swap"]))
        i = draw(st.integers(0, len(out)))
        if kind == "insert":
            out.insert(i, draw(_EXTRA))
        elif kind == "drop" and i < len(out):
            del out[i]
        elif kind == "swap" and i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _trim_filter(items: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    trim = trim_filter(60, provider=provider, model=a.model(provider))
    data = CallModelData(model_data=ModelInputData(input=list(items), instructions=None),
                         agent=None, context=None)  # fmt: skip
    return list(trim(data).input)


#: The model id each wire model targets.
MODEL_IDS = {"openai": "gpt-4o", "openai-responses": "gpt-4o"}
#: provider -> the Server kind whose SDK model class speaks it.
KINDS = {"openai": "chat", "openai-responses": "responses"}


class OpenAIAgentsAdapter(Adapter):
    name = "openai-agents"
    integration = "toolpair.integrations.openai_agents"
    # Easy input messages ({"role", "content"}) are session items of their own.
    plain_messages_are_dumps = True
    models = MODEL_IDS
    wire_providers = tuple(sorted(KINDS))
    #: Where a no-op path answers: the integration's for Chat, the core's for Responses.
    fast_providers = ("openai", "openai-responses")

    def codec(self, provider: str) -> Codec:
        return CHAT_CODEC if provider == "openai" else CODECS["openai-responses"]

    def build(self, history: list[Any]) -> list[Any]:
        return render(history)

    def _run(self, items: Sequence[Any], provider: str, run_config: Any = None) -> Any:
        srv = Server([[message("done")]], kind=KINDS[provider], model=MODEL_IDS[provider])
        make = srv.responses_model if KINDS[provider] == "responses" else srv.chat_model
        agent = Agent(name="a", model=make())
        Runner.run_sync(agent, list(items), run_config=run_config)
        assert len(srv.bodies) == 1, "the run made no single model call"
        return srv.last

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        return self._run(messages, provider)

    def send_repaired(self, messages: Sequence[Any], provider: str) -> Any:
        # As an application installs it: the provider and model id are read off the
        # agent's model.
        return self._run(messages, provider, with_toolpair())

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        return repair_items(list(messages), provider, model=self.model(provider))

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        # The SDK deduplicates its input items by call id before sending (newer
        # releases: agents.run_internal.items.deduplicate_input_items): a call id that
        # a later turn reuses loses that turn's call and output, and a repeated output
        # is sent once. The codec reads every item (a reused id is valid on both APIs,
        # a duplicate output is a violation), so such a history says nothing about the
        # verdicts. Not comparable. (The repaired request keeps both pairs: the
        # integration gives the later one a fresh id, test_wire holds that.)
        seen: set[tuple[str, str]] = set()
        for m in messages:
            key = (str(m.get("type")), str(m.get("call_id")))
            if "call_id" in m and key in seen:
                return False
            seen.add(key)
        return True

    def compactors(self) -> dict[str, Compactor]:
        return {**CORE_COMPACTORS, "trim_filter": _trim_filter}

    def perturb(self, draw: Any, messages: list[Any]) -> list[Any]:
        return draw(_perturbed(messages))

    def images(self, messages: Sequence[Any]) -> list[Any]:
        return [
            c["image_url"]
            for m in messages
            if isinstance(m.get("content"), list)
            for c in m["content"]
            if isinstance(c, dict) and c.get("type") == "input_image"
        ]
