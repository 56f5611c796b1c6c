"""Shared by the compaction operations: units, pairing, token counting, results."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpair import events
from toolpair._api import Parsed, parse, repair
from toolpair._model import Block, Codec, Fix, Message, Repaired, ToolpairError

UnitKind = Literal["system", "user", "assistant", "tool", "results"]
TokenCounter = Literal["approximate"] | Callable[[Any], int]

#: Approximate counting: characters per token, tokens added per message, per image.
CHARS_PER_TOKEN = 4.0
TOKENS_PER_MESSAGE = 3
TOKENS_PER_IMAGE = 85


@dataclass(frozen=True, slots=True)
class Unit:
    """An eviction unit: messages ``start:stop`` of the input list.

    ``ids`` are the ids of the client calls it holds (the name for an id-less Gemini
    call); ``results`` the ids its results answer.
    """

    start: int
    stop: int
    kind: UnitKind
    ids: tuple[str, ...] = ()
    results: tuple[str, ...] = ()

    def __len__(self) -> int:
        return self.stop - self.start


@dataclass(slots=True)
class Compacted(Repaired):
    """What every compaction operation returns: `Repaired`'s fields, plus the units a
    trim evicted and the approximate (or counted) size before and after."""

    evicted: list[Unit] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0


class UnsupportedCodec(ToolpairError, TypeError):
    """The codec of this history cannot do what the operation needs (a framework codec
    without the optional editing methods ``with_content``, ``content_of`` or
    ``without_input``)."""

    def __init__(self, codec: Codec, method: str, operation: str) -> None:
        super().__init__(
            f"{operation} needs the {method}() method, which the {codec.name!r} codec "
            f"({type(codec).__name__}) does not have"
        )
        self.codec = codec
        self.method = method


# --------------------------------------------------------------------------- reading


def parse_for(
    history: Any,
    format: str | Codec | None,
    provider: str | None = None,
    model: str | None = None,
) -> Parsed:
    return parse(history, provider or "portable", format, {}, model if provider else None)


def _shaped(p: Parsed, messages: list[Any]) -> Any:
    if p.body is None:
        return messages
    out = dict(p.body)
    out[p.key] = messages
    return out


@dataclass(slots=True, eq=False)
class _Pair:
    """A client call with every result that answers it (``call`` None: orphans)."""

    call: Block | None
    call_msg: int
    results: list[tuple[Block, int]] = field(default_factory=list)

    @property
    def name(self) -> str | None:
        if self.call is not None:
            return self.call.name
        return next((b.name for b, _ in self.results if b.name), None)

    @property
    def key(self) -> str:
        b = self.call if self.call is not None else self.results[0][0]
        return b.id if b.id is not None else (b.name or "")

    def positions(self) -> list[int]:
        at = [self.call_msg] if self.call is not None else []
        return at + [m for _, m in self.results]


def _key(b: Block) -> str:
    return b.id if b.id is not None else "\x00" + (b.name or "")


def pairs_of(msgs: Sequence[Message]) -> list[_Pair]:
    """Every call with its results, in call order; results with no call at the end.
    A result answers the most recent unanswered call with its id (its name for an
    id-less Gemini call); a repeated result joins the pair it repeats."""
    out: list[_Pair] = []
    open_: dict[str, list[_Pair]] = {}
    done: dict[str, _Pair] = {}
    orphans: list[_Pair] = []
    for m in msgs:
        for b in m.blocks:
            if b.kind == "call":
                p = _Pair(b, m.index)
                out.append(p)
                open_.setdefault(_key(b), []).append(p)
            elif b.kind == "result":
                k = _key(b)
                waiting = open_.get(k)
                if waiting:
                    p = waiting.pop(0) if b.id is None else waiting.pop()
                    p.results.append((b, m.index))
                    done[k] = p
                elif k in done:
                    done[k].results.append((b, m.index))
                else:
                    orphans.append(_Pair(None, -1, [(b, m.index)]))
    return out + orphans


def _pieces(msgs: Sequence[Message], shape: str) -> list[tuple[int, UnitKind]]:
    """Unit starts before merging: (first message, kind)."""
    out: list[tuple[int, UnitKind]] = []
    prev_role = ""
    for m in msgs:
        has_result = any(b.kind == "result" for b in m.blocks)
        kind = out[-1][1] if out else None
        if m.role == "system":
            out.append((m.index, "system"))
            role = "system"
        elif m.role == "assistant":
            same_run = shape != "chat" and prev_role == "assistant"
            if not (same_run and kind in ("assistant", "tool")):
                out.append((m.index, "assistant"))
            role = "assistant"
        elif m.role == "tool" or has_result:
            if kind not in ("assistant", "tool", "results"):
                out.append((m.index, "results"))
            role = "results"
        else:
            if not (kind == "user" and prev_role == "user"):
                out.append((m.index, "user"))
            role = "user"
        prev_role = role
    return out


def units_of(msgs: Sequence[Message], shape: str, pairs: Sequence[_Pair]) -> list[Unit]:
    pieces = _pieces(msgs, shape)
    if not pieces:
        return []
    piece_of: list[int] = []
    for k, (start, _) in enumerate(pieces):
        stop = pieces[k + 1][0] if k + 1 < len(pieces) else len(msgs)
        piece_of.extend([k] * (stop - start))
    # reach[k]: the last piece a pair starting in piece k ends in.
    reach = list(range(len(pieces)))
    for p in pairs:
        at = [piece_of[i] for i in p.positions()]
        lo, hi = min(at), max(at)
        reach[lo] = max(reach[lo], hi)
    groups: list[tuple[int, int]] = []
    k = 0
    while k < len(pieces):
        end = reach[k]
        j = k
        while j < end:
            j += 1
            end = max(end, reach[j])
        groups.append((k, end))
        k = end + 1
    calls_in: dict[int, list[str]] = {}
    results_in: dict[int, list[str]] = {}
    for p in pairs:
        if p.call is not None:
            calls_in.setdefault(piece_of[p.call_msg], []).append(p.key)
        for b, m in p.results:
            results_in.setdefault(piece_of[m], []).append(b.id or b.name or "")
    units = []
    for a, z in groups:
        start = pieces[a][0]
        stop = pieces[z + 1][0] if z + 1 < len(pieces) else len(msgs)
        ids = tuple(i for k in range(a, z + 1) for i in calls_in.get(k, ()))
        res = tuple(i for k in range(a, z + 1) for i in results_in.get(k, ()))
        kind: UnitKind = pieces[a][1]
        if ids or (kind == "assistant" and res):
            kind = "tool"
        units.append(Unit(start, stop, kind, ids, res))
    return units


# --------------------------------------------------------------------------- tokens


_BINARY_KEYS = frozenset(
    {"data", "bytes", "signature", "encrypted_content", "thoughtSignature", "thought_signature"}
)
_IMAGE_KEYS = frozenset({"image", "inlineData", "inline_data", "fileData", "file_data", "video"})
_IMAGE_TYPES = frozenset({"image", "image_url", "input_image", "document", "file", "input_file"})


def _chars(obj: Any) -> tuple[int, int]:
    """(characters, images) in a native value: string values count, keys and binary
    payloads (base64 data, signatures, encrypted reasoning) do not, an image is one."""
    if isinstance(obj, str):
        return len(obj), 0
    if obj is None or isinstance(obj, bool):
        return 0, 0
    if isinstance(obj, int | float):
        return len(str(obj)), 0
    if isinstance(obj, bytes | bytearray):
        return 0, 0
    if isinstance(obj, Mapping):
        if obj.get("type") in _IMAGE_TYPES or _IMAGE_KEYS.intersection(obj):
            text = obj.get("text")
            return (len(text) if isinstance(text, str) else 0), 1
        chars = images = 0
        for k, v in obj.items():
            if k in _BINARY_KEYS:
                continue
            c, i = _chars(v)
            chars += c
            images += i
        return chars, images
    if isinstance(obj, list | tuple):
        chars = images = 0
        for v in obj:
            c, i = _chars(v)
            chars += c
            images += i
        return chars, images
    return len(str(obj)), 0


def _approximate(message: Message) -> int:
    """The approximate counter on one decoded message: characters / 4 (text, call
    arguments, result content), a fixed cost per image, a per-message overhead."""
    chars = images = 0
    for b in message.blocks:
        if b.kind == "image":
            images += 1
            continue
        c, i = _chars(b.native)
        chars += c
        images += i
    return TOKENS_PER_MESSAGE + math.ceil(chars / CHARS_PER_TOKEN) + images * TOKENS_PER_IMAGE


def message_counter(token_counter: TokenCounter, codec: Codec) -> Callable[[Message], int]:
    if token_counter == "approximate":
        return _approximate
    if isinstance(token_counter, str) or not callable(token_counter):
        raise ValueError(
            f"token_counter must be 'approximate' or a callable taking one message, "
            f"not {token_counter!r}"
        )
    fn = token_counter

    def count(m: Message) -> int:
        n = fn(m.native)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"token_counter returned {n!r} for message {m.index}")
        return n

    return count


def finish(
    p: Parsed,
    natives: list[Any],
    fixes: list[Fix],
    provider: str | None,
    *,
    model: str | None = None,
    evicted: Sequence[Unit] = (),
    before: int = 0,
    after: int = 0,
) -> Compacted:
    messages = _shaped(p, natives)
    id_map: dict[str, str] = {}
    # The compaction and the repair after it are one event (source "compaction", unless
    # the caller's own scope names another).
    with events.scope("compaction", model=model):
        events.report(fixes, provider or "", p.codec.name, 0.0, model=model)
        if provider is not None:
            fixed = repair(messages, provider, model=model, format=p.codec)
            messages = fixed.messages
            fixes = fixes + fixed.fixes
            id_map = fixed.id_map
    return Compacted(
        messages,
        fixes,
        id_map,
        provider or "",
        p.codec.name,
        evicted=list(evicted),
        tokens_before=before,
        tokens_after=after,
    )


def codec_method(codec: Codec, fn: Callable[..., Any], operation: str) -> Callable[..., Any]:
    """The codec's editing hook ``fn``, raising `UnsupportedCodec` where the format does
    not have it (the `Codec` default raises NotImplementedError)."""
    name = fn.__name__

    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except NotImplementedError:
            raise UnsupportedCodec(codec, name, operation) from None

    return call


def rebuild(
    p: Parsed, edits: Mapping[int, Mapping[int, Block | None]], built: list[Any] | None = None
) -> list[Any]:
    """The messages with block edits applied (None removes a block; a message whose
    blocks all go is left out). Untouched messages stay the same objects; the rebuilt
    ones are also added to ``built``."""
    out: list[Any] = []
    for m in p.messages:
        e = edits.get(m.index)
        if not e:
            out.append(p.raw[m.index])
            continue
        blocks = [e.get(j, b) for j, b in enumerate(m.blocks)]
        kept = [b for b in blocks if b is not None]
        if not kept:
            continue
        new = p.codec.build(m.role, kept, m)
        out.append(new)
        if built is not None:
            built.append(new)
    return out


def same_messages(
    p: Parsed, total: int, provider: str | None = None, model: str | None = None
) -> Compacted:
    """Nothing to compact; with ``provider`` the history is still repaired for it."""
    if provider is not None:
        return finish(p, list(p.raw), [], provider, model=model, before=total, after=total)
    return Compacted(
        _shaped(p, list(p.raw)), [], {}, "", p.codec.name, tokens_before=total, tokens_after=total
    )
