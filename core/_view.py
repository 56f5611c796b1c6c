"""Projections of a neutral history onto the turn structure a provider checks.

A provider does not see the caller's messages but what a formatter makes of them: a
LangChain ``ToolMessage`` reaches Anthropic as a ``tool_result`` block inside a user
turn, and an Anthropic user message holding results reaches OpenAI as ``tool``
messages. The rules read these projections, and every item keeps the index of the
message and block it came from, so violations name the caller's own positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from toolpair._model import Block, Message

#: ``all``: consecutive turns of one role merge (Anthropic merges them server side).
#: ``tool``: only results sent as separate ``tool`` messages merge (how formatters for
#: Bedrock and Gemini batch them); other turns never merge, since not every formatter
#: merges them (agno's Bedrock formatter does not).
Merge = Literal["all", "tool"]


@dataclass(slots=True)
class Item:
    block: Block
    msg: int
    pos: int


@dataclass(slots=True)
class Turn:
    role: str
    items: list[Item] = field(default_factory=list)
    msgs: list[int] = field(default_factory=list)
    from_tool: bool = False

    @property
    def first(self) -> int:
        return self.msgs[0]


def turns(messages: Sequence[Message], merge: Merge, shape: str) -> list[Turn]:
    """User/assistant turns; system messages are left out (they become the system
    prompt on these providers)."""
    out: list[Turn] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        from_tool = m.role == "tool"
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.role == role
            and (
                merge == "all"
                or (from_tool and prev.from_tool)
                # Responses items are fragments of turns: converters join them.
                or (shape == "items" and not from_tool and not prev.from_tool)
            )
        ):
            turn = prev
        else:
            turn = Turn(role, from_tool=from_tool)
            out.append(turn)
        turn.msgs.append(m.index)
        turn.items.extend(Item(b, m.index, j) for j, b in enumerate(m.blocks))
    return out


def chat(messages: Sequence[Message], shape: str = "chat") -> list[Turn]:
    """One turn per chat message; a user message holding result blocks splits into one
    ``tool`` turn per result and ``user`` turns for the rest, in block order. Responses
    items of one assistant run become one assistant message, as converters make them."""
    out: list[Turn] = []
    for m in messages:
        if m.role != "user" or not any(b.kind == "result" for b in m.blocks):
            items = [Item(b, m.index, j) for j, b in enumerate(m.blocks)]
            if shape == "items" and m.role == "assistant" and out and out[-1].role == "assistant":
                out[-1].items.extend(items)
                out[-1].msgs.append(m.index)
                continue
            out.append(Turn(m.role, items, [m.index]))
            continue
        current: Turn | None = None
        for j, b in enumerate(m.blocks):
            if b.kind == "result":
                out.append(Turn("tool", [Item(b, m.index, j)], [m.index], from_tool=True))
                current = None
            else:
                if current is None:
                    current = Turn("user", [], [m.index])
                    out.append(current)
                current.items.append(Item(b, m.index, j))
    return out


def flat(messages: Sequence[Message]) -> list[tuple[Item, str]]:
    """Every block in order with the role of its message (the Responses view)."""
    return [(Item(b, m.index, j), m.role) for m in messages for j, b in enumerate(m.blocks)]


def pid(block: Block) -> str:
    """The key a call and its result pair on: the id, or the name where a format
    carries no id (Gemini pairs those by name and position)."""
    if block.id is not None:
        return block.id
    name = block.name or ""
    return f"{name}#{block.slot}" if block.slot else name


def current_user_turn(messages: Sequence[Message]) -> int:
    """The position just after the last user message that holds anything but results:
    where the tool loop the model is in began."""
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if m.role == "user" and any(b.kind != "result" for b in m.blocks):
            return k + 1
    return 0
