"""The no-op path: one tight pass over the native messages that answers "certainly
valid" without decoding anything.

Repair runs on every request and nearly every history is already valid, so this pass
is what a request normally pays. Each codec brings the checkers its messages can be
read by (`Codec.certainly_valid`; the wire formats' are in `toolpair.formats`); this
module only asks it, under the profile's checker name (`Profile.checker`). A checker
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
from toolpair.formats import Checker as Checker
from toolpair.formats import anthropic_ids_ok as anthropic_ids_ok
from toolpair.formats import blank as blank

#: What a checker may raise on input it cannot read: the full path names what is wrong.
MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError)


def certainly_valid(codec: Codec, checker: str, msgs: Sequence[Any], ctx: Context) -> bool:
    """True only where the full rules of the profile whose checker is named ``checker``
    would find nothing in ``msgs`` (None, False or an exception: the full path)."""
    try:
        return codec.certainly_valid(msgs, checker, ctx) is True
    except MALFORMED:
        return False
