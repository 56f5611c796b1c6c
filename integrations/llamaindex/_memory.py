"""Pair-safe drop-ins for the memories a FunctionAgent uses.

`PairSafeMemoryBuffer` replaces `ChatMemoryBuffer` (FunctionAgent's default): its
read-time window is cut by `toolpair.trim` at unit boundaries (a call never leaves
without its results), with a token count that includes tool calls. `PairSafeMemory`
replaces `Memory`, whose write-time eviction is already turn-atomic: it adds tool calls
to the token estimate and repairs what it reads back. Both repair the window, so an
orphan already in the store never comes back out.
"""

from __future__ import annotations

from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import BaseModel, Field
from llama_index.core.memory import ChatMemoryBuffer, Memory

from toolpair.integrations._base import as_text
from toolpair.integrations.llamaindex._repair import codec_for, repair_messages

try:
    from toolpair import trim
except ImportError:  # the core exports it from toolpair.compact until then
    from toolpair.compact import trim

__all__ = ["PairSafeMemory", "PairSafeMemoryBuffer", "message_text"]

#: Tokens counted per message on top of its content, as chat templates add.
MESSAGE_OVERHEAD = 3
#: Tokens counted for an image, audio, video or document block (Memory's default).
MEDIA_TOKENS = 256
_MEDIA = frozenset({"image", "audio", "video", "document"})

#: Same rules as the GuardedLLM default for OpenAI-shaped chat: pairing only, no
#: provider-specific bridges. Set ``provider`` to the LLM's when there is no GuardedLLM.
DEFAULT_PROVIDER = "openai"


def message_text(message: ChatMessage) -> tuple[str, int]:
    """Everything a provider is sent for ``message`` as text, tool calls and their
    arguments included, and the number of media blocks beside it."""
    parts: list[str] = []
    media = 0
    for block in message.blocks:
        kind = getattr(block, "block_type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "tool_call":
            parts += [block.tool_name, as_text(block.tool_kwargs)]
        elif kind == "thinking":
            parts.append(block.content or "")
        elif kind in _MEDIA:
            media += 1
    calls = (message.additional_kwargs or {}).get("tool_calls")
    if calls and not any(getattr(b, "block_type", None) == "tool_call" for b in message.blocks):
        parts.append(as_text([c if isinstance(c, dict) else _model(c) for c in calls]))
    return "\n".join(parts), media


def _model(entry: Any) -> Any:
    dump = getattr(entry, "model_dump", None)
    return dump() if callable(dump) else str(entry)


_M = TypeVar("_M", bound="_PairSafe")


class _PairSafe(BaseModel):
    """The rules both memories hold what they return to, set as fields or through
    ``from_defaults``. First among a memory's bases, so its ``from_defaults`` wraps the
    memory class's own."""

    provider: str = Field(default=DEFAULT_PROVIDER, description="toolpair provider rules.")
    model: str | None = Field(
        default=None, description="The model id whose family's rules apply (None: strictest)."
    )

    @classmethod
    def from_defaults(
        cls: type[_M],
        *args: Any,
        provider: str = DEFAULT_PROVIDER,
        model: str | None = None,
        **kwargs: Any,
    ) -> _M:
        """The base class's ``from_defaults``, plus the ``provider`` (and ``model``) to
        repair for."""
        memory: _M = super().from_defaults(*args, **kwargs)  # type: ignore[misc]
        memory.provider = provider
        memory.model = model
        return memory


class PairSafeMemoryBuffer(_PairSafe, ChatMemoryBuffer):
    """`ChatMemoryBuffer` whose window never splits a call from its results.

    ``get`` keeps the newest whole units that fit ``token_limit`` (system messages
    always), starting at a user turn whenever one fits, then repairs the window for
    ``provider``. A single unit larger than the limit is kept whole rather than cut.
    """

    @classmethod
    def class_name(cls) -> str:
        return "PairSafeMemoryBuffer"

    def count_tokens(self, message: ChatMessage) -> int:
        text, media = message_text(message)
        return MESSAGE_OVERHEAD + len(self.tokenizer_fn(text)) + media * MEDIA_TOKENS

    def get(
        self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        history = self.get_all()
        budget = max(self.token_limit - initial_token_count, 0)
        window = trim(
            history,
            budget,
            token_counter=self.count_tokens,
            provider=self.provider,
            model=self.model,
            format=codec_for(self.provider),
        )
        return list(window.messages)


class PairSafeMemory(_PairSafe, Memory):
    """`Memory` that counts tool calls in its token estimate (so eviction happens when
    the history is really full) and never returns an orphan from ``aget``."""

    @classmethod
    def class_name(cls) -> str:
        return "PairSafeMemory"

    def _estimate_token_count(self, message_or_blocks: Any) -> int:
        count: int = super()._estimate_token_count(message_or_blocks)
        messages = (
            [message_or_blocks]
            if isinstance(message_or_blocks, ChatMessage)
            else [m for m in message_or_blocks if isinstance(m, ChatMessage)]
            if isinstance(message_or_blocks, list)
            else []
        )
        for message in messages:
            # Memory skips ToolCallBlocks entirely; only their text is added here.
            for block in message.blocks:
                if getattr(block, "block_type", None) == "tool_call":
                    text = f"{block.tool_name}\n{as_text(block.tool_kwargs)}"
                    count += len(self.tokenizer_fn(text))
        return count

    async def aget(self, **block_kwargs: Any) -> list[ChatMessage]:
        messages = await super().aget(**block_kwargs)
        return list(repair_messages(messages, self.provider, model=self.model).messages)
