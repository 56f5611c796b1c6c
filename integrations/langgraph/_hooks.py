"""Read-time repair (and pair-safe trimming and summarising) inside a graph.

`repair_hook` is a ``pre_model_hook`` for ``create_react_agent``: it hands the model a
repaired (optionally trimmed) copy of the history as ``llm_input_messages`` and leaves
the state's ``messages`` alone. It always returns a non-empty ``llm_input_messages``:
that key is a checkpointed channel, and a hook run that omitted it (or set it empty)
would make the model read the previous turn's list (or the whole unrepaired history).

`summarize_hook` replaces the older part of a long history with a summary, cutting only
between whole units (an assistant message with all its results), so the summariser is
never handed half a pair and the kept history never starts with an orphan result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage

import toolpair
from toolpair import Policy
from toolpair.integrations._base import Guard, OnRepair, Target
from toolpair.integrations._langchain_messages import content_text, list_counter
from toolpair.integrations.langchain import codec_for, trim_messages

from ._common import (
    INTEGRATION,
    ProviderLike,
    codec,
    model_id,
    repair_list,
    rules_for,
    writing_rules,
)
from ._thread import DEFAULT_PROVIDER

__all__ = ["repair_hook", "repair_node", "summarize_hook", "summary_split"]

REMOVE_ALL = "__remove_all__"
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
SUMMARY_PROMPT = (
    "Summarise the conversation above in a few sentences: the user's goals, the facts "
    "the tools returned, and what is still open."
)


def _state_messages(state: Any, key: str = "messages") -> list[BaseMessage]:
    if isinstance(state, Mapping):
        return list(state.get(key) or [])
    return list(getattr(state, key, None) or [])


def _apply(messages: list[BaseMessage], update: Any) -> list[BaseMessage]:
    """The message list after ``update`` (a ``messages`` state update) is merged by
    ``add_messages``."""
    from langgraph.graph.message import add_messages

    return list(add_messages(messages, update))


def _last_unit(messages: list[BaseMessage], provider: ProviderLike) -> list[BaseMessage]:
    units = toolpair.units(messages, format=codec(provider))
    return messages[units[-1].start :] if units else messages


def _model_input(
    inner: Any, state: Any, key: str = "messages"
) -> tuple[list[BaseMessage], dict[str, Any]]:
    """What the model would be given after the user's own hook ran, and that hook's
    state update (without ``llm_input_messages``, which this hook sets)."""
    messages = _state_messages(state, key)
    if inner is None:
        return messages, {}
    run = getattr(inner, "invoke", inner)
    out = run(state)
    if not isinstance(out, Mapping):
        raise TypeError(f"the inner pre_model_hook returned {type(out).__name__}, not a dict")
    update = {k: v for k, v in out.items() if k != "llm_input_messages"}
    if out.get("llm_input_messages"):
        return list(out["llm_input_messages"]), update
    if update.get(key):
        return _apply(messages, update[key]), update
    return messages, update


def _sent(
    guard: Guard, messages: list[BaseMessage], provider: ProviderLike, model: str | None
) -> list[BaseMessage]:
    """What the model is sent for ``messages``: repaired through the hook's guard (as
    they are when the history cannot be read)."""
    target = Target(rules_for(provider), model if model is not None else model_id(provider))
    repaired = guard.repair(messages, target=target, source=provider)
    return list(messages if repaired is None else repaired.messages)


def repair_hook(
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    trim: Mapping[str, Any] | None = None,
    inner: Any = None,
    on_repair: OnRepair | None = None,
    strict: bool = False,
) -> Callable[[Any], dict[str, Any]]:
    """A ``pre_model_hook`` for ``create_react_agent`` that sends the model a history
    ``provider`` accepts, without writing to the state::

        agent = create_react_agent(model, tools, pre_model_hook=repair_hook(model))

    ``provider``: the chat model the agent calls (its provider's rules and its model id
    apply) or a provider name (then ``model=`` names the model id); None: the rules
    every provider accepts. ``trim``: keyword arguments for the pair-safe
    `trim_messages` (``max_tokens``, ``token_counter``, ``strategy``...), applied before
    the repair; when even the newest unit is over budget, that unit alone is sent.
    ``inner``: the user's own pre_model_hook (a function or runnable), run first; its
    ``llm_input_messages`` (or its persisted ``messages`` update) is what gets repaired,
    and its other updates are passed on. ``on_repair``/``strict``: the `Guard`'s (one
    event per repaired request; an unreadable history is sent as it is with a warning).
    """
    options = dict(trim) if trim else None
    guard = Guard(INTEGRATION, policy=policy, on_repair=on_repair, strict=strict)

    def hook(state: Any) -> dict[str, Any]:
        messages, update = _model_input(inner, state)
        if options is not None and messages:
            trimmed = trim_messages(messages, **options)
            messages = trimmed or _last_unit(messages, provider)
        fixed = _sent(guard, messages, provider, model)
        if not fixed:
            # An empty list would make create_react_agent fall back to the full history.
            fixed = list(_state_messages(state))
        return {**update, "llm_input_messages": fixed}

    hook.__name__ = "toolpair_repair_hook"
    return hook


def repair_node(
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    messages_key: str = "messages",
) -> Callable[[Any], dict[str, Any]]:
    """A node for hand-built graphs that repairs the state's history in place (persisted):
    it returns nothing when the history is sound, otherwise the repaired list behind a
    ``RemoveMessage(REMOVE_ALL)``. Put it right before the model node. For a repair
    that writes nothing, put ``repair_messages(provider=model)`` in front of the model
    call instead. Without a ``provider`` the persisted history is held to the pairing
    rules of LangGraph's message list, as `repair_thread` holds it, and so is it for a
    chat model toolpair does not recognise (with a warning)."""
    rules = DEFAULT_PROVIDER if provider is None else writing_rules(provider, DEFAULT_PROVIDER)

    def node(state: Any) -> dict[str, Any]:
        messages = _state_messages(state, messages_key)
        result = repair_list(messages, rules, model=model, policy=policy)
        if not result.changed:
            return {}
        return {messages_key: [RemoveMessage(id=REMOVE_ALL), *result.messages]}

    node.__name__ = "toolpair_repair"
    return node


def summary_split(
    messages: Sequence[BaseMessage],
    *,
    keep_tokens: int,
    token_counter: Any = "approximate",
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Split ``messages`` into (older, kept) between whole units: ``kept`` is the longest
    tail of whole units within ``keep_tokens`` (the pair-safe `trim_messages`), and
    ``older`` everything before it. No pair straddles the cut."""
    messages = list(messages)
    kept = trim_messages(messages, max_tokens=keep_tokens, token_counter=token_counter)
    n = len(messages) - len(kept)
    if kept and all(a is b for a, b in zip(kept, messages[n:], strict=True)):
        return messages[:n], kept
    # trim_messages returns a suffix of whole units unless it had to rebuild a message
    # (never for the "last" strategy without partial messages): fall back to the
    # nearest unit boundary.
    cut = toolpair.safe_cut(messages, n, keep="tail", format=codec_for(None))
    return messages[:cut], messages[cut:]


