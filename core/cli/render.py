"""Rendering for the terminal: one line per turn with its blocks, a violation with
where it was found."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolpair._model import Block, Message, Violation


def short(text: str | None, width: int = 40) -> str:
    text = " ".join((text or "").split())
    return json.dumps(text if len(text) <= width else text[: width - 1] + "…", ensure_ascii=False)


def text_of(b: Block) -> str | None:
    if b.text is not None:
        return b.text
    n = b.native
    if isinstance(n, str):
        return n
    if isinstance(n, Mapping):
        for key in ("text", "content"):
            v: Any = n.get(key)
            if isinstance(v, str):
                return v
            if isinstance(v, list):
                return " ".join(
                    x["text"]
                    for x in v
                    if isinstance(x, Mapping) and isinstance(x.get("text"), str)
                )
    return None


def render_message(m: Message) -> str:
    """A compact one-line rendering of a message: its role and its blocks."""
    parts: list[str] = []
    for b in m.blocks:
        if b.kind == "text":
            parts.append(f"text {short(text_of(b))}")
        elif b.kind in ("call", "server_call"):
            parts.append(f"{b.kind} {b.name or '?'}({b.id or '-'})")
        elif b.kind in ("result", "server_result"):
            flags = "".join(
                f for f, on in ((" error", b.is_error), (" synthetic", b.synthetic)) if on
            )
            parts.append(f"{b.kind}({b.id or b.name or '-'}{flags})")
        else:
            parts.append(b.sub or b.kind)
    return f"[{m.index}] {m.role}: " + (", ".join(parts) or "(empty)")


def render_turns(
    messages: Sequence[Message], marked: set[int] | None = None, context: int | None = None
) -> list[str]:
    """One line per message, ``>`` marking the ``marked`` indices; with ``context``,
    only the marked messages and that many neighbours each side (``...`` for gaps)."""
    marked = marked or set()
    keep = list(range(len(messages)))
    if context is not None and marked:
        wanted = {j for i in marked for j in range(i - context, i + context + 1)}
        keep = [i for i in keep if i in wanted]
    out: list[str] = []
    last = -1
    for i in keep:
        if i != last + 1:
            out.append("  ...")
        out.append(("> " if i in marked else "  ") + render_message(messages[i]))
        last = i
    if context is not None and marked and last != len(messages) - 1:
        out.append("  ...")
    return out


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def violation_line(loc: str, v: Violation) -> str:
    at = f" (at {v.path})" if v.path and v.path not in v.message else ""
    message = v.message
    tag = f"messages.{v.index}"
    if loc.endswith(tag) and message.startswith(f"{tag}: "):
        # The location already says where the provider's text begins by saying.
        message = message[len(tag) + 2 :]
    return f"{loc}: [{v.code}] {message}{at}"


def grouped(violations: Sequence[Violation]) -> list[tuple[Violation, list[str]]]:
    """The portable rule set's findings, each once: the violations of one kind at one
    message for the same ids, with every provider that reports it (in the order they
    come), the first provider's violation standing for them all."""
    groups: dict[tuple[int, tuple[str, ...], str], tuple[Violation, list[str]]] = {}
    for v in violations:
        provider, _, kind = v.code.partition(".")
        key = (v.index, tuple(v.ids), kind or provider)
        hit = groups.get(key)
        if hit is None:
            groups[key] = (v, [provider])
        elif provider not in hit[1]:
            hit[1].append(provider)
    return list(groups.values())


def group_line(loc: str, v: Violation, providers: Sequence[str]) -> str:
    """One finding of the portable rule set, with the providers that refuse it."""
    kind = v.code.partition(".")[2] or v.code
    line = violation_line(loc, v)
    body = line[line.index(f"[{v.code}]") + len(v.code) + 3 :]
    head = line[: line.index(f"[{v.code}]")]
    return f"{head}refused by {', '.join(providers)} [{kind}]: {body}"


def violation_item(v: Violation, **where: Any) -> dict[str, Any]:
    """A violation as ``check --json`` prints it, with where it was found."""
    return {
        "code": v.code,
        "message": v.message,
        "index": v.index,
        "ids": list(v.ids),
        "path": v.path,
        **where,
    }
