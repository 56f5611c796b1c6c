"""The no-op checkers of every codec that reads a skeleton (`Codec.skeleton`): one per
rule family, so that a framework's codec reads its messages once and gets every
provider's no-op path.

A skeleton holds what pairing reads of each message (its role, its blocks' kinds, call
and result ids, a text's text, a call's name, an error result with nothing in it). Each
checker returns True only where the full rules of every profile that names it
(`Profile.checker`) would find nothing in what the codec decodes, and None otherwise:
it accepts one canonical shape (no system message inside a pair; each group of calls
answered by exactly its results right after it, results first; nothing a rule reads
context for) and gives up on anything else, which the full path then judges.
tests/core/test_properties.py holds every checker to that over every wire format and
provider profile; each framework's tests hold its skeleton to its decode.

A wire format keeps its own checkers (`toolpair.formats`): they read the dicts in place,
which costs less than building a skeleton first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from toolpair._model import Bone, Context, Frag, Message, Skeleton
from toolpair.formats import anthropic_ids_ok

__all__ = ["CHECKERS", "Bone", "Skeleton", "check", "from_view"]

#: ``(skeleton, ctx, frag) -> True`` (certainly valid) or None (the full path).
SkeletonChecker = Callable[[Skeleton, Context, "Frag | None"], "bool | None"]

_MISTRAL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch
_BEDROCK_MEDIA = frozenset({"image", "document:pdf"})


class Whole(ValueError):
    """Raised while checking a fragment of a longer history where only the full path
    gives the right answer: the full path rewrites what it repairs as a whole (it moves
    a system message out from between a call and its results, drops an empty message,
    fills in an empty error result) though a provider's rules may find nothing wrong
    with them, while pieces leave every clean exchange untouched. `toolpair.engine.chunked`
    takes a ValueError as "the full path"."""


#: A block the skeleton checkers do not model.
_OTHER: Bone = ("other", None, None)


def from_view(messages: Sequence[Message]) -> Skeleton:
    """The skeleton of a decoded history: what a codec's ``skeleton`` must give for the
    native messages ``messages`` were decoded from."""
    out: Skeleton = []
    for m in messages:
        bones: list[Bone] = []
        for b in m.blocks:
            k = b.kind
            native = b.native
            if k == "text":
                bones.append(
                    ("text", None, b.text) if b.text is not None else ("other", None, None)
                )
            elif k == "call" or k == "result":
                odd = (
                    b.id is None
                    or b.missing_id
                    or b.toolset is not None
                    or (k == "result" and b.item_id is not None)
                    or b.sub == "program"
                    or (isinstance(native, dict) and "caller" in native)
                    or (k == "result" and _bad_bedrock_json(native))
                )
                if odd:
                    bones.append(_OTHER)
                elif k == "call":
                    # A secondary id (a Responses item id, a Gemini thought signature)
                    # is read by those families' rules only.
                    bones.append(("item_call" if b.item_id is not None else "call", b.id, b.name))
                else:
                    bones.append(("result", b.id, b.is_error and b.empty))
            elif k == "image":
                bones.append(("image", None, b.sub))
            elif k == "thinking":
                # Whether it carries the signature an Anthropic thinking block needs.
                bones.append(("thinking", None, b.sub != "thinking" or _signed(native)))
            else:
                bones.append((k, None, None))
        out.append((m.role, bones))
    return out


def _signed(native: Any) -> bool:
    sig = native.get("signature") if isinstance(native, dict) else None
    return isinstance(sig, str) and bool(sig)


def _bad_bedrock_json(native: Any) -> bool:
    """A Bedrock result holding a json part (B11 reads its content): not modelled."""
    if not isinstance(native, dict) or not isinstance(native.get("toolResult"), dict):
        return False
    parts = native["toolResult"].get("content")
    return isinstance(parts, list) and any(isinstance(p, dict) and "json" in p for p in parts)


# -- the canonical shape every checker starts from ---------------------------------


def _canonical(
    sk: Skeleton,
    ctx: Context,
    frag: Frag | None,
    thinking_ok: bool,
    lenient: bool = False,
    flags_empty: bool = False,
    item_calls_ok: bool = False,
    solid: bool = False,
    name_max: int = 0,
    signed: bool = False,
    merges: bool = False,
) -> tuple[list[str], bool] | None:
    """The call ids of a history in the canonical shape, and whether it holds thinking;
    None where it is not in that shape.

    The shape: no empty message; no system message between calls and their results; an assistant
    message's calls come after its other blocks, and nothing but a user-side message
    follows a message with calls (Responses items: further calls may, one per item);
    right after them come exactly their results, each id once, before anything else on
    the user side (``tool`` messages holding one result each, or results leading a user
    message); no other result anywhere; call ids unique, non-empty strings; no block
    kind beyond text, image, call and result (and thinking where ``thinking_ok``), but
    for blocks no rule reads inside (``other``) on the user side.
    ``lenient`` (OpenAI Chat, whose rules read neither): an id may come back in a later
    turn, and an error result may be empty (not in a piece: see `Whole`).
    ``item_calls_ok`` (OpenAI Chat and Mistral): calls may carry a secondary id, and
    Responses reasoning items sit among the assistant's, as neither family reads them.
    What most families add is read in the same pass, as it costs a pass of its own
    otherwise: ``solid``, no empty or whitespace-only text (Anthropic A10, Bedrock,
    Gemini); ``name_max``, no call name longer (Anthropic's 200); ``signed``, every
    thinking block carries its signature (Anthropic); ``merges``, consecutive assistant
    messages are one turn, so further calls may follow calls (Anthropic A11)."""
    piece = frag is not None
    once = piece or not lenient
    items = ctx.shape == "items"
    ids: list[str] = []
    seen: set[str] = set()
    due: set[str] = set()
    run = -1  # where the current assistant run's calls start in ``ids`` (-1: none yet)
    thought = False
    for role, bones in sk:
        if not bones:
            if piece:
                raise Whole
            if not lenient or due or (run >= 0 and len(ids) > run):
                # An empty message (Gemini G6, Mistral, Anthropic), or one between calls
                # and their results (OpenAI Chat's results must follow their call).
                return None
        if role == "system":
            if solid and not _solid(bones):
                return None
            if due or (run >= 0 and len(ids) > run):
                # Between calls and their results: valid where the system prompt is
                # lifted out, but the full path moves it (see `Whole`).
                if piece:
                    raise Whole
                return None
            continue
        if role == "assistant":
            if due:
                return None
            calling = run >= 0 and len(ids) > run
            if calling and not items and not merges:
                return None  # calls not answered right after their message
            if run < 0:
                run = len(ids)
                if not once:
                    seen = set()
            for kind, i, extra in bones:
                if kind == "call" or kind == "item_call":
                    if kind == "item_call" and not item_calls_ok:
                        return None
                    if type(i) is not str or not i or i in seen:
                        return None
                    if (
                        name_max
                        and extra is not None
                        and (type(extra) is not str or len(extra) > name_max)
                    ):
                        return None
                    seen.add(i)
                    ids.append(i)
                    calling = True
                elif calling:
                    if kind != "thinking" or not thinking_ok or (signed and not extra):
                        return None  # content after a call of its turn
                    if piece:
                        raise Whole  # valid, but the full path may move it (`Whole`)
                    thought = True  # thinking after a call: no rule reads its place
                elif kind == "text":
                    if solid and (type(extra) is not str or not extra or extra.isspace()):
                        return None
                elif kind == "thinking":
                    if not thinking_ok or (signed and not extra):
                        return None
                    thought = True
                elif kind == "reasoning":
                    if not item_calls_ok:
                        return None  # a Responses reasoning item: OpenAI Chat's rules skip it
                elif kind != "image":
                    return None
            continue
        # The user side: the results due first, then anything but results.
        if run >= 0:
            due = set(ids[run:])
            run = -1
        tool = role == "tool"
        if tool and len(bones) != 1:
            return None
        for kind, i, extra in bones:
            if kind == "result":
                if i not in due:
                    return None
                due.discard(i)
                if extra:
                    # An error result with no content: where the family's rules report
                    # it, its piece is repaired like the whole; where they do not, the
                    # full path still fills it in.
                    if flags_empty or not (lenient or piece):
                        return None
                    if piece:
                        raise Whole
            elif due or tool:
                return None
            elif kind == "text":
                if solid and (type(extra) is not str or not extra or extra.isspace()):
                    return None
            elif kind != "image" and kind != "other":
                # Content no rule reads inside (a framework's system prompt part, a
                # block type this library does not know) is content of the turn all
                # the same: it comes after the results, as text does.
                return None
    if due or (run >= 0 and len(ids) > run):
        return None
    return ids, thought


def _accept(frag: Frag | None, ids: list[str], thought: bool) -> bool | None:
    if frag is not None and not frag.accept(ids, thought):
        return None
    return True


# -- what each rule family adds to the canonical shape -------------------------------


def _solid(bones: list[Bone]) -> bool:
    """No empty or whitespace-only text among a message's blocks."""
    for kind, _, extra in bones:
        if kind == "text" and (type(extra) is not str or not extra or extra.isspace()):
            return False
    return True


def _turns(sk: Skeleton, shape: str) -> list[tuple[str, list[Bone]]]:
    """The turns of `toolpair._view.turns` with ``merge="tool"`` (Bedrock's and Gemini's
    formatters batch results sent as separate ``tool`` messages; nothing else merges)."""
    out: list[tuple[str, list[Bone]]] = []
    from_tool = False
    for role, bones in sk:
        if role == "system":
            continue
        side = "assistant" if role == "assistant" else "user"
        tool = role == "tool"
        if (
            out
            and out[-1][0] == side
            and ((tool and from_tool) or (shape == "items" and not tool and not from_tool))
        ):
            out[-1][1].extend(bones)
            continue
        out.append((side, list(bones)))
        from_tool = tool
    return out


def _anthropic(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    # With thinking on or off, rules read where thinking sits: the full path's.
    # Texts, call names and signatures were read by the canonical pass (`_family`).
    if ctx.thinking is not None or ctx.tools is not None or not anthropic_ids_ok(ids):
        return False
    if ctx.format == "anthropic" and any(m[0] == "system" for m in sk):
        return False  # the wire format sends system messages inside ``messages``
    if frag is None or frag.last:
        # The final assistant turn may not end in trailing whitespace (A8).
        for role, bones in reversed(sk):
            if role != "system":
                kind, _, extra = bones[-1]
                if role == "assistant" and kind == "text" and extra != extra.rstrip():
                    return False
                break
    return True


def _openai(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    # DeepSeek's thinking mode wants reasoning passed back: the full path reads it.
    return not ctx.thinking and all(len(i) <= 40 for i in ids)


def _zhipu(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    # GLM refuses a list with no user message (zhipu Z2); a piece without one asks the
    # full path, which sees the whole history.
    return _openai(sk, ctx, frag, ids) and any(m[0] == "user" for m in sk)


def _moonshot_thinking(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    # K1 reads ``reasoning_content`` off the wire body, which a skeleton does not keep:
    # a wire body in thinking mode asks the full path.
    return ctx.format != "openai" and _openai(sk, ctx, frag, ids)


def _mistral(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    if ctx.tokenizer_version < 5 or not sk:
        return False
    for i in ids:
        if len(i) != 9 or not i.isascii() or not i.isalnum():
            return False
    after_results = False
    prev = "system"
    for role, bones in sk:
        if role == "system" and prev not in ("system", "user"):
            return False  # M4: a system message after an assistant or tool one
        prev = "tool" if role == "tool" or any(k == "result" for k, _, _ in bones) else role
        results = sum(1 for kind, _, _ in bones if kind == "result")
        if results and results != len(bones):
            return False  # a tool turn then a user turn in the chat view (M4)
        if after_results and role != "assistant" and not results:
            return False  # only a tool or an assistant message follows a tool one
        after_results = results > 0
        for kind, _, extra in bones:
            if kind == "call" and (type(extra) is not str or not _MISTRAL_NAME(extra)):
                return False
    if (frag is None or frag.first) and sk[0][0] not in ("user", "system"):
        return False
    if frag is None or frag.last:
        role, bones = sk[-1]
        if role not in ("user", "tool"):
            return False  # a prefixed assistant message is the full path's
    return True


def _responses(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    if ctx.previous_response_id is not None or ctx.store is False:
        return False
    return all(len(i) <= 64 for i in ids)


def _gemini_family(
    sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str], results_only: bool, ids_ok: bool
) -> bool:
    if ctx.thought_signatures:
        return False
    if ids and not ids_ok and ctx.format == "gemini":
        return False  # only the wire body shows that an id is sent (Vertex v1)
    # A call turn follows a user turn (G3; a later piece follows a user-side turn), and
    # the turn right after it holds every response.
    prev = "model" if frag is None or frag.first else "user"
    due = 0
    for side, bones in _turns(sk, ctx.shape):
        calls = sum(1 for kind, _, _ in bones if kind == "call")
        results = sum(1 for kind, _, _ in bones if kind == "result")
        if results != due:
            return False
        if results_only and results and results != len(bones):
            return False  # a response turn holds nothing else (Vertex v1)
        if calls and prev == "model":
            return False
        due = calls
        prev = "model" if side == "assistant" else "user"
    return due == 0


def _bedrock_family(
    sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str], calls_only: bool, media: bool
) -> bool:
    if ctx.thinking:
        return False
    if not anthropic_ids_ok(ids) or (ids and max(map(len, ids)) > 64):
        return False
    if ids and ctx.tool_config is False:
        return False
    # The first turn is a user one (B5); a later piece follows a user-side turn. Turns
    # alternate; a turn answering calls holds their results only (B3), or beside them
    # on Claude 4 text, images and PDFs.
    prev = "assistant" if frag is None or frag.first else "user"
    due = 0
    for side, bones in _turns(sk, ctx.shape):
        if side == prev:
            return False
        prev = side
        calls = results = 0
        spoken = thought = False
        for kind, _, extra in bones:
            if kind == "call":
                calls += 1
            elif kind == "result":
                results += 1
            elif kind == "thinking":
                thought = True  # only the portable checker lets thinking through
            else:
                spoken = True
                beside = media and (kind == "text" or (kind == "image" and extra in _BEDROCK_MEDIA))
                if side == "user" and due and not beside:
                    return False
        if results != due:
            return False
        if side == "assistant" and calls_only and calls and spoken and not thought:
            return False  # text beside tool use (Llama, Mistral behind Converse; B3)
        due = calls
    return True


_Extra = Callable[[Skeleton, Context, "Frag | None", list[str]], bool]


def _family(
    extra: _Extra,
    thinking_ok: bool = False,
    lenient: bool = False,
    flags_empty: bool = False,
    item_calls_ok: bool = False,
    solid: bool = False,
    name_max: int = 0,
    signed: bool = False,
    merges: bool = False,
) -> SkeletonChecker:
    def checker(sk: Skeleton, ctx: Context, frag: Frag | None = None) -> bool | None:
        got = _canonical(
            sk,
            ctx,
            frag,
            thinking_ok,
            lenient,
            flags_empty,
            item_calls_ok,
            solid,
            name_max,
            signed,
            merges,
        )
        if got is None or not extra(sk, ctx, frag, got[0]):
            return None
        return _accept(frag, *got)

    return checker


_anthropic_family = _family(
    _anthropic,
    thinking_ok=True,
    flags_empty=True,
    solid=True,
    name_max=200,
    signed=True,
    merges=True,
)


def _anthropic_checker(sk: Skeleton, ctx: Context, frag: Frag | None = None) -> bool | None:
    # A framework's system messages go to the top-level system prompt, wherever they
    # sit: Anthropic's turns leave them out. (A piece keeps them: see `Whole`.)
    if frag is None and ctx.format != "anthropic":
        sk = [m for m in sk if m[0] != "system"]
    return _anthropic_family(sk, ctx, frag)


#: The strictest of the Gemini and Bedrock families (also in the portable checker).
_VERTEX: _Extra = partial(_gemini_family, results_only=True, ids_ok=False)
_BEDROCK: _Extra = partial(_bedrock_family, calls_only=True, media=False)

#: The portable profile's rules are every API's at once: so is its checker.
_PORTABLE: tuple[_Extra, ...] = (
    _anthropic,
    _openai,
    _zhipu,
    _mistral,
    _responses,
    _VERTEX,
    _BEDROCK,
)


def _portable(sk: Skeleton, ctx: Context, frag: Frag | None, ids: list[str]) -> bool:
    return all(extra(sk, ctx, frag, ids) for extra in _PORTABLE)


#: The checkers by `Profile.checker`: one per rule family, with its hosts' variants.
CHECKERS: dict[str, SkeletonChecker] = {
    "anthropic": _anthropic_checker,
    "openai": _family(_openai, thinking_ok=True, lenient=True, item_calls_ok=True),
    "moonshot-thinking": _family(_moonshot_thinking, thinking_ok=True, lenient=True),
    "zhipu": _family(_zhipu, thinking_ok=True, lenient=True),
    "mistral": _family(_mistral, item_calls_ok=True),
    "openai-responses": _family(_responses),
    # Outputs right after the group of calls they answer: the canonical shape already.
    "deepseek-responses": _family(_responses),
    "gemini": _family(partial(_gemini_family, results_only=False, ids_ok=True), solid=True),
    "vertex": _family(_VERTEX, solid=True),
    "vertex-ids": _family(partial(_gemini_family, results_only=True, ids_ok=True), solid=True),
    "bedrock": _family(_BEDROCK, flags_empty=True, solid=True),
    "bedrock-claude": _family(
        partial(_bedrock_family, calls_only=False, media=False), flags_empty=True, solid=True
    ),
    "bedrock-claude4": _family(
        partial(_bedrock_family, calls_only=False, media=True), flags_empty=True, solid=True
    ),
    "portable": _family(
        _portable, thinking_ok=True, flags_empty=True, solid=True, name_max=200, signed=True
    ),
}


def check(sk: Skeleton, checker: str, ctx: Context, frag: Frag | None = None) -> bool | None:
    """True only where the full rules of the profiles whose checker is named ``checker``
    find nothing in the history ``sk`` is the skeleton of."""
    family = CHECKERS.get(checker)
    return None if family is None else family(sk, ctx, frag)