def _summarise(summarizer: Any, older: list[BaseMessage], prompt: str) -> str:
    if hasattr(summarizer, "invoke"):
        reply = summarizer.invoke([*older, HumanMessage(prompt)])
        content = getattr(reply, "content", reply)
        if isinstance(content, str):
            return content
        return content_text(content)
    return str(summarizer(older))


def summarize_hook(
    summarizer: Any,
    *,
    max_tokens: int,
    keep_tokens: int | None = None,
    token_counter: Any = "approximate",
    provider: ProviderLike = None,
    model: str | None = None,
    policy: Policy | None = None,
    persist: bool = True,
    prompt: str = SUMMARY_PROMPT,
    on_repair: OnRepair | None = None,
    strict: bool = False,
) -> Callable[[Any], dict[str, Any]]:
    """A ``pre_model_hook`` that summarises the older part of a history longer than
    ``max_tokens``, keeping the newest whole units within ``keep_tokens`` (by default
    half of ``max_tokens``) verbatim.

    ``summarizer``: a chat model (sent the older messages, repaired, and ``prompt``) or
    a function from the older messages to the summary text. ``persist=True`` writes
    ``[summary, *kept]`` to the state (a ``RemoveMessage(REMOVE_ALL)`` rewrite), so the
    next turn starts from it; ``persist=False`` only sends it to the model. Either way
    the model gets a repaired list as ``llm_input_messages``.
    """
    keep = keep_tokens if keep_tokens is not None else max_tokens // 2
    guard = Guard(INTEGRATION, policy=policy, on_repair=on_repair, strict=strict)

    def hook(state: Any) -> dict[str, Any]:
        messages = _state_messages(state)
        size = list_counter(token_counter)(messages) if messages else 0
        update: dict[str, Any] = {}
        if size > max_tokens:
            older, kept = summary_split(messages, keep_tokens=keep, token_counter=token_counter)
            if older:
                older = list(repair_list(older, provider, model=model, policy=policy).messages)
                summary = HumanMessage(SUMMARY_PREFIX + _summarise(summarizer, older, prompt))
                messages = [summary, *kept]
                if persist:
                    update["messages"] = [RemoveMessage(id=REMOVE_ALL), *messages]
        fixed = _sent(guard, messages, provider, model)
        return {**update, "llm_input_messages": fixed or messages}

    hook.__name__ = "toolpair_summarize_hook"
    return hook
