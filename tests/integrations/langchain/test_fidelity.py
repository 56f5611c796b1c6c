"""Provider fidelity for LangChain: the model id and host read off the real chat model
classes, and Anthropic-native result blocks read as the results they are on the wire.
(Do no harm is the conformance suite's, through `adapter.LangChainAdapter`, whose
histories include the native blocks'.)"""

from __future__ import annotations

import json
import warnings
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

import toolpair
from toolpair.integrations.langchain import (
    model_for,
    provider_for,
    repair_report,
    validate_messages,
)

from .adapter import native_histories
from .wire import Wire, ai, human, tool

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)

# --- the model id and the host ------------------------------------------------------


def read_as(model: Any) -> tuple[str, str | None]:
    """The rules and the model id toolpair reads off a framework's model object."""
    return provider_for(model), model_for(model)


def test_model_id_is_read_off_each_chat_model_as_written() -> None:
    """ChatAnthropic keeps it in ``model``, ChatOpenAI in ``model_name``; a bound chain
    answers for the model it wraps, and a model bound with ``.bind(model=...)`` wins as it
    does on the wire. A provider name or nothing names no model."""
    claude = ChatAnthropic(model="claude-sonnet-4-5", api_key="x")
    assert model_for(claude) == "claude-sonnet-4-5"
    assert model_for(claude.bind_tools([])) == "claude-sonnet-4-5"
    gpt = ChatOpenAI(model="gpt-4o-mini", api_key="x")
    assert model_for(gpt) == "gpt-4o-mini"
    assert model_for(gpt.bind(model="gpt-4.1")) == "gpt-4.1"
    assert model_for("anthropic") is None
    assert model_for(None) is None


def test_openai_classes_keep_their_profiles_off_deepseek() -> None:
    assert provider_for(ChatOpenAI(model="gpt-4o", api_key="x")) == "openai"
    assert provider_for(ChatOpenAI(model="gpt-4o", api_key="x", use_responses_api=True)) == (
        "openai-responses"
    )
    other = ChatOpenAI(model="x", api_key="x", base_url="https://api.deepseek.com.evil.example")
    assert provider_for(other) == "openai"


def test_chat_openai_at_a_deepseek_base_url_is_deepseek() -> None:
    """The base URL is where ChatOpenAI sends its requests: DeepSeek's host is held to
    DeepSeek's rules, its Responses endpoint to those of DeepSeek's Responses."""
    chat = ChatOpenAI(model="deepseek-chat", api_key="x", base_url="https://api.deepseek.com/v1")
    assert read_as(chat) == ("deepseek", "deepseek-chat")
    responses = ChatOpenAI(
        model="deepseek-chat",
        api_key="x",
        base_url="https://api.deepseek.com",
        use_responses_api=True,
    )
    assert provider_for(responses) == "deepseek-responses"


def test_chat_deepseek_is_deepseek_at_its_own_host_only() -> None:
    deepseek = pytest.importorskip("langchain_deepseek")
    model = deepseek.ChatDeepSeek(model="deepseek-reasoner", api_key="x")
    assert read_as(model) == ("deepseek", "deepseek-reasoner")
    # Pointed elsewhere (a gateway), it says nothing about DeepSeek's endpoint.
    elsewhere = deepseek.ChatDeepSeek(
        model="deepseek-chat", api_key="x", api_base="https://gateway.example/v1"
    )
    assert provider_for(elsewhere) == "openai"


def _credentials() -> Any:
    oauth = pytest.importorskip("google.oauth2.credentials")
    return oauth.Credentials(token="test")


def test_chat_google_generative_ai_is_vertex_only_with_vertexai() -> None:
    genai = pytest.importorskip("langchain_google_genai")
    api = genai.ChatGoogleGenerativeAI(model="gemini-2.5-pro", api_key="x")
    assert read_as(api) == ("gemini", "gemini-2.5-pro")
    vertex = genai.ChatGoogleGenerativeAI(
        model="gemini-3-pro-preview",
        vertexai=True,
        project="p",
        location="us-central1",
        credentials=_credentials(),
    )
    assert read_as(vertex) == ("vertex", "gemini-3-pro-preview")


def test_vertex_classes() -> None:
    """ChatVertexAI always talks to Vertex AI; ChatAnthropicVertex is Claude there, held
    to Anthropic's rules (Vertex passes Anthropic's errors through verbatim)."""
    vertexai = pytest.importorskip("langchain_google_vertexai")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gemini = vertexai.ChatVertexAI(
            model="gemini-2.5-flash",
            project="p",
            location="us-central1",
            credentials=_credentials(),
        )
    assert read_as(gemini) == ("vertex", "gemini-2.5-flash")
    from langchain_google_vertexai.model_garden import ChatAnthropicVertex

    claude = ChatAnthropicVertex(
        model_name="claude-sonnet-4-5@20250929",
        project="p",
        location="us-east5",
        credentials=_credentials(),
    )
    assert read_as(claude) == ("anthropic", "claude-sonnet-4-5@20250929")


