"""The no-op path: one tight pass over the native messages that answers "certainly
valid" without decoding anything.

Repair runs on every request and nearly every history is already valid, so this pass
is what a request normally pays. Each codec brings the checkers its messages can be
read by (`Codec.certainly_valid`; the wire formats' are in `toolpair.formats`), or a
skeleton of its messages (`Codec.skeleton`) that one checker per rule family reads
(`toolpair.engine.skeleton`); this module only asks, under the profile's checker name
(`Profile.checker`). A checker
returns True only when the history breaks none of the provider's rules; anything
unusual returns None and the caller takes the full path, which decodes, names every
violation and raises on bad input. tests/core/test_properties.py holds every checker
to "never True where the full rules report something".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._model import Codec, Context
from toolpair._model import Frag as Frag
from toolpair.engine import pause, skeleton
from toolpair.formats import Checker as Checker
from toolpair.formats import anthropic_ids_ok as anthropic_ids_ok
from toolpair.formats import blank as blank

#: What a checker may raise on input it cannot read: the full path names what is wrong.
MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError)


def certainly_valid(codec: Codec, checker: str, msgs: Sequence[Any], ctx: Context) -> bool:
    """True only where the full rules of the profile whose checker is named ``checker``
    would find nothing in ``msgs`` (None, False or an exception: the full path)."""
    try:
        return check(codec, checker, msgs, ctx) is True
    except MALFORMED:
        return False


def check(
    codec: Codec, checker: str, msgs: Sequence[Any], ctx: Context, frag: Frag | None = None
) -> bool | None:
    """The codec's own checker of that name where it has one, else the rule family's
    checker over the codec's skeleton (None where it reads none). May raise `MALFORMED`."""
    got = codec.certainly_valid(msgs, checker, ctx, frag)
    if got is not None or codec.knows(checker) or not reads_skeleton(codec):
        return got
    # A skeleton is a few small objects per message, none in a cycle: the collector's
    # runs they would set off cost as much again (`toolpair.engine.pause`).
    with pause.paused():
        sk = codec.skeleton(msgs)
        return None if sk is None else skeleton.check(sk, checker, ctx, frag)


def reads_skeleton(codec: Codec) -> bool:
    """Whether the codec reads a skeleton of its messages (`Codec.skeleton`)."""
    return type(codec).skeleton is not Codec.skeleton


def knows(codec: Codec, checker: str) -> bool:
    """Whether some checker of that name can clear a history of this codec."""
    if codec.knows(checker):
        return True
    return checker in skeleton.CHECKERS and reads_skeleton(codec)
