"""What the LangChain and LangGraph integrations both read off LangChain messages:
the message list (a prompt value or message-like items), LangGraph ``RemoveMessage``
entries set aside and put back around a repair, a token counter as a list counter, and
the plain text of message content. Here, not in either package, so each imports it
without reaching into the other's private modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue

from toolpair.integrations._base import as_text, first_annotation

__all__ = [
    "ProviderLike",
    "as_messages",
    "content_text",
    "list_counter",
    "restore_removals",
    "split_removals",
]

#: What the integrations take as a provider: a toolpair provider name, a chat model (or
#: a ``bind_tools`` chain around one), or None for "portable".
ProviderLike = str | Any | None


def as_messages(messages: Sequence[Any] | PromptValue) -> list[BaseMessage]:
    if isinstance(messages, PromptValue):
        return messages.to_messages()
    items = list(messages)
    if all(isinstance(m, BaseMessage) for m in items):
        return items
    return convert_to_messages(items)


def split_removals(
    messages: list[BaseMessage],
) -> tuple[list[BaseMessage], list[tuple[int, BaseMessage]]]:
    """Set aside LangGraph ``RemoveMessage``s (state instructions, never sent to a model),
    remembering the position of each among the real messages."""
    kept: list[BaseMessage] = []
    removals: list[tuple[int, BaseMessage]] = []
    for m in messages:
        if m.type == "remove":
            removals.append((len(kept), m))
        else:
            kept.append(m)
    return kept, removals


def restore_removals(
    original: list[BaseMessage],
    repaired: list[BaseMessage],
    removals: list[tuple[int, BaseMessage]],
) -> list[BaseMessage]:
    if not removals:
        return repaired
    # Each removal goes back in front of the message it preceded, found by identity
    # (repair hands untouched messages back as the same objects); if that one was
    # rewritten, the removal goes where the same count of leading messages ends.
    where = {id(m): i for i, m in enumerate(repaired)}
    out = list(repaired)
    for pos, removal in reversed(removals):
        if pos < len(original) and id(original[pos]) in where:
            at = where[id(original[pos])]
        else:
            at = min(pos, len(repaired))
        out.insert(at, removal)
        where = {id(m): i for i, m in enumerate(out)}
    return out


def _approximate() -> Callable[[Sequence[BaseMessage]], int]:
    from langchain_core.messages import utils

    counter = getattr(utils, "count_tokens_approximately", None)
    if counter is None:  # pragma: no cover - every supported langchain-core has it
        raise ValueError("token_counter='approximate' needs langchain-core>=0.3.48")
    return cast(Callable[[Sequence[BaseMessage]], int], counter)


def _is_per_message(counter: Callable[..., Any]) -> bool:
    annotation = first_annotation(counter)
    # LangChain compares the annotation object only, so a counter defined under
    # `from __future__ import annotations` (a string annotation) is silently handed
    # whole lists. Accept the string spelling too.
    return annotation is BaseMessage or annotation in (
        "BaseMessage",
        "langchain_core.messages.BaseMessage",
    )


def list_counter(token_counter: Any) -> Callable[[Sequence[BaseMessage]], int]:
    if isinstance(token_counter, str):
        if token_counter != "approximate":
            msg = (
                f"Invalid token_counter shortcut '{token_counter}'. "
                "Available shortcuts: 'approximate'."
            )
            raise ValueError(msg)
        return _approximate()
    if hasattr(token_counter, "get_num_tokens_from_messages"):
        return cast(
            Callable[[Sequence[BaseMessage]], int], token_counter.get_num_tokens_from_messages
        )
    if callable(token_counter):
        if _is_per_message(token_counter):
            per_message = token_counter

            def count(messages: Sequence[BaseMessage]) -> int:
                return sum(per_message(m) for m in messages)

            return count
        return cast(Callable[[Sequence[BaseMessage]], int], token_counter)
    msg = (
        "'token_counter' expected to be a model that implements "
        "'get_num_tokens_from_messages()' or a function. Received object of type "
        f"{type(token_counter)}."
    )
    raise ValueError(msg)


def content_text(content: Any) -> str:
    """A plain-text rendering of message content."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        if parts:
            return "\n".join(parts)
    return as_text(content)