_GEMINI_REPLY = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
}


def test_gemini3_history_is_read_as_chat_google_generative_ai_sends_it() -> None:
    """Gemini 3 refuses a current-turn call without a thought signature; the model id
    read off ChatGoogleGenerativeAI selects that rule, and the class sends Google's
    bypass value on a first call that has none, so the history is accepted and left
    alone, as its body is."""
    genai = pytest.importorskip("langchain_google_genai")
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=_GEMINI_REPLY)

    model = genai.ChatGoogleGenerativeAI(
        model="gemini-3-pro-preview",
        api_key="x",
        client_args={"transport": httpx.MockTransport(handler)},
    )
    history = [human("weather?"), ai("c1", "c2", text="checking"), tool("c1"), tool("c2")]
    assert validate_messages(history, model) == []
    result = repair_report(history, model)
    assert result.fixes == []
    assert all(a is b for a, b in zip(result.messages, history, strict=True))
    model.invoke(history)
    assert toolpair.validate(bodies[-1], "gemini", model="gemini-3-pro-preview") == []


def test_gemini_signatures_kept_on_the_message_count() -> None:
    """Both Google chat models replay the signatures an AIMessage keeps by call id; a
    current-turn call without one is what Gemini 3 refuses (on Vertex, in its words)."""
    signed = ai("c1", text="checking").model_copy(
        update={
            "additional_kwargs": {"__gemini_function_call_thought_signatures__": {"c1": "c2ln"}}
        }
    )
    unsigned = ai("c1", text="checking")
    for provider in ("gemini", "vertex"):
        ok = [human("q"), signed, tool("c1")]
        bad = [human("q"), unsigned, tool("c1")]
        assert validate_messages(ok, provider, model="gemini-3-pro-preview") == []
        found = validate_messages(bad, provider, model="gemini-3-pro-preview")
        assert [v.code for v in found] == [f"{provider}.missing_thought_signature"]
        # Gemini 2.5 is not held to signatures (it took an unsigned second round).
        assert validate_messages(bad, provider, model="gemini-2.5-flash") == []


# --- Anthropic-native result blocks ----------------------------------------------------


def _tool_use(call_id: str, text: str = "checking") -> AIMessage:
    return AIMessage(
        [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": call_id, "name": "weather", "input": {"city": "SF"}},
        ]
    )


def _tool_result(call_id: str, content: str = "sunny", *extra: Any) -> HumanMessage:
    return HumanMessage(
        [{"type": "tool_result", "tool_use_id": call_id, "content": content}, *extra]
    )


def _native_history(call_id: str = "toolu_01") -> list[BaseMessage]:
    return [
        human("weather in SF?"),
        _tool_use(call_id),
        _tool_result(call_id),
        AIMessage("It is sunny."),
        human("thanks"),
    ]


def _anthropic_verdict(wire: Wire, messages: list[BaseMessage]) -> list[toolpair.Violation]:
    body = wire.send(wire.anthropic(), messages)
    return toolpair.validate(body, "anthropic", model=body["model"])


def test_native_result_answers_its_call_and_nothing_is_changed(wire: Wire) -> None:
    """A tool_use answered by a tool_result block in a HumanMessage is what ChatAnthropic
    sends and Anthropic takes: validate agrees, and repair hands back the very objects."""
    history = _native_history()
    model = wire.anthropic()
    assert _anthropic_verdict(wire, history) == []
    assert validate_messages(history, model) == []
    result = repair_report(history, model)
    assert result.fixes == []
    assert all(a is b for a, b in zip(result.messages, history, strict=True))
    # The body sent for the repaired history is the body sent for the original.
    assert wire.send(model, result.messages) == wire.send(model, history)


def test_native_result_is_renamed_with_its_call(wire: Wire) -> None:
    """An id Anthropic refuses is rewritten on both halves, in the messages themselves,
    so the request pairs whatever the formatter then does with ids; a synthetic result
    would leave the native one answering nothing."""
    history = _native_history("call.01/x")
    model = wire.anthropic()
    assert [v.code for v in validate_messages(history, model)] == ["anthropic.invalid_tool_use_id"]
    result = repair_report(history, model)
    kinds = [f.kind for f in result.fixes]
    assert "id_rewritten" in kinds and "synthetic_result" not in kinds
    assert len(result.messages) == len(history)
    call_msg, answer = result.messages[1], result.messages[2]
    new_id = call_msg.content[1]["id"]
    assert new_id != "call.01/x"
    assert answer.content == [{"type": "tool_result", "tool_use_id": new_id, "content": "sunny"}]
    assert result.id_map == {new_id: "call.01/x"}
    assert validate_messages(result.messages, model) == []
    assert _anthropic_verdict(wire, list(result.messages)) == []
    # The input is untouched.
    assert history[2].content[0]["tool_use_id"] == "call.01/x"


