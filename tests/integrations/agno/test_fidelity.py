"""Provider fidelity for agno: the model id and host read off the real model classes,
and the model reaching the core, judged on the bodies the real formatters send. (Do no
harm is the conformance suite's, through `adapter.AgnoAdapter`: its ``changes`` and its
patched ``send_repaired``.)"""

from __future__ import annotations

from typing import Any

import pytest
from agno.agent import Agent
from agno.models.message import Message

import toolpair
from toolpair.integrations import agno as tp_agno

from .harness import MODELS, PROVIDERS, Capture, tools

# --- the model id and the host ------------------------------------------------------


def test_model_id_is_the_model_id_as_written() -> None:
    """agno keeps the id a request names in ``Model.id``: a Bedrock id keeps its geo
    prefix (the core parses it); a model class names no model."""
    from agno.models.aws import AwsBedrock

    bedrock = AwsBedrock(id="us.anthropic.claude-3-5-haiku-20241022-v1:0", aws_region="us-east-1")
    assert tp_agno.provider_for(bedrock) == "bedrock"
    assert tp_agno.model_for(bedrock) == "us.anthropic.claude-3-5-haiku-20241022-v1:0"
    assert tp_agno.model_for(MODELS["anthropic"](Capture())) == "claude-sonnet-4-5"
    assert tp_agno.model_for(AwsBedrock) is None


def test_gemini_on_vertex_is_vertex(monkeypatch: pytest.MonkeyPatch) -> None:
    from agno.models.google import Gemini

    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    assert tp_agno.provider_for(Gemini(id="gemini-2.5-pro", api_key="k")) == "gemini"
    vertex = Gemini(
        id="gemini-3-pro-preview", vertexai=True, project_id="p", location="us-central1"
    )
    assert tp_agno.provider_for(vertex) == "vertex"
    assert tp_agno.model_for(vertex) == "gemini-3-pro-preview"
    # The google-genai switch agno itself reads when it builds its client.
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    assert tp_agno.provider_for(Gemini(id="gemini-2.5-pro")) == "vertex"


def test_claude_on_vertex_stays_anthropic() -> None:
    """Claude on Vertex AI passes Anthropic's own errors through: Anthropic's rules."""
    from agno.models.vertexai.claude import Claude as VertexClaude

    model = VertexClaude(id="claude-sonnet-4-5@20250929")
    assert tp_agno.provider_for(model) == "anthropic"
    assert tp_agno.model_for(model) == "claude-sonnet-4-5@20250929"


def test_deepseek_is_deepseek_at_its_own_host() -> None:
    from agno.models.deepseek import DeepSeek
    from agno.models.openai import OpenAIChat, OpenAIResponses

    model = DeepSeek(id="deepseek-reasoner", api_key="k")
    assert tp_agno.provider_for(model) == "deepseek"
    assert tp_agno.model_for(model) == "deepseek-reasoner"
    url = "https://api.deepseek.com/v1"
    assert tp_agno.provider_for(OpenAIChat(id="deepseek-chat", base_url=url)) == "deepseek"
    responses = OpenAIResponses(id="deepseek-chat", base_url=url)
    assert tp_agno.provider_for(responses) == "deepseek-responses"
    # A gateway in front of it says nothing about DeepSeek's endpoint.
    gateway = DeepSeek(id="deepseek-chat", api_key="k", base_url="https://gateway.example/v1")
    assert tp_agno.provider_for(gateway) == "openai"
    assert tp_agno.provider_for(OpenAIChat(id="gpt-4o")) == "openai"


def _body(provider: str, history: list[Message]) -> tuple[dict[str, Any], str | None]:
    capture = Capture()
    model = MODELS[provider](capture)
    Agent(model=model, tools=tools(), telemetry=False).run(input=history)
    return capture.last, tp_agno.model_for(model)


# --- the model reaches the core ------------------------------------------------------


