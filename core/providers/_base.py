"""What every provider profile has: its rules, its id constraint, and the layout
choices repair must make for it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from toolpair._model import Context as Context
from toolpair._model import Fix, Message, Policy, Violation

_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def digest(text: str, length: int, alphabet: str = _ALNUM) -> str:
    """A deterministic short string from ``text`` (collision-safe id suffixes)."""
    n = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


def renamed(v: Violation, names: dict[str, str]) -> Violation:
    """``v`` under the code a host reports a base API's rule by (``names``: old prefix
    -> new, `Profile.reports_as`)."""
    for old, new in names.items():
        if v.code.startswith(old):
            return Violation(new + v.code[len(old) :], v.message, v.index, v.ids, v.path)
    return v


class Profile:
    """A provider: its rules as it enforces them and the layout repair must produce."""

    name: ClassVar[str]
    #: The answering turn may hold nothing but results (Bedrock B3).
    results_only: ClassVar[bool] = False
    #: User content may not directly follow results: an assistant bridge goes between
    #: (Bedrock alternation after B3, Mistral M4).
    bridge_after_results: ClassVar[bool] = False
    #: A system message may not follow an assistant or tool message (Mistral M4).
    system_after_user_only: ClassVar[bool] = False
    #: Consecutive turns of one role are rejected, so repair merges them (Bedrock).
    strict_alternation: ClassVar[bool] = False
    #: The history must start with a user turn (Bedrock B5); Gemini only forbids
    #: starting with a call (G3).
    first_user: ClassVar[bool] = False
    first_not_call: ClassVar[bool] = False
    #: Responses R3: reasoning items sit directly before the item they produced.
    reasoning_adjacency: ClassVar[bool] = False
    #: A reasoning item after a call ends that call's group: its outputs come before
    #: the reasoning (DeepSeek's Responses endpoint).
    reasoning_ends_calls: ClassVar[bool] = False
    #: Messages with no content are rejected (Gemini G6), so repair removes them.
    drop_empty: ClassVar[bool] = False

    #: An assistant turn with tool use may hold no text (Bedrock's Llama and Mistral).
    calls_only: ClassVar[bool] = False
    #: Responses on reasoning models: an ``fc_`` item id needs its reasoning item (R3).
    fc_needs_reasoning: ClassVar[bool] = False
    #: Whether calls and results may carry an id at all on the wire (Vertex v1: no).
    ids_allowed: ClassVar[bool] = True
    #: Call ids need differ only within one assistant turn, so a later turn may reuse
    #: one (Anthropic A4); elsewhere repair keeps them unique over the conversation.
    ids_unique_per_turn: ClassVar[bool] = False
    #: Whether the no-op checker of the API's strict profile may clear a history for
    #: this profile: true wherever this profile's rules are a subset of those.
    fast_path: ClassVar[bool] = True
    #: The no-op checker to use, where a family or host has one of its own (default: the
    #: API's, the name of the profile this one derives from directly below `Profile`).
    fast_key: ClassVar[str | None] = None

    @property
    def checker(self) -> str:
        """The name the no-op checkers know this profile by (`Codec.certainly_valid`)."""
        if self.fast_key is not None:
            return self.fast_key
        for cls in type(self).__mro__:
            if issubclass(cls, Profile) and Profile in cls.__bases__:
                return cls.name
        return self.name

    #: A host that reports a base API's rules under its own name: old prefix -> new.
    reports_as: ClassVar[dict[str, str]] = {}
    #: Rules of a base API that a host checks differently (its own rules stand in).
    replaces: ClassVar[frozenset[str]] = frozenset()

    id_pattern: ClassVar[re.Pattern[str]] = re.compile(r".+")
    id_max: ClassVar[int] = 1_000_000

    def valid_id(self, value: str) -> bool:
        return 0 < len(value) <= self.id_max and self.id_pattern.fullmatch(value) is not None

    def new_id(self, original: str, salt: int) -> str:
        """A valid id close to ``original``; different salts give different ids."""
        base = re.sub(r"[^a-zA-Z0-9_-]", "_", original) or "call"
        if salt == 0 and self.valid_id(base[: self.id_max]):
            return base[: self.id_max]
        suffix = "_" + digest(f"{original}\x00{salt}", 8)
        return base[: self.id_max - len(suffix)] + suffix

    def prepare(self, messages: list[Message]) -> list[Message]:
        """The decoded messages as this provider reads them (Nova's inline server
        results are not client results); most profiles change nothing."""
        return messages

    def signatures_due(self, messages: Sequence[Message], ctx: Context) -> bool:
        """Whether the current turn's calls must carry their thought signatures (Gemini)."""
        return False

    def foreign_calls(self, messages: Sequence[Message], ctx: Context) -> frozenset[int]:
        """The calls (``id()`` of their native objects) whose thought signature another
        model produced and this provider refuses (Gemini G8): repair puts the documented
        bypass value in their place, through the codec. Most profiles: none."""
        return frozenset()

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        """Answer what repair's passes left that only this provider's own wire shape can
        answer (a field DeepSeek wants back, a server tool's error result), on the native
        messages of format ``fmt``: the new list and one fix per change. Untouched
        messages stay the same objects; the default answers nothing."""
        return natives, []

    def for_model(self, model: str) -> Profile:
        """This profile as ``model`` sees it: a family whose rules differ gets its own
        profile; anything else keeps this one, the strictest of the API."""
        return self

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        raise NotImplementedError
