"""What the six wire formats share as codecs: their no-op checkers, and the sides of a
conversation read off plain dicts (`toolpair.engine.chunked`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from toolpair._model import Codec, Context, Frag
from toolpair.formats._checks import Checker

#: Responses items a user-side client sends (outputs of client-run tools).
USER_ITEMS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "program_output",
    }
)


class WireCodec(Codec):
    """A codec of a provider's own request format: messages are JSON objects."""

    splits = True
    reads_thinking = True
    #: The no-op checkers that read this format, by `Profile.checker`.
    checks: ClassVar[Mapping[str, Checker]] = {}

    def certainly_valid(
        self, messages: Sequence[Any], checker: str, ctx: Context, frag: Frag | None = None
    ) -> bool | None:
        check = self.checks.get(checker)
        return None if check is None else check(messages, ctx, frag)

    def knows(self, checker: str) -> bool:
        return checker in self.checks

    def side(self, native: Any) -> str:
        return "a" if type(native) is dict and native.get("role") == "assistant" else "u"

    def starts(self, messages: Sequence[Any]) -> list[int]:
        try:
            # The common case in one comprehension; anything odd goes message by message.
            a = [m["role"] == "assistant" for m in messages if type(m) is dict]
        except KeyError:
            a = []
        if len(a) != len(messages):
            a = [self.side(m) == "a" for m in messages]
        return [0] + [i for i in range(1, len(messages)) if a[i] and not a[i - 1]]

    def role_before(self, native: Any) -> str | None:
        if type(native) is not dict:
            return None
        if native.get("type") in USER_ITEMS:
            return "tool"
        role = native.get("role")
        return role if isinstance(role, str) else None