def _text_beside_call() -> list[Message]:
    """Text beside a tool call in one assistant message: Claude on Bedrock takes it,
    Llama and Mistral there refuse it (and so does the strict profile of an unknown
    model)."""
    calls = [
        {
            "id": "tooluse_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    return [
        Message(role="user", content="weather?"),
        Message(role="assistant", content="Let me check.", tool_calls=calls),
        Message(role="tool", tool_call_id="tooluse_1", tool_name="get_weather", content="sunny"),
        Message(role="assistant", content="Sunny."),
        Message(role="user", content="thanks"),
    ]


def test_patch_reads_the_bedrock_id_off_the_model() -> None:
    """For a Claude-on-Bedrock model the patch leaves this history alone (Claude's own
    rules take text beside a tool use), so the request is the one agno sends unpatched;
    the same history repaired for a Llama id has its text split from the tool use."""
    history = _text_beside_call()
    tp_agno.unpatch()
    unpatched, model = _body("bedrock", history)
    with tp_agno.patched():
        patched, _ = _body("bedrock", history)
    assert model == "anthropic.claude-3-5-sonnet-20240620-v1:0"
    assert tp_agno.validate_messages(history, "bedrock", model=model) == []
    assert patched == unpatched
    assert toolpair.validate(patched, "bedrock", model=model) == []
    llama = "us.meta.llama3-3-70b-instruct-v1:0"
    assert tp_agno.validate_messages(history, "bedrock", model=llama) != []
    split = tp_agno.repair_messages(history, "bedrock", model=llama)
    assert split is not history
    assert tp_agno.validate_messages(split, "bedrock", model=llama) == []


def _gemini_history(signature: str | None) -> list[Message]:
    call: dict[str, Any] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    if signature is not None:
        call["thought_signature"] = signature
    return [
        Message(role="user", content="weather?"),
        Message(role="assistant", content="Checking.", tool_calls=[call]),
        Message(role="tool", tool_call_id="c1", tool_name="get_weather", content="sunny"),
    ]


def _gemini3_body(history: list[Message]) -> dict[str, Any]:
    capture = Capture()
    model = MODELS["gemini"](capture)
    model.id = "gemini-3-pro-preview"
    Agent(model=model, tools=tools(), telemetry=False).run(input=history)
    return capture.last


@pytest.mark.skipif("gemini" not in PROVIDERS, reason="this agno cannot send results to Gemini")
def test_gemini3_thought_signatures_as_agno_sends_them() -> None:
    """Gemini 3 refuses a current-turn call without a thought signature. agno replays
    the one a tool call keeps, so such a history is accepted and the patch leaves it
    alone; a call that never had one gets Google's bypass value, and the body passes."""
    model = "gemini-3-pro-preview"
    signed = _gemini_history("c2lnbmF0dXJl")
    tp_agno.unpatch()
    assert tp_agno.validate_messages(signed, "gemini", model=model) == []
    assert tp_agno.repair_messages(signed, "gemini", model=model) is signed
    assert toolpair.validate(_gemini3_body(signed), "gemini", model=model) == []

    unsigned = _gemini_history(None)
    assert toolpair.validate(_gemini3_body(unsigned), "gemini", model=model) != []
    assert tp_agno.validate_messages(unsigned, "gemini", model=model) != []
    with tp_agno.patched():
        body = _gemini3_body(unsigned)
    assert toolpair.validate(body, "gemini", model=model) == []
    assert unsigned[1].tool_calls is not None
    assert "thought_signature" not in unsigned[1].tool_calls[0]  # the input is untouched


# --- Anthropic-native blocks -------------------------------------------------------------


def _uses(*ids: str) -> Message:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "checking"}]
    blocks += [
        {"type": "tool_use", "id": i, "name": "get_weather", "input": {"city": "Paris"}}
        for i in ids
    ]
    return Message(role="assistant", content=blocks)


def _native_result(call_id: str, *extra: dict[str, Any]) -> Message:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": "sunny"}
    return Message(role="user", content=[block, *extra])


def _ask(text: str) -> Message:
    return Message(role="user", content=text)


NATIVE_CASES = {
    "answered": [
        _ask("weather?"),
        _uses("toolu_1"),
        _native_result("toolu_1"),
        Message(role="assistant", content="Sunny."),
        _ask("thanks"),
    ],
    "result_after_text": [
        _ask("weather?"),
        _uses("toolu_1"),
        _ask("still there?"),
        _native_result("toolu_1"),
        _ask("go on"),
    ],
    "one_unanswered": [
        _ask("weather?"),
        _uses("toolu_a", "toolu_b"),
        _native_result("toolu_a", {"type": "text", "text": "and hurry"}),
    ],
    "refused_id": [_ask("weather?"), _uses("call.1/x"), _native_result("call.1/x"), _ask("go")],
}


