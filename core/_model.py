"""The neutral view of a history, and the public result types.

Every codec decodes its native messages into `Message`s made of `Block`s, keeping a
reference to each native object so that encoding gives back the very same objects for
everything a pass did not change. Only the skeleton that pairing needs is read: roles,
block kinds, ids, order. Content is never parsed beyond that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Role = Literal["system", "user", "assistant", "tool"]

#: Block kinds. ``call``/``result`` are client tool calls and their results (the pair
#: this library keeps intact). ``server_call``/``server_result`` are provider-executed
#: tools (Anthropic server tools). ``thinking`` is a signed reasoning artifact that must
#: stay byte-identical; ``reasoning`` is an OpenAI Responses reasoning item. ``other``
#: is anything a codec does not recognise: it passes through untouched.
BlockKind = Literal[
    "text",
    "image",
    "call",
    "result",
    "thinking",
    "reasoning",
    "server_call",
    "server_result",
    "other",
]

#: How a format stores results. ``blocks``: results are blocks inside a user message
#: (Anthropic, Bedrock, Gemini). ``chat``: each result is its own ``tool`` message right
#: after the assistant message that made the calls (OpenAI Chat, Mistral, most
#: frameworks). ``items``: a flat list in which every call and result is an item
#: (OpenAI Responses).
Shape = Literal["blocks", "chat", "items"]


@dataclass(slots=True, eq=False)
class Block:
    """One piece of a message, as far as pairing cares.

    ``native`` is the codec's own object for the block (a content block dict, a tool call
    entry, a whole tool message for ``chat`` results). ``id`` is the call id a call
    carries or a result answers (None where a format allows none, as Gemini does).
    """

    kind: BlockKind
    native: Any
    id: str | None = None
    name: str | None = None
    is_error: bool = False
    #: Result content is empty (A9/B7 care when ``is_error`` is set).
    empty: bool = False
    #: For text blocks, the text, so blank-text rules can be checked without the codec.
    text: str | None = None
    #: Set on results toolpair made up for a dangling call.
    synthetic: bool = False
    #: Anthropic computer/browser toolset member name (T1/T2).
    toolset: str | None = None
    #: Secondary id: a Responses item id (``fc_...``, ``rs_...``), a Gemini thought
    #: signature marker; codec specific.
    item_id: str | None = None
    #: For id-less calls and results (Gemini): which same-named one of its message this
    #: is, so that positional pairing survives a projection onto an id-based provider.
    slot: int = 0
    #: Codec-specific subtype (``web_search`` for a server tool, the Responses item
    #: type, ``redacted_thinking``...).
    sub: str | None = None
    #: A result in a format whose results carry an id, carrying none: it answers no
    #: call (an orphan result, reported in the provider's words), not malformed input.
    missing_id: bool = False


def synthetic_result(
    native: object, call: Block, *, is_error: bool, empty: bool = False, sub: str | None = None
) -> Block:
    """The block of a result toolpair wrote (``native``, in the codec's own form)
    answering ``call``: its id, name and toolset are the call's. What every codec's
    ``make_result`` returns around its native result."""
    return Block(
        "result",
        native,
        id=call.id,
        name=call.name,
        is_error=is_error,
        empty=empty,
        synthetic=True,
        toolset=call.toolset,
        sub=sub,
    )


@dataclass(slots=True, eq=False)
class Message:
    """A native message seen as a role and a list of blocks. ``index`` is its position
    in the input list, which is what violations and fixes name."""

    role: Role
    blocks: list[Block]
    native: Any
    index: int


@dataclass(slots=True)
class Context:
    """What some rules need beyond the messages. None means unknown: a rule that needs
    an unknown fact does not fire."""

    thinking: bool | None = None
    tool_config: bool | None = None
    previous_response_id: str | None = None
    store: bool | None = None
    thought_signatures: bool = False
    tokenizer_version: int = 13
    tools: Sequence[Any] | None = None
    shape: str = "blocks"
    format: str = ""
    #: From the codec's ``sends_blank_text``: whether its formatter sends a blank text
    #: block as it stands (blank-text rules judge only those); None: it does not say.
    sends_blank: Callable[[Any], bool | None] | None = None
    #: The model the request goes to (given, or named by the body or the path).
    model: str | None = None
    #: The model that produced each thought signature (Gemini), as a signature cache or
    #: a framework's record of each response knows it: ``{signature: model}`` (the
    #: signature as the codec reads it into a call's ``Block.item_id``).
    signature_models: Mapping[str, str] | None = None
    #: The API version the request is sent under, where a header names it (Anthropic's
    #: ``anthropic-version``: ``2023-06-01``, ``2026-10-21``); never in a body.
    api_version: str | None = None


#: One block of a skeleton: its kind, its call or result id, and the one fact the rules
#: read of it: a text's text, a call's tool name, an image's subtype, for a result
#: whether it is an error with no content, for thinking whether it is signed (or needs
#: no signature). A block the no-op checkers do not model
#: (server tools, toolsets, Responses item ids, a result with no id...) is ``other``.
Bone = tuple[str, "str | None", Any]
#: A history reduced to what pairing reads (`Codec.skeleton`): per message its role and
#: its blocks, in order, holding no native object. `toolpair.engine.skeleton` checks it,
#: one checker per rule family.
Skeleton = list[tuple[Role, list[Bone]]]


@dataclass(slots=True)
class Frag:
    """A fragment of a longer history (see `toolpair.engine.chunked`): where it sits, and the
    role the message before it had. ``seen`` is shared by every fragment: a checker
    that finds its fragment clean adds the fragment's call ids to it (each answered
    inside the fragment, so they are its result ids too); the providers that want ids
    unique conversation-wide also refuse a fragment reusing one."""

    first: bool
    last: bool
    prev_role: str | None
    seen: set[str]
    #: Whether a clean fragment holds thinking (None: the checker does not say). Only
    #: thinking can be invalidated by an edit earlier in the history (H4), and only
    #: then is a look over the whole result worth its cost.
    thinking: bool | None = None

    def accept(self, ids: Sequence[str] | set[str], thinking: bool | None = None) -> bool:
        """Record a fragment its checker found clean: its call ids (each answered inside
        it) join ``seen``. False where an id repeats, inside the fragment or across
        fragments: the caller then returns None, and the fragment is not clean."""
        new = set(ids)
        if len(new) != len(ids) or not self.seen.isdisjoint(new):
            return False
        self.seen |= new
        self.thinking = thinking
        return True


class Codec:
    """Reads and writes one message format. A codec never mutates its input.

    A format is a subclass: the six methods without a body are what every codec does;
    every other hook has a default that says "this format does not do that", so the
    engine, the API and compaction call hooks directly and never ask whether a codec
    has one. A new wire format is one module defining one subclass.

    ``build`` is only called for messages a pass changed or created; untouched messages
    are handed back as ``template.native`` by the engine without calling the codec.
    """

    name: str
    shape: Shape

    # -- reading and writing (every codec) ------------------------------------------

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        raise NotImplementedError

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        """A native message with these blocks. ``template`` is the message this one
        descends from (copy its other fields); None for a message toolpair creates."""
        raise NotImplementedError

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        """A result block answering ``call`` whose content is the plain text ``text``."""
        raise NotImplementedError

    def make_text(self, text: str, role: Role) -> Block:
        """A text block for a message of ``role``."""
        raise NotImplementedError

    def with_id(self, block: Block, new_id: str) -> Block:
        """A copy of a call or result block carrying ``new_id``."""
        raise NotImplementedError

    def result_as_text(self, block: Block) -> Block:
        """A text block standing for a result block (the orphan-as-text policy)."""
        raise NotImplementedError

    # -- the no-op path ---------------------------------------------------------------

    #: Whether ``side`` tells the two sides of a conversation apart, so that a long
    #: broken history is repaired in pieces (`toolpair.engine.chunked`): only the
    #: exchanges ``certainly_valid`` cannot clear are decoded.
    splits: ClassVar[bool] = False
    #: Whether ``thinking_in`` reads thinking off a native message (the pieces' H4 scan
    #: over the whole history); otherwise a piece with thinking takes the full path.
    reads_thinking: ClassVar[bool] = False
    #: The checker names whose fragments may be repaired in pieces, where not every one
    #: it knows (None: all of them).
    pieces: ClassVar[frozenset[str] | None] = None

    def certainly_valid(
        self, messages: Sequence[Any], checker: str, ctx: Context, frag: Frag | None = None
    ) -> bool | None:
        """One pass over the native messages, without decoding, that returns True only
        where the full rules of the profile whose no-op checker is named ``checker``
        (`Profile.checker`) would find nothing; None or False sends the history down
        the full path. Repair runs on every request and nearly every history is already
        valid, so this is what a request normally pays. The default knows no checker.

        Given ``frag``, checks the messages as a fragment of a longer history: rules on
        the first or last message apply only where ``frag.first``/``frag.last`` say so;
        a fragment that is not first follows a user-side message; on returning True it
        calls ``frag.accept`` with the fragment's call ids (each answered inside it)."""
        return None

    def knows(self, checker: str) -> bool:
        """Whether ``certainly_valid`` has a checker of that name (where ``splits`` is
        set: pieces are not worth cutting where no piece can be cleared)."""
        return False

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """The history as `Skeleton`, read in one cheap pass: exactly what
        `toolpair.engine.skeleton.from_view` makes of ``decode(messages)``, or None
        where this pass does not model a message (the full path decodes it). Where
        ``certainly_valid`` has no checker of a profile's name, the engine checks the
        skeleton with that rule family's checker, so a codec that reads one gets every
        provider's no-op path. The default reads none."""
        return None

    def side(self, native: Any) -> str:
        """``"a"`` for a message on the assistant side, ``"u"`` otherwise (read where
        ``splits`` is set). A piece boundary falls where an assistant turn starts after a
        user-side message."""
        return "u"

    def starts(self, messages: Sequence[Any]) -> list[int]:
        """Where each exchange starts: an assistant-side message after a user-side one
        (read off the skeleton where the codec has one: assistant and system messages
        are on the assistant side)."""
        sk = self.skeleton(messages)
        if sk is not None:
            a = [role == "assistant" or role == "system" for role, _ in sk]
        else:
            a = [self.side(m) == "a" for m in messages]
        return [0] + [i for i in range(1, len(messages)) if a[i] and not a[i - 1]]

    def role_before(self, native: Any) -> str | None:
        """The role a fragment's checker is told the message before it had."""
        return "user"

    def thinking_in(self, native: Any) -> bool:
        """Whether a native message holds thinking bound to its prefix (read where
        ``reads_thinking`` is set)."""
        return False

    # -- a whole request body (wire formats) ------------------------------------------

    #: The body key holding the message list.
    body_key: ClassVar[str] = "messages"
    #: Items of an unknown type are skipped rather than refused: a detected list it
    #: explains nothing of gets no verdict.
    skips_unknown: ClassVar[bool] = False

    def body_context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """What a rule needs from the rest of the body (thinking, toolConfig,
        previous_response_id, store, tools)."""
        return {}

    def implied_context(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """What the context keywords imply for its body (a Bedrock ``tools`` list is a
        toolConfig)."""
        return {}

    def without_thinking(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The body sent with thinking off; None where the format cannot turn it off."""
        return None

    def judges(self, item: Mapping[str, Any]) -> bool:
        """Whether the rules read this item of a message list (coverage): an item of a
        type the format does not know is skipped, and counted as such."""
        t = item.get("type")
        return "role" in item or not isinstance(t, str)

    # -- a framework's formatter -----------------------------------------------------

    def sends_blank_text(self, block: Block, provider: str) -> bool | None:
        """Whether the framework's own formatter for ``provider`` sends that empty or
        whitespace-only text block as it stands, rather than dropping it. Anthropic
        rejects blank text (A10) and formatters differ on which blank text they drop.
        None (the default): only content block dicts count as sent."""
        return None

    def keeps(self, provider: str) -> frozenset[str]:
        """Rule codes ``provider``'s rules keep for every model when judged through this
        codec, whatever a named model's evidence withholds: the framework's formatter
        reshapes what they flag into a shape the provider refuses (agno merges a user
        message into the results before it, so two user turns in a row, which Claude 3
        takes on Converse, reach it as text beside results, which it refuses). Recorded
        acceptance is of the wire shape, which such a formatter does not send."""
        return frozenset()

    # -- editing (repair's passes and compaction) ------------------------------------
    # A hook returning None, or raising NotImplementedError, says the format cannot.

    def without_id(self, block: Block) -> Block | None:
        """A call or result with its id removed (hosts that accept none)."""
        return None

    def without_item_id(self, block: Block) -> Block | None:
        """A call without its secondary item id (a Responses ``fc_`` id)."""
        return None

    def with_signature(self, block: Block, signature: str) -> Block | None:
        """A call carrying this thought signature (Gemini)."""
        return None

    def content_of(self, block: Block) -> Any:
        """A result's content."""
        raise NotImplementedError

    def with_content(self, block: Block, text: str) -> Block:
        """A result whose content is the plain text ``text``."""
        raise NotImplementedError

    def without_input(self, block: Block) -> Block:
        """A call with its arguments emptied."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Violation:
    """One thing a provider would reject, worded as that provider words it.

    ``index`` is the message index that provider's own error names; ``path`` the
    location in the provider's notation (``messages.3.content.0``, ``input``...).
    """

    code: str
    message: str
    index: int
    ids: tuple[str, ...] = ()
    path: str = ""

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


@dataclass(frozen=True, slots=True)
class Fix:
    """One change a pass made (or, with kind ``unrepaired``, could not make)."""

    kind: str
    index: int
    ids: tuple[str, ...] = ()
    detail: str = ""

    def __str__(self) -> str:
        ids = f" ({', '.join(self.ids)})" if self.ids else ""
        return f"{self.kind} at {self.index}{ids}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Policy:
    """How repair treats the shapes that have more than one reasonable answer.

    placeholder: the content of a synthetic result. It states a fact and never echoes
        the call's input or any tool output.
    orphans: ``"drop"`` a result whose call is nowhere, or keep it as ``"text"``.
    trailing: ``"answer"`` calls in a final assistant turn with synthetic results, or
        ``"keep"`` them dangling (a caller about to run the tools itself).
    strict: raise `HistoryError` instead of repairing anything.
    bridge_text: the text of an assistant turn toolpair inserts where a provider
        forbids a user turn right after results (Bedrock, Mistral).
    user_bridge_text: the text of a user turn inserted where a provider needs the
        history to start with a user turn (Bedrock, Gemini).
    empty_error_text: the content given to an error result that has none (Anthropic
        and Bedrock reject an empty one).
    bound_thinking: ``"keep"`` thinking blocks after an edited message and report the
        prefix-binding risk (H4), or ``"strip"`` every thinking block from the first
        edited message on, so that no remaining block has an edited prefix.
    disable_thinking: for a whole request body with thinking on whose final assistant
        turn does not start with a thinking block (which nothing inside the history can
        truthfully fix), turn thinking off for that one request, as the provider's own
        error advises (a ``thinking_disabled`` fix). False reports it unrepaired.
    """

    placeholder: str = "No result was recorded for this tool call."
    orphans: Literal["drop", "text"] = "drop"
    trailing: Literal["answer", "keep"] = "answer"
    strict: bool = False
    bridge_text: str = "Understood."
    user_bridge_text: str = "(conversation continues)"
    bound_thinking: Literal["keep", "strip"] = "keep"
    empty_error_text: str = "The tool failed without any output."
    disable_thinking: bool = True


@dataclass(slots=True)
class Repaired:
    """What `repair` (and each compaction operation) returns.

    ``messages`` has the input's shape: a list for a list, a request body dict (with its
    message list replaced) for a body. ``id_map`` maps every id toolpair rewrote to the
    id the history had, so a provider response naming a new id can be mapped back.
    """

    messages: Any
    fixes: list[Fix] = field(default_factory=list)
    id_map: dict[str, str] = field(default_factory=dict)
    provider: str = ""
    format: str = ""

    @property
    def changed(self) -> bool:
        return any(f.kind != "unrepaired" and f.kind != "prefix_binding" for f in self.fixes)

    @property
    def unrepaired(self) -> list[Fix]:
        return [f for f in self.fixes if f.kind == "unrepaired"]


class ToolpairError(Exception):
    """Base class of every error toolpair raises."""


class InvalidHistory(ToolpairError, ValueError):
    """The input is not a history toolpair can read. ``index`` names the message (None
    when the problem is the container itself)."""

    def __init__(self, message: str, index: int | None = None) -> None:
        where = f"message {index}: " if index is not None else ""
        super().__init__(f"{where}{message}")
        self.index = index
        self.reason = message


class HistoryError(ToolpairError):
    """Raised by `check` (and by `repair` in strict mode): the history breaks the
    provider's rules. ``violations`` lists every one."""

    def __init__(self, violations: Sequence[Violation], provider: str) -> None:
        self.violations = list(violations)
        self.provider = provider
        lines = "\n".join(f"  {v}" for v in self.violations)
        super().__init__(f"{len(self.violations)} violation(s) of the {provider} rules:\n{lines}")
