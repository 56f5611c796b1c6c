"""The Google ADK adapter for the conformance suite (`toolpair.conformance`): the
generated histories as ADK request contents (google-genai ``Content`` lists, one per
event, as ``llm_request.contents`` holds them), judged through `AdkCodec`, repaired by
`repair_contents`, and sent by ADK's real ``Gemini`` model class over the httpx mock
transport (`harness.gemini`), so the body is what google-genai puts on the wire."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from toolpair.conformance import Adapter
from toolpair.integrations.google_adk import AdkCodec, repair_contents
from toolpair.integrations.google_adk._codec import CODEC

from .harness import Capture, gemini


def _part(p: tuple[Any, ...]) -> types.Part:
    kind = p[0]
    if kind == "text":
        return types.Part(text=p[1])
    if kind == "image":
        return types.Part(file_data=types.FileData(file_uri=p[1], mime_type="image/png"))
    if kind == "thinking":
        return types.Part(text="hm", thought=True, thought_signature=p[1].encode())
    if kind == "call":
        return types.Part(
            function_call=types.FunctionCall(id=p[1] or None, name=p[2], args={"q": 1})
        )
    response = {"error": p[3]} if p[4] else {"result": p[3]}
    return types.Part(
        function_response=types.FunctionResponse(id=p[1] or None, name=p[2], response=response)
    )


def render(history: list[Any]) -> list[types.Content]:
    # A system message is no content in ADK: it goes in the request's system_instruction.
    return [
        types.Content(
            role="model" if m.role == "assistant" else "user", parts=[_part(p) for p in m.parts]
        )
        for m in history
        if m.role != "system"
    ]


MODEL_IDS = {"gemini": "gemini-2.0-flash"}


class AdkAdapter(Adapter):
    name = "google-adk"
    models = MODEL_IDS
    wire_providers = ("gemini",)
    # Gemini pairs id-less calls by count and place (ADK 1.x strips every id before the
    # request), so only "valid in the contents implies valid on the wire" holds.
    one_way_verdict = ("gemini",)

    def __init__(self) -> None:
        self.capture = Capture()
        self.model_class = gemini(self.capture, self.models["gemini"])

    def codec(self, provider: str) -> AdkCodec:
        return CODEC

    def build(self, history: list[Any]) -> list[types.Content]:
        return render(history)

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        return list(repair_contents(list(messages), provider, model=self.model(provider)).messages)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        request = LlmRequest(
            model=self.models["gemini"],
            contents=list(messages),
            config=types.GenerateContentConfig(),  # 1.7 has no default config
        )

        async def call() -> None:
            async for _ in self.model_class.generate_content_async(request, stream=False):
                pass

        before = len(self.capture.bodies)
        asyncio.run(call())
        assert len(self.capture.bodies) == before + 1, "the Gemini model made no request"
        return self.capture.bodies[-1]