def _claude_body(history: list[Message], *, patched: bool) -> dict[str, Any]:
    capture = Capture()
    if patched:
        with tp_agno.patched():
            Agent(model=MODELS["anthropic"](capture), tools=tools(), telemetry=False).run(
                input=history
            )
    else:
        tp_agno.unpatch()
        Agent(model=MODELS["anthropic"](capture), tools=tools(), telemetry=False).run(input=history)
    return capture.last


@pytest.mark.parametrize("case", sorted(NATIVE_CASES))
def test_native_blocks_read_as_claude_sends_them(case: str) -> None:
    """A tool_result block in a user message is a result, and a tool_use block in an
    assistant's list content a call wherever agno's Claude formatter sends it (releases
    that drop list content leave the result an orphan): the verdict on the agno
    history is the verdict on its body, the patched body is accepted, and one that was
    accepted is sent unchanged."""
    history = NATIVE_CASES[case]
    before = [m.model_dump() for m in history]
    framework = tp_agno.validate_messages(history, "anthropic")
    unpatched = _claude_body(history, patched=False)
    wire = toolpair.validate(unpatched, "anthropic")
    assert bool(framework) == bool(wire), (framework, wire)
    patched = _claude_body(history, patched=True)
    assert toolpair.validate(patched, "anthropic") == []
    if not wire:
        assert patched == unpatched
    assert [m.model_dump() for m in history] == before


def _blocks(messages: Any, kind: str, key: str) -> list[Any]:
    return [
        b[key]
        for m in messages
        if isinstance(m.content, list)
        for b in m.content
        if isinstance(b, dict) and b.get("type") == kind
    ]


def test_native_result_renamed_with_its_call() -> None:
    """An id Anthropic refuses is rewritten on both halves, in the messages themselves,
    where agno sends the tool_use block at all."""
    history = NATIVE_CASES["refused_id"]
    sent = _claude_body(history, patched=False)["messages"]
    if not any(b.get("type") == "tool_use" for m in sent for b in m["content"]):
        pytest.skip("this agno drops an assistant's list content: the result is an orphan")
    repaired = tp_agno.repair_messages(history, "anthropic")
    assert tp_agno.validate_messages(repaired, "anthropic") == []
    uses = _blocks(repaired, "tool_use", "id")
    assert uses == _blocks(repaired, "tool_result", "tool_use_id")
    assert len(uses) == 1 and uses[0] != "call.1/x"


def test_native_blocks_stay_opaque_for_openai() -> None:
    """agno hands them to OpenAI as unknown content parts, which pair with nothing."""
    history = NATIVE_CASES["one_unanswered"]
    assert tp_agno.validate_messages(history, "openai") == []
    assert tp_agno.repair_messages(history, "openai") is history


def test_empty_assistant_between_call_and_output_on_deepseek_responses() -> None:
    """agno's Responses formatter sends an empty assistant message as an item of its
    own; DeepSeek's Responses endpoint wants outputs right after their calls, so one
    between them is refused there (and not on OpenAI's, which pairs by call_id)."""
    call = {
        "id": "fc_1",
        "call_id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"},
    }
    history = [
        _ask("weather?"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="assistant"),
        Message(role="tool", content="sunny", tool_call_id="call_1", tool_name="get_weather"),
        _ask("thanks"),
    ]

    def body(messages: Any) -> dict[str, Any]:
        tp_agno.unpatch()
        capture = Capture()
        Agent(model=MODELS["openai-responses"](capture), tools=tools(), telemetry=False).run(
            input=messages
        )
        return capture.last

    assert tp_agno.validate_messages(history, "openai-responses") == []
    assert tp_agno.validate_messages(history, "deepseek-responses") != []
    assert toolpair.validate(body(history), "deepseek-responses") != []
    repaired = tp_agno.repair_messages(history, "deepseek-responses")
    assert toolpair.validate(body(repaired), "deepseek-responses") == []
