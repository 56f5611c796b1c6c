"""PairSafeConversationManager at the end of a long tool loop, run by a real Agent on
the Gemini, Bedrock Claude and OpenAI model classes (scripted replies on a mock
transport): what it leaves in ``agent.messages`` is a suffix of the untrimmed history
(behind the opening user turn that stands for the removed prefix), so only the removed
prefix changes, and what the session restores is the same."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from strands import Agent, tool

from tests.support.replies import RawBody

try:
    from strands.hooks import MessageAddedEvent
except ImportError:  # 1.0 keeps the hook events under experimental
    from strands.experimental.hooks import MessageAddedEvent  # type: ignore[no-redef]

from toolpair.integrations.strands import PairSafeConversationManager

LOOPS = 7
WINDOW = 6


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _sse(chunks: list[dict[str, Any]], done: bool = False) -> bytes:
    out = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (out + ("data: [DONE]\n\n" if done else "")).encode()


def _openai_reply(n: int) -> bytes:
    base = {"id": f"c{n}", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    if n < LOOPS:
        call = {
            "index": 0,
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "weather", "arguments": json.dumps({"city": f"c{n}"})},
        }
        first = {"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}
        last = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    else:
        first = {"index": 0, "delta": {"role": "assistant", "content": "done"}}
        last = {"index": 0, "delta": {}, "finish_reason": "stop"}
    return _sse(
        [
            {**base, "choices": [first]},
            {**base, "choices": [last]},
            {**base, "choices": [], "usage": usage},
        ],
        done=True,
    )


def _gemini_reply(n: int) -> bytes:
    if n < LOOPS:
        part: dict[str, Any] = {
            "functionCall": {"id": f"g{n}", "name": "weather", "args": {"city": f"c{n}"}}
        }
    else:
        part = {"text": "done"}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "gemini-2.5-flash",
    }
    return _sse([chunk])


class _Kept(httpx.AsyncClient):
    """OpenAIModel closes its SDK client (and so the http client) after every request:
    this one stays usable for the next round of the loop."""

    async def aclose(self) -> None:
        return None


def _scripted_client(reply: Any) -> httpx.AsyncClient:
    count = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        n = count["n"] % (LOOPS + 1)
        count["n"] += 1
        return httpx.Response(200, content=reply(n), headers={"content-type": "text/event-stream"})

    return _Kept(transport=httpx.MockTransport(handler))


def openai_loop() -> Any:
    from strands.models.openai import OpenAIModel

    client = _scripted_client(_openai_reply)
    return OpenAIModel(client_args={"api_key": "k", "http_client": client}, model_id="gpt-4o")


def gemini_loop() -> Any:
    from google import genai
    from google.genai import types
    from strands.models.gemini import GeminiModel

    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(httpx_async_client=_scripted_client(_gemini_reply)),
    )
    return GeminiModel(client=client, model_id="gemini-2.5-flash")


def bedrock_loop(limit: int | None = None) -> Any:
    """BedrockModel scripted through a tool loop; with ``limit``, a request holding more
    messages is refused as Bedrock refuses an input too long for the model (Strands then
    calls ``reduce_context`` and retries)."""
    import boto3
    from botocore.awsrequest import AWSResponse
    from strands.models.bedrock import BedrockModel

    count = {"n": 0}

    def before_send(request: Any, **_: Any) -> Any:
        if limit is not None and len(json.loads(request.body)["messages"]) > limit:
            err = json.dumps({"message": "Input is too long for requested model."}).encode()
            headers = {
                "content-type": "application/json",
                "x-amzn-ErrorType": "ValidationException",
            }
            return AWSResponse(request.url, 400, headers, RawBody(err))
        n = count["n"] % (LOOPS + 1)
        count["n"] += 1
        if n < LOOPS:
            use = {
                "toolUse": {
                    "toolUseId": f"tooluse_{n}",
                    "name": "weather",
                    "input": {"city": f"c{n}"},
                }
            }
            out = {
                "output": {"message": {"role": "assistant", "content": [use]}},
                "stopReason": "tool_use",
            }
        else:
            out = {
                "output": {"message": {"role": "assistant", "content": [{"text": "done"}]}},
                "stopReason": "end_turn",
            }
        out |= {
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        }
        return AWSResponse(
            request.url,
            200,
            {"content-type": "application/json"},
            RawBody(json.dumps(out).encode()),
        )

    session = boto3.Session(
        aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    model = BedrockModel(
        boto_session=session, model_id="us.anthropic.claude-sonnet-4-6", streaming=False
    )
    model.client.meta.events.register("before-send.bedrock-runtime.*", before_send)
    return model


LOOP_MODELS = {"gemini": gemini_loop, "bedrock": bedrock_loop, "openai": openai_loop}


def _available(name: str) -> None:
    if name == "gemini":
        pytest.importorskip("strands.models.gemini")
        pytest.importorskip("google.genai")


@pytest.mark.parametrize("with_", ["alone", "plugin", "session"])
@pytest.mark.parametrize("name", sorted(LOOP_MODELS))
def test_a_long_tool_loop_leaves_a_suffix_of_the_untrimmed_history(
    name: str, with_: str, tmp_path: Any
) -> None:
    _available(name)
    manager = PairSafeConversationManager(window_size=WINDOW)
    extra: dict[str, Any] = {}
    model = LOOP_MODELS[name]()
    if with_ == "plugin":
        from toolpair.integrations.strands import ToolpairPlugin

        if hasattr(Agent.__init__, "__code__") and "plugins" in Agent.__init__.__code__.co_varnames:
            extra["plugins"] = [ToolpairPlugin()]
        else:
            from toolpair.integrations.strands import ToolpairModel

            model = ToolpairModel(model)
    elif with_ == "session":
        from strands.session.file_session_manager import FileSessionManager

        extra["session_manager"] = FileSessionManager(session_id="loop", storage_dir=str(tmp_path))
    agent = Agent(
        model=model,
        tools=[weather],
        conversation_manager=manager,
        callback_handler=None,
        **extra,
    )
    # The untrimmed history: every message the agent appended, as it appended it.
    full: list[Any] = []
    agent.hooks.add_callback(MessageAddedEvent, lambda event: full.append(event.message))
    for turn in range(3):
        agent(f"weather in seven cities, one at a time ({turn})")
        # The prompt, the rounds, the answer, per turn.
        assert len(full) == (turn + 1) * (2 * LOOPS + 2)
        cut = manager.removed_message_count
        assert cut > 0
        opening = agent.messages[0]
        kept = agent.messages[1:] if not any(opening is m for m in full) else agent.messages
        # Only the removed prefix changed: the rest is the untrimmed history from the
        # cut, the very messages, none rewritten.
        assert len(kept) == len(full) - cut and len(kept) <= WINDOW, turn
        assert all(a is b for a, b in zip(kept, full[cut:], strict=True)), turn
        assert opening["role"] == "user"


def test_a_context_overflow_mid_loop_also_leaves_a_suffix() -> None:
    """Bedrock refuses a request over 7 messages mid-loop: Strands calls reduce_context
    and retries, with a window larger than what overflowed."""
    manager = PairSafeConversationManager(window_size=40)
    agent = Agent(
        model=bedrock_loop(limit=7),
        tools=[weather],
        conversation_manager=manager,
        callback_handler=None,
    )
    full: list[Any] = []
    agent.hooks.add_callback(MessageAddedEvent, lambda event: full.append(event.message))
    agent("weather in seven cities, one at a time")
    cut = manager.removed_message_count
    assert cut > 0 and len(full) == 2 * LOOPS + 2
    kept = agent.messages[1:]
    assert agent.messages[0]["role"] == "user" and not any(agent.messages[0] is m for m in full)
    assert len(kept) == len(full) - cut
    assert all(a is b for a, b in zip(kept, full[cut:], strict=True))
