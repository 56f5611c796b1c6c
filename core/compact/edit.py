"""The editing operations: clear_tool_results, prune, offload (and the offload store)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from toolpair._api import Parsed
from toolpair._model import Block, Codec, Fix, Message, Role
from toolpair.compact.base import (
    Compacted,
    TokenCounter,
    codec_method,
    finish,
    message_counter,
    pairs_of,
    parse_for,
    rebuild,
    same_messages,
)

#: What a cleared result says instead of its content.
CLEARED = "[Tool result cleared to save context. The tool ran; its output was removed.]"
#: The first line of an offloaded result's reference.
OFFLOADED = "[toolpair: tool result offloaded"


@runtime_checkable
class Store(Protocol):
    """Where `offload` keeps results. ``put`` returns a locator (a path, a URL, a key)
    that ``get`` takes back; the same key and text must give the same locator."""

    def put(self, key: str, text: str) -> str: ...

    def get(self, locator: str) -> str: ...


class FileStore:
    """A `Store` writing one UTF-8 file per result under ``root``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def put(self, key: str, text: str) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{_safe_name(key)}.txt"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        return str(path.resolve())

    def get(self, locator: str) -> str:
        path = Path(locator)
        if not path.is_absolute() and path.parent == Path("."):
            path = self.root / path
        root = self.root.resolve()
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            raise ValueError(f"{locator!r} is not in this store ({self.root})")
        return resolved.read_text(encoding="utf-8")


def _safe_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key)[:120] or "result"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and len(content) == 1:
        (value,) = content.values()
        if isinstance(value, str):
            return value
    if isinstance(content, list | tuple) and content:
        texts = [c.get("text") if isinstance(c, Mapping) else c for c in content]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


