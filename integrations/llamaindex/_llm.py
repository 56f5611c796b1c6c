"""`GuardedLLM`: any LlamaIndex LLM whose every chat request is repaired first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import LLM, ToolSelection

from toolpair import Policy, Repaired
from toolpair.integrations._base import Guard, OnRepair, Target
from toolpair.integrations.llamaindex._repair import INTEGRATION, model_for, provider_for

__all__ = ["GuardedLLM", "guard"]


class GuardedLLM(FunctionCallingLLM):
    """Wraps ``llm`` so that the messages of every ``chat``, ``achat``, ``stream_chat``,
    ``astream_chat`` and ``*chat_with_tools`` call are repaired for the provider ``llm``
    talks to before ``llm`` converts them. Use it wherever an LLM goes, FunctionAgent
    and AgentWorkflow included::

        agent = FunctionAgent(tools=tools, llm=GuardedLLM(llm=Anthropic(model=...)))

    Only the request is repaired: memory and the caller's lists are never edited.
    """

    llm: LLM = Field(description="The wrapped LLM, which does the actual work.")
    provider: str = Field(
        default="",
        description="toolpair provider name; empty means detect it from the LLM's class.",
    )
    model: str = Field(
        default="",
        description="The model id whose family's rules apply; empty means read it off the LLM.",
    )
    policy: Any = Field(default=None, description="A toolpair.Policy, or None for the default.")
    on_repair: OnRepair | None = Field(
        default=None,
        exclude=True,
        description="Called with each repaired request's RepairEvent (or its Repaired, for a "
        "callback annotated so): logging, metrics.",
    )
    strict: bool = Field(
        default=False,
        description="Raise on a history toolpair cannot read instead of sending it as is.",
    )
    _guard: Guard = PrivateAttr()

    def __init__(self, llm: LLM | None = None, **data: Any) -> None:
        if llm is not None:
            data["llm"] = llm
        super().__init__(**data)
        if not self.provider:
            self.provider = provider_for(self.llm)
        if not self.model:
            self.model = model_for(self.llm) or ""
        if self.policy is not None and not isinstance(self.policy, Policy):
            raise TypeError(f"policy must be a toolpair.Policy, got {type(self.policy).__name__}")
        self._guard = Guard(
            INTEGRATION, policy=self.policy, on_repair=self.on_repair, strict=self.strict
        )

    @classmethod
    def class_name(cls) -> str:
        return "GuardedLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    @property
    def last_repair(self) -> Repaired | None:
        """The repair of the most recent request (None before the first)."""
        return self._guard.last

    def repair(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The messages ``llm`` will actually be sent for ``messages``."""
        # The fields are the target (set from the wrapped LLM at construction, and the
        # user may change them since).
        target = Target(self.provider, self.model or None)
        repaired = self._guard.repair(messages, target=target)
        return list(messages if repaired is None else repaired.messages)

    def _history(
        self, user_msg: str | ChatMessage | None, chat_history: list[ChatMessage] | None
    ) -> list[ChatMessage]:
        # The user message goes in before repair, so that it is placed after any results
        # it would otherwise split from their calls.
        history = list(chat_history or [])
        if isinstance(user_msg, str):
            history.append(ChatMessage(role=MessageRole.USER, content=user_msg))
        elif user_msg is not None:
            history.append(user_msg)
        return self.repair(history)

    # Plain chat: every other path (with_tools, early stopping, structured output)
    # ends up in one of these four on the wrapped LLM.
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.llm.chat(self.repair(messages), **kwargs)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await self.llm.achat(self.repair(messages), **kwargs)

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        return self.llm.stream_chat(self.repair(messages), **kwargs)

    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        return await self.llm.astream_chat(self.repair(messages), **kwargs)

    # The with_tools calls go to the wrapped LLM's own versions, which some providers
    # override, with an already repaired history.
    def _tools_llm(self) -> FunctionCallingLLM:
        if not isinstance(self.llm, FunctionCallingLLM):
            raise TypeError(f"{type(self.llm).__name__} is not a FunctionCallingLLM")
        return self.llm

    def chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        **kwargs: Any,
    ) -> ChatResponse:
        llm = self._tools_llm()
        return llm.chat_with_tools(
            tools, chat_history=self._history(user_msg, chat_history), **kwargs
        )

    async def achat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        **kwargs: Any,
    ) -> ChatResponse:
        llm = self._tools_llm()
        history = self._history(user_msg, chat_history)
        return await llm.achat_with_tools(tools, chat_history=history, **kwargs)

    def stream_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        **kwargs: Any,
    ) -> ChatResponseGen:
        llm = self._tools_llm()
        history = self._history(user_msg, chat_history)
        return llm.stream_chat_with_tools(tools, chat_history=history, **kwargs)

    async def astream_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        **kwargs: Any,
    ) -> ChatResponseAsyncGen:
        llm = self._tools_llm()
        history = self._history(user_msg, chat_history)
        return await llm.astream_chat_with_tools(tools, chat_history=history, **kwargs)

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return self._tools_llm()._prepare_chat_with_tools(
            tools,
            user_msg=user_msg,
            chat_history=chat_history,
            verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls,
            **kwargs,
        )

    def _validate_chat_with_tools_response(
        self,
        response: ChatResponse,
        tools: Sequence[Any],
        allow_parallel_tool_calls: bool = False,
        **kwargs: Any,
    ) -> ChatResponse:
        return self._tools_llm()._validate_chat_with_tools_response(
            response, tools, allow_parallel_tool_calls=allow_parallel_tool_calls, **kwargs
        )

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        return self._tools_llm().get_tool_calls_from_response(
            response, error_on_no_tool_call=error_on_no_tool_call, **kwargs
        )

    # Completions carry no tool history: pass them through.
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self.llm.complete(prompt, formatted=formatted, **kwargs)

    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        return await self.llm.acomplete(prompt, formatted=formatted, **kwargs)

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        return self.llm.stream_complete(prompt, formatted=formatted, **kwargs)

    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        return await self.llm.astream_complete(prompt, formatted=formatted, **kwargs)


def guard(
    llm: LLM, provider: str | None = None, *, model: str | None = None, **options: Any
) -> GuardedLLM:
    """``GuardedLLM(llm=llm)``; ``provider``/``model`` override what is read off ``llm``;
    ``options`` are `toolpair.Policy` fields."""
    return GuardedLLM(
        llm=llm,
        provider=provider or "",
        model=model or "",
        policy=Policy(**options) if options else None,
    )