def test_native_result_moved_home_travels_as_the_same_block(wire: Wire) -> None:
    """A native result sent after a user message is moved right after its call, as the
    block it was (no ToolMessage stands in for it), and the wire then pairs."""
    history = [
        human("weather in SF?"),
        _tool_use("toolu_01"),
        human("still there?"),
        _tool_result("toolu_01"),
        human("go on"),
    ]
    model = wire.anthropic()
    assert _anthropic_verdict(wire, history) != []
    result = repair_report(history, model)
    assert not any(f.kind == "synthetic_result" for f in result.fixes)
    assert _anthropic_verdict(wire, list(result.messages)) == []
    moved = [m for m in result.messages if isinstance(m, HumanMessage)]
    block = history[3].content[0]
    assert any(isinstance(m.content, list) and m.content[0] is block for m in moved)
    assert not any(isinstance(m, ToolMessage) for m in result.messages)


def test_native_and_tool_message_results_mix(wire: Wire) -> None:
    """A dangling call gets a synthetic ToolMessage beside a call answered natively; the
    native result and the text after it in the same message are all kept."""
    history = [
        human("weather?"),
        AIMessage(
            [
                {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {}},
                {"type": "tool_use", "id": "toolu_b", "name": "weather", "input": {}},
            ]
        ),
        _tool_result("toolu_a", "rain", {"type": "text", "text": "and hurry"}),
    ]
    model = wire.anthropic()
    assert _anthropic_verdict(wire, history) != []
    result = repair_report(history, model)
    assert [f.kind for f in result.fixes].count("synthetic_result") == 1
    assert _anthropic_verdict(wire, list(result.messages)) == []
    sent = wire.bodies[-1]["messages"][-1]["content"]
    assert {"type": "text", "text": "and hurry"} in sent
    assert [b.get("tool_use_id") for b in sent if b["type"] == "tool_result"] == [
        "toolu_a",
        "toolu_b",
    ]


def test_native_result_stays_opaque_for_openai() -> None:
    """langchain-openai sends a tool_result block as an unknown user content part: it
    answers nothing there, so for OpenAI it is not read as a result."""
    history = _native_history()
    model = ChatOpenAI(model="gpt-4o", api_key="x")
    assert repair_report(history, model).fixes == []


# --- do no harm (the conformance suite's; here the native blocks' own) -------------


def _wire_verdict(provider: str, body: dict[str, Any]) -> list[toolpair.Violation]:
    # The format is the provider's own: an OpenAI body carrying a passed-through
    # tool_result content part is still an OpenAI body.
    return toolpair.validate(body, provider, model=body["model"], format=provider)


def _send(wire: Wire, model: Any, messages: list[BaseMessage]) -> dict[str, Any] | None:
    try:
        return wire.send(model, messages)
    except Exception:
        return None  # the framework refuses to build a request: nothing was sent


@PROPERTY
@given(history=native_histories())
def test_repaired_native_history_is_accepted_by_anthropic(history: list[BaseMessage]) -> None:
    """Whatever the pairing of native blocks, the repaired history's body pairs."""
    wire = Wire()
    model = wire.anthropic()
    assume(_send(wire, model, history) is not None)
    fixed = list(repair_report(history, model).messages)
    assert _wire_verdict("anthropic", wire.send(model, fixed)) == []


def test_middleware_passes_the_model_id() -> None:
    """The middleware's ``model`` reaches the core: Gemini 3 asks a current-turn call
    for a thought signature this history does not keep, Gemini 2.5 does not. The call
    gets Google's bypass value where the message keeps its signatures, as both Google
    chat models send them."""
    pytest.importorskip("langchain.agents.middleware", reason="create_agent needs langchain 1.x")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    from toolpair.integrations.langchain import ToolpairMiddleware

    history = [human("weather?"), ai("c1"), tool("c1")]
    fixes = {}
    for model in ("gemini-3-pro-preview", "gemini-2.5-flash"):
        middleware = ToolpairMiddleware("gemini", model=model)
        fake = FakeMessagesListChatModel(responses=[AIMessage("sunny")])
        create_agent(fake, tools=[], middleware=[middleware]).invoke({"messages": history})
        fixes[model] = [f.detail.split("]")[0] for f in middleware.last_fixes]
    assert fixes == {
        "gemini-3-pro-preview": [
            "the call never had a thought signature; the documented bypass value stands in"
        ],
        "gemini-2.5-flash": [],
    }