def _threshold(value: Any, what: str, unit: str) -> int | None:
    """An int, or Anthropic's ``{"type": unit, "value": n}``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        if value.get("type") != unit:
            raise ValueError(f"{what} must be counted in {unit!r}, not {value.get('type')!r}")
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative int, not {value!r}")
    return value


def clear_tool_results(
    history: Any,
    *,
    keep: int | Mapping[str, Any] = 3,
    trigger: int | Mapping[str, Any] | None = None,
    clear_at_least: int | Mapping[str, Any] | None = None,
    exclude_tools: Sequence[str] = (),
    clear_inputs: bool | Sequence[str] = False,
    placeholder: str = CLEARED,
    token_counter: TokenCounter = "approximate",
    provider: str | None = None,
    model: str | None = None,
    format: str | Codec | None = None,
) -> Compacted:
    """Anthropic's ``clear_tool_uses_20250919`` context edit, done client side for any
    format: every result older than the last ``keep`` tool uses (calls with results)
    gets ``placeholder`` as its content; calls, results and ids all stay.

    ``trigger``: only when the history is larger than this many tokens (or, as
    ``{"type": "tool_uses", "value": n}``, holds more tool uses). ``clear_at_least``:
    do nothing unless this many tokens would be cleared. ``exclude_tools``: tool names
    never cleared (they still count towards ``keep``). ``clear_inputs``: also empty the
    calls' arguments (True, or the tool names to do it for). With ``provider`` (and
    ``model``) the result is also repaired for it.
    """
    p = parse_for(history, format, provider, model)
    count = message_counter(token_counter, p.codec)
    pairs = [x for x in pairs_of(p.messages) if x.call is not None and x.results]
    keep_n = _threshold(keep, "keep", "tool_uses")
    assert keep_n is not None
    sizes = [count(m) for m in p.messages]
    total = sum(sizes)
    if isinstance(trigger, Mapping) and trigger.get("type") == "tool_uses":
        limit = _threshold(trigger, "trigger", "tool_uses")
        if limit is not None and len(pairs) <= limit:
            return same_messages(p, total, provider, model)
    else:
        limit = _threshold(trigger, "trigger", "input_tokens")
        if limit is not None and total <= limit:
            return same_messages(p, total, provider, model)
    at_least = _threshold(clear_at_least, "clear_at_least", "input_tokens")
    targets = pairs[: max(len(pairs) - keep_n, 0)]
    excluded = set(exclude_tools)
    if isinstance(clear_inputs, str):
        clear_inputs = [clear_inputs]
    edits: dict[int, dict[int, Block | None]] = {}
    fixes: list[Fix] = []
    positions = {id(b): (m.index, j) for m in p.messages for j, b in enumerate(m.blocks)}
    with_content: Callable[..., Any] | None = None
    without_input: Callable[..., Any] | None = None
    for pair in targets:
        name = pair.name
        if name is not None and name in excluded:
            continue
        assert pair.call is not None
        for b, at in pair.results:
            if _content_text(_content(p.codec, b, "clear_tool_results")) == placeholder:
                continue
            with_content = with_content or codec_method(
                p.codec, p.codec.with_content, "clear_tool_results"
            )
            _, j = positions[id(b)]
            edits.setdefault(at, {})[j] = with_content(b, placeholder)
            fixes.append(
                Fix(
                    "result_cleared",
                    at,
                    (b.id or name or "",),
                    f"content of a {name or 'tool'} result replaced by a placeholder",
                )
            )
        if clear_inputs is True or (
            not isinstance(clear_inputs, bool) and name is not None and name in clear_inputs
        ):
            without_input = without_input or codec_method(
                p.codec, p.codec.without_input, "clear_tool_results"
            )
            new = without_input(pair.call)
            if new is not pair.call:
                at, j = positions[id(pair.call)]
                edits.setdefault(at, {})[j] = new
                fixes.append(
                    Fix(
                        "input_cleared",
                        at,
                        (pair.key,),
                        f"arguments of a {name or 'tool'} call emptied",
                    )
                )
    if not edits:
        return same_messages(p, total, provider, model)
    built: list[Any] = []
    natives = rebuild(p, edits, built)
    # Each message is counted once: only the rebuilt ones are counted again.
    after = total - sum(n for m, n in zip(p.messages, sizes, strict=True) if m.index in edits)
    after += sum(count(m) for m in p.codec.decode(built))
    if at_least is not None and total - after < at_least:
        return same_messages(p, total, provider, model)
    return finish(p, natives, fixes, provider, model=model, before=total, after=after)


def _content(codec: Codec, block: Block, operation: str) -> Any:
    return codec_method(codec, codec.content_of, operation)(block)


# --------------------------------------------------------------------------- prune

_BEFORE_LAST = re.compile(r"before-last-(\d+)-messages")


def _rules(tool_calls: Any) -> list[tuple[int | None, frozenset[str] | None]]:
    """(how many trailing messages are spared or None for all, tool names or None)."""

    def scope(kind: Any) -> int | Literal[False] | None:
        if kind == "none":
            return False
        if kind == "all":
            return None
        if kind == "before-last-message":
            return 1
        m = _BEFORE_LAST.fullmatch(kind) if isinstance(kind, str) else None
        if m is None:
            raise ValueError(
                "tool_calls must be 'all', 'before-last-message', 'before-last-N-messages', "
                f"'none' or a list of {{'type': ..., 'tools': [...]}}, not {kind!r}"
            )
        return int(m.group(1))

    if isinstance(tool_calls, str):
        s = scope(tool_calls)
        return [] if s is False else [(s, None)]
    out: list[tuple[int | None, frozenset[str] | None]] = []
    for rule in tool_calls:
        if not isinstance(rule, Mapping):
            raise ValueError(f"a tool_calls rule must be a mapping, not {rule!r}")
        s = scope(rule.get("type"))
        tools = rule.get("tools")
        if s is not False:
            out.append((s, frozenset(tools) if tools is not None else None))
    return out


def prune(
    history: Any,
    *,
    reasoning: Literal["none", "before-last-message", "all"] = "none",
    tool_calls: str | Sequence[Mapping[str, Any]] = "none",
    empty_messages: Literal["remove", "keep"] = "remove",
    provider: str | None = None,
    model: str | None = None,
    format: str | Codec | None = None,
) -> Compacted:
    """The Vercel AI SDK's ``pruneMessages``, pair-safe.

    ``reasoning``: remove thinking blocks and Responses reasoning items everywhere
    (``"all"``) or outside the last assistant message (``"before-last-message"``; in
    the items shape, the last assistant run). With thinking on (a body that says so),
    the thinking that opens the current tool loop stays: the provider requires it.
    ``tool_calls``: ``"all"``, ``"before-last-message"``, ``"before-last-N-messages"``
    (pairs with any part in the last N messages stay), ``"none"``, or a list of
    ``{"type": ..., "tools": [names]}`` rules. A call and all its results always go
    together; a reasoning item left with nothing to precede goes with them, and a
    Responses call whose reasoning item goes loses its ``fc_`` item id.
    ``empty_messages="remove"`` drops messages pruning emptied (and assistant messages
    left with nothing but thinking). With ``provider`` the result is also repaired.
    """
    if reasoning not in ("none", "before-last-message", "all"):
        raise ValueError(
            f"reasoning must be 'none', 'before-last-message' or 'all', not {reasoning!r}"
        )
    if empty_messages not in ("remove", "keep"):
        raise ValueError(f"empty_messages must be 'remove' or 'keep', not {empty_messages!r}")
    rules = _rules(tool_calls)
    p = parse_for(history, format, provider, model)
    msgs = p.messages
    n = len(msgs)
    gone: set[int] = set()  # id() of removed blocks
    fixes: list[Fix] = []
    for pair in pairs_of(msgs):
        at = pair.positions()
        for spared, tools in rules:
            if tools is not None and pair.name not in tools:
                continue
            if spared == 0 or (spared is not None and max(at) >= n - spared):
                continue
            if pair.call is not None:
                gone.add(id(pair.call))
            gone.update(id(b) for b, _ in pair.results)
            fixes.append(
                Fix(
                    "pair_pruned",
                    min(at),
                    (pair.key,),
                    f"a {pair.name or 'tool'} call and its {len(pair.results)} result(s)",
                )
            )
            break
    if reasoning != "none":
        _prune_reasoning(p, reasoning, gone, fixes)
    shape = p.codec.shape
    if shape == "items":
        _orphaned_reasoning(p, gone, fixes)
    edits: dict[int, dict[int, Block | None]] = {}
    strip = p.codec.without_item_id
    orphaned_run = False  # inside the run of items a removed reasoning item produced
    for m in msgs:
        e: dict[int, Block | None] = {j: None for j, b in enumerate(m.blocks) if id(b) in gone}
        left = [b for b in m.blocks if id(b) not in gone]
        if (
            e
            and m.role == "assistant"
            and left
            and all(b.kind in ("thinking", "reasoning") for b in left)
        ):
            # Thinking that produced only pruned calls goes with them.
            e = {j: None for j in range(len(m.blocks))}
            left = []
        is_reasoning = bool(m.blocks) and m.blocks[0].kind == "reasoning"
        if is_reasoning or m.role != "assistant":
            orphaned_run = is_reasoning and not left
        elif (
            shape == "items"
            and orphaned_run
            and len(left) == 1
            and left[0].kind == "call"
            and left[0].item_id is not None
            and (bare := strip(left[0])) is not None
        ):
            e[0] = bare
            fixes.append(
                Fix(
                    "item_id_dropped",
                    m.index,
                    (left[0].id or "",),
                    "its reasoning item was pruned; the call keeps its call_id",
                )
            )
        if e:
            edits[m.index] = e
    # (role, blocks, template, input index, edited)
    out: list[tuple[Role, list[Block], Message, int, bool]] = []
    for m in msgs:
        ed = edits.get(m.index)
        if not ed:
            out.append((m.role, m.blocks, m, m.index, False))
            continue
        kept = [b for b in (ed.get(j, b) for j, b in enumerate(m.blocks)) if b is not None]
        if not kept and (empty_messages == "remove" or shape == "items" or m.role == "tool"):
            fixes.append(
                Fix("empty_message_removed", m.index, (), "pruning left the message empty")
            )
            continue
        out.append((m.role, kept, m, m.index, True))
    if shape == "blocks":
        out = _merge_new_neighbours(out, fixes)
    natives = [
        p.codec.build(role, blocks, tpl) if edited else p.raw[tpl.index]
        for role, blocks, tpl, _, edited in out
    ]
    if not fixes:
        return same_messages(p, 0, provider, model)
    return finish(p, natives, fixes, provider, model=model)


def _merge_new_neighbours(
    out: list[tuple[Role, list[Block], Message, int, bool]], fixes: list[Fix]
) -> list[tuple[Role, list[Block], Message, int, bool]]:
    """Blocks shape: two turns of one role that pruning made neighbours (the pair between
    them is gone) become one turn, as they would have been (Bedrock and Gemini reject
    consecutive turns of one role, Anthropic merges them itself)."""
    res: list[tuple[Role, list[Block], Message, int, bool]] = []
    for entry in out:
        if res and res[-1][0] == entry[0] and res[-1][3] + 1 != entry[3] and entry[0] != "system":
            role, blocks, tpl, _, _ = res[-1]
            res[-1] = (role, blocks + entry[1], tpl, entry[3], True)
            fixes.append(
                Fix("turns_merged", entry[3], (), f"{role} turns left adjacent by pruning merged")
            )
        else:
            res.append(entry)
    return res


def _prune_reasoning(p: Parsed, mode: str, gone: set[int], fixes: list[Fix]) -> None:
    msgs = p.messages
    spare: set[int] = set()  # message indices whose reasoning stays
    if mode == "before-last-message":
        last = next((m.index for m in reversed(msgs) if m.role == "assistant"), None)
        if last is not None:
            spare.add(last)
            if p.codec.shape == "items":
                k = last
                while k - 1 >= 0 and msgs[k - 1].role == "assistant":
                    k -= 1
                    spare.add(k)
    if p.ctx.thinking:
        opener = _loop_opener(msgs)
        if opener is not None:
            spare.add(opener)
    for m in msgs:
        if m.role != "assistant" or m.index in spare:
            continue
        for b in m.blocks:
            if b.kind in ("thinking", "reasoning") and id(b) not in gone:
                gone.add(id(b))
                fixes.append(
                    Fix(
                        "reasoning_pruned",
                        m.index,
                        (b.item_id or "",),
                        f"{b.sub or b.kind} removed",
                    )
                )


def _loop_opener(msgs: Sequence[Message]) -> int | None:
    """The first assistant message after the last user message holding anything but
    results: the one a provider with thinking on wants to start with thinking."""
    start = 0
    for m in reversed(msgs):
        if m.role == "user" and any(b.kind != "result" for b in m.blocks):
            start = m.index + 1
            break
    return next((m.index for m in msgs[start:] if m.role == "assistant"), None)


def _orphaned_reasoning(p: Parsed, gone: set[int], fixes: list[Fix]) -> None:
    """Items shape: a reasoning item whose next item goes has nothing to precede (R3)."""
    msgs = p.messages
    for k in range(len(msgs) - 2, -1, -1):
        m, nxt = msgs[k], msgs[k + 1]
        if not m.blocks or m.blocks[0].kind != "reasoning" or id(m.blocks[0]) in gone:
            continue
        if nxt.blocks and id(nxt.blocks[0]) in gone:
            gone.add(id(m.blocks[0]))
            fixes.append(
                Fix(
                    "reasoning_pruned",
                    m.index,
                    (m.blocks[0].item_id or "",),
                    "the item it preceded was pruned",
                )
            )


# --------------------------------------------------------------------------- offload


def offload(
    history: Any,
    store: Store,
    *,
    threshold_bytes: int,
    head_chars: int = 200,
    provider: str | None = None,
    model: str | None = None,
    format: str | Codec | None = None,
) -> Compacted:
    """Results larger than ``threshold_bytes`` (UTF-8, their content as text or JSON)
    go to ``store`` and are replaced by a short reference: where, how large, and the
    first ``head_chars`` characters. ``store.get(locator)`` gives the content back.
    With ``provider`` (and ``model``) the result is also repaired for it."""
    if (
        isinstance(threshold_bytes, bool)
        or not isinstance(threshold_bytes, int)
        or threshold_bytes < 0
    ):
        raise ValueError(f"threshold_bytes must be a non-negative int, not {threshold_bytes!r}")
    p = parse_for(history, format, provider, model)
    edits: dict[int, dict[int, Block | None]] = {}
    fixes: list[Fix] = []
    for m in p.messages:
        for j, b in enumerate(m.blocks):
            if b.kind != "result":
                continue
            content = _content(p.codec, b, "offload")
            if isinstance(content, str):
                text = content
            else:
                try:
                    text = json.dumps(content, ensure_ascii=False, default=str)
                except (TypeError, ValueError):
                    text = str(content)
            if _content_text(content).startswith(OFFLOADED):
                continue
            size = len(text.encode("utf-8"))
            if size <= threshold_bytes:
                continue
            with_content = codec_method(p.codec, p.codec.with_content, "offload")
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            locator = store.put(f"{b.id or b.name or 'result'}-{digest}", text)
            head = text[:head_chars]
            more = "..." if len(text) > head_chars else ""
            ref = (
                f"{OFFLOADED} ({size} bytes) to {locator}. Its first "
                f"{len(head)} characters:]\n{head}{more}"
            )
            edits.setdefault(m.index, {})[j] = with_content(b, ref)
            fixes.append(
                Fix(
                    "result_offloaded",
                    m.index,
                    (b.id or b.name or "",),
                    f"{size} bytes stored at {locator}",
                )
            )
    if not edits:
        return same_messages(p, 0, provider, model)
    return finish(p, rebuild(p, edits), fixes, provider, model=model)
