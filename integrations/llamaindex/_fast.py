"""The no-op path for LlamaIndex histories: one pass over the ``ChatMessage`` objects
that says "certainly valid" without decoding them (see ``toolpair.engine.fast``).

Repair runs before every request and nearly every history is already valid, so this
pass is what a request normally pays. Each checker mirrors what `LlamaIndexCodec.decode`
makes of a message and what the provider's rules then check, and gives up (None: the
full path) on anything it does not model exactly: block types other than text, media,
signed thinking and ToolCallBlock (matched by exact class, so a subclass goes the full
path), context the rules read, anything decode would reject. Where it is stricter than
the rules (a user message between results) it only costs a full pass. Blank text in a
user or assistant message always goes the full path: the formatter sends a
whitespace-only TextBlock, which A10 judges (an empty one it drops: refusing that too
is only stricter).

For Anthropic it also gives up where `repair_messages` would rewrite a call for the
Anthropic converter (string arguments, OpenAI-shaped ``additional_kwargs`` calls), so
that one pass answers both questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.llms import types as _types
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from toolpair.engine.fast import Frag, anthropic_ids_ok, blank
from toolpair.providers import Context

_OPENAI_ID_MAX = 40

_SYSTEM, _USER, _ASSISTANT, _TOOL = range(4)

#: MessageRole -> the side of the conversation the codec puts it on (its _ROLES). A
#: MessageRole is a str enum, so it hashes and compares as its value.
_SIDE: dict[Any, int] = {
    MessageRole.SYSTEM: _SYSTEM,
    MessageRole.DEVELOPER: _SYSTEM,
    MessageRole.USER: _USER,
    MessageRole.ASSISTANT: _ASSISTANT,
    MessageRole.CHATBOT: _ASSISTANT,
    MessageRole.MODEL: _ASSISTANT,
    MessageRole.TOOL: _TOOL,
    MessageRole.FUNCTION: _TOOL,
}

_CALL: Any = getattr(_types, "ToolCallBlock", None)  # llama-index-core >= 0.14.5
_THINKING: Any = getattr(_types, "ThinkingBlock", None)  # llama-index-core >= 0.14.3

_MEDIA_NAMES = ("ImageBlock", "AudioBlock", "VideoBlock", "DocumentBlock")

#: The block classes the codec reads as media ("image" blocks): no rule looks inside
#: them, they only count as content.
_MEDIA: frozenset[Any] = frozenset(
    cls for cls in (getattr(_types, n, None) for n in _MEDIA_NAMES) if cls is not None
)

#: Blocks the OpenAI rules never read (only calls and results matter there).
_OPENAI_CONTENT: frozenset[Any] = _MEDIA | {TextBlock, _THINKING} - {None}

_ANTHROPIC_LEGACY_KEYS = frozenset({"id", "input", "name"})


def _result_id(m: Any) -> Any:
    kwargs = m.additional_kwargs
    return kwargs["tool_call_id"] if "tool_call_id" in kwargs else kwargs.get("call_id")


def side(m: Any) -> str:
    """``"a"`` for a message the codec puts on the assistant side, ``"u"`` for any other
    (system messages included: Anthropic leaves them out of its turns, so an assistant
    message after one either starts a turn or continues one whose calls, in a fragment
    found clean, are all answered already)."""
    return "a" if _SIDE.get(m.role) == _ASSISTANT else "u"


def anthropic(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """The Anthropic rules read merged turns (system messages left out): every call of
    an assistant turn answered by the tool messages leading the next user turn, ids
    unique and well formed, no content after a call, no trailing whitespace at the end.

    A fragment that is not first starts a new assistant turn, or continues one whose
    earlier part made no call (a clean fragment leaves none unanswered), so the same
    pass holds for it; only the trailing-whitespace rule is about the last message."""
    if ctx.thinking is not None or ctx.tools is not None:
        return None
    seen: set[str] = set()
    thought = False
    calls: list[str] | None = None  # the calls of the current assistant turn
    # Results still due at the head of this user turn; a user message may only come
    # once it is empty, so a result after one is unexpected.
    remaining: set[str] | None = None
    turn = -1
    for m in msgs:
        if type(m) is not ChatMessage and not isinstance(m, ChatMessage):
            return None
        side = _SIDE[m.role]
        if side == _SYSTEM:
            if frag is not None and (calls is not None or remaining):
                # Valid for Anthropic, which leaves system messages out, but the full
                # repair moves the results up to their call wherever it repairs
                # anything, and a piece without violations is left as it is: no piece
                # can give the full path's answer, so the whole history takes it.
                raise ValueError("a system message between a call and its results")
            continue
        if side == _ASSISTANT:
            if turn != _ASSISTANT:
                if remaining:
                    return None
                remaining = None
                turn = _ASSISTANT
            has_block_call = False
            for b in m.blocks:
                t = type(b)
                if t is TextBlock:
                    text = b.text
                    if calls is not None or type(text) is not str or not text or text.isspace():
                        return None
                elif t is _CALL:
                    i = b.tool_call_id
                    if type(i) is not str or i in seen:
                        return None
                    if type(b.tool_kwargs) is not dict:
                        return None  # repair_messages would turn it into an object
                    seen.add(i)
                    has_block_call = True
                    if calls is None:
                        calls = [i]
                    else:
                        calls.append(i)
                elif t is _THINKING:
                    info = b.additional_information
                    sig = info.get("signature") if isinstance(info, Mapping) else None
                    if type(sig) is not str or not sig:
                        return None
                    thought = True
                elif t not in _MEDIA or calls is not None:
                    return None
            if not has_block_call:
                legacy = m.additional_kwargs.get("tool_calls")
                if legacy:
                    if type(legacy) is not list and type(legacy) is not tuple:
                        return None
                    for e in legacy:
                        # Only the Anthropic-shaped dicts the converter sends as they are.
                        if type(e) is not dict or not e.keys() >= _ANTHROPIC_LEGACY_KEYS:
                            return None
                        i = e["id"]
                        if type(i) is not str or i in seen:
                            return None
                        seen.add(i)
                        if calls is None:
                            calls = [i]
                        else:
                            calls.append(i)
            continue
        if turn != _USER:
            remaining = set(calls) if calls is not None else None
            calls = None
            turn = _USER
        if side == _TOOL:
            kwargs = m.additional_kwargs
            i = kwargs["tool_call_id"] if "tool_call_id" in kwargs else kwargs.get("call_id")
            if remaining is None or type(i) is not str or i not in remaining:
                return None
            remaining.discard(i)
            if kwargs.get("is_error") is True:
                # A9: an error result needs content (the codec's _result_empty).
                for b in m.blocks:
                    if b.block_type != "text" or b.text.strip():
                        break
                else:
                    return None
        else:
            if remaining:
                return None  # results due behind other content, or never given
            for b in m.blocks:
                t = type(b)
                if t is TextBlock:
                    if blank(b.text):
                        return None
                elif t not in _MEDIA:
                    return None
    if remaining or calls is not None or not anthropic_ids_ok(seen):
        return None
    if frag is not None:
        # Ids are unique conversation-wide; ``seen`` is shared by every fragment.
        if not frag.accept(seen, thought):
            return None
        if not frag.last:
            return True
    if turn == _ASSISTANT:
        # A10: the last item of the final assistant turn may not end in whitespace.
        for m in reversed(msgs):
            side = _SIDE[m.role]
            if side == _SYSTEM:
                continue
            if side != _ASSISTANT:
                break
            blocks = m.blocks
            if blocks:
                b = blocks[-1]
                if type(b) is TextBlock and b.text != b.text.rstrip():
                    return None
                break
    return True


def openai(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """OpenAI Chat reads one turn per message: an assistant message's calls, ids
    unique, 1-40 characters, answered by the tool messages right after it, and no
    other tool message anywhere.

    No rule there is about the first or last message, so a fragment is checked as a
    whole history is; it is refused only where it shares an id with another one (or
    repeats one itself), which the pieces could not tell apart."""
    pending: set[str] | None = None  # calls of the last assistant message not yet answered
    # Every call id of the fragment (all answered once it is found clean).
    answered: list[str] | None = [] if frag is not None else None
    thought = False
    for m in msgs:
        if type(m) is not ChatMessage and not isinstance(m, ChatMessage):
            return None
        side = _SIDE[m.role]
        if side == _TOOL:
            i = _result_id(m)
            if not pending or type(i) is not str or i not in pending:
                return None
            pending.discard(i)
            if frag is not None and m.additional_kwargs.get("is_error") is True:
                for b in m.blocks:
                    if b.block_type != "text" or b.text.strip():
                        break
                else:
                    # OpenAI takes an empty error result, but the full repair fills it
                    # wherever it repairs anything, and a piece without violations is
                    # left as it is: no piece can give the full path's answer.
                    raise ValueError("an empty error result")
            continue
        if pending:
            return None
        pending = None
        if side != _ASSISTANT:
            continue
        ids: list[str] | None = None
        for b in m.blocks:
            t = type(b)
            if t is _CALL:
                i = b.tool_call_id
                if type(i) is not str or not i or len(i) > _OPENAI_ID_MAX:
                    return None
                if ids is None:
                    ids = [i]
                else:
                    ids.append(i)
            elif t is _THINKING:
                thought = True
            elif t not in _OPENAI_CONTENT:
                return None
        if ids is None:
            legacy = m.additional_kwargs.get("tool_calls")
            if legacy:
                if type(legacy) is not list and type(legacy) is not tuple:
                    return None
                ids = []
                for e in legacy:
                    i = e.get("id") if isinstance(e, Mapping) else e.id
                    if type(i) is not str or not i or len(i) > _OPENAI_ID_MAX:
                        return None
                    ids.append(i)
        if ids:
            pending = set(ids)
            if len(pending) != len(ids):
                return None
            if answered is not None:
                answered += ids
    if pending:
        return False
    if frag is not None and answered is not None and not frag.accept(answered, thought):
        return None
    return True


def certainly_valid(
    msgs: Sequence[Any], provider: str, ctx: Context, frag: Frag | None = None
) -> bool | None:
    """True only where ``provider``'s rules would find nothing in ``msgs`` (and, for
    Anthropic, where `repair_messages` would rewrite no call); None: the full path.

    With ``frag``, ``msgs`` is that fragment of a longer history (`toolpair.engine.chunked`).
    A fragment holding something no rule rejects but the full repair still rewrites
    (it does so wherever it repairs anything) raises ValueError: pieces that leave it
    as it is could not give the full path's answer, and the error makes the whole
    history take that path; so does a fragment for a provider without a checker."""
    if provider == "anthropic":
        return anthropic(msgs, ctx, frag)
    if provider == "openai":
        return openai(msgs, ctx, frag)
    if frag is not None:
        # No checker here: refusing each fragment would have every one decoded and
        # repaired, then the whole history again on the full path. The error ends
        # the piece path at its first check.
        raise ValueError(f"no fragment checker for {provider}")
    return None
