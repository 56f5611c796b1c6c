"""The no-op path for ``ModelMessage`` lists: one pass over the native messages that
answers "certainly valid" without decoding them (`PydanticAICodec.certainly_valid`).

Each checker mirrors, for the part kinds it accepts, what `PydanticAICodec.decode`
makes of a part and what the provider's rules then read; it returns True only where
those rules would find nothing, and None (the full path) for anything else: a part
kind it does not know, a builtin tool, an empty message, a context flag a rule reads.
Blank texts (a string or a ``TextContent``, empty or whitespace) send a history down the
full path on every provider: pydantic-ai sends the whitespace ones as text blocks, which
Anthropic's rules judge (`PydanticAICodec.sends_blank_text`), and valid histories hold
none, so refusing them all costs a valid history nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse, TextContent, ToolReturnPart

from toolpair.engine.fast import Frag
from toolpair.providers import Context

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+").fullmatch
_PORTABLE_ID = re.compile(r"[a-zA-Z0-9]{9}").fullmatch  # Mistral's, the strictest
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch

#: Outcomes the codec decodes as is_error (pydantic-ai's ``ERROR_OUTCOMES``).
_ERROR_OUTCOMES = frozenset({"failed", "retried"})
#: Pre-outcome 1.x releases have no error channel for a return.
_HAS_OUTCOME = "outcome" in {f.name for f in dataclasses.fields(ToolReturnPart)}
#: Request parts the codec decodes as neither a result nor a text (``other`` blocks):
#: on every supported provider they are plain content of the user turn.
_REQUEST_OTHER = frozenset({"system-prompt", "retry-feedback"})


def _empty(content: Any) -> bool:
    """Whether a return's content is empty (the codec's ``empty`` flag)."""
    if content is None:
        return True
    if isinstance(content, str):
        return not content or content.isspace()
    if isinstance(content, list | tuple | dict):
        return len(content) == 0
    return False


def _odd_parts(parts: Any) -> bool:
    """Parts the codec would not read as a sequence (it raises on them)."""
    return isinstance(parts, str) or not isinstance(parts, Sequence)


def _user_prompt_ok(part: Any) -> bool:
    """A user prompt whose text (if any) is not blank."""
    content = part.content
    if type(content) is str:
        return bool(content) and not content.isspace()
    if type(content) is not list and type(content) is not tuple:
        return False
    for c in content:
        if type(c) is TextContent:
            c = c.content
        if type(c) is str and (not c or c.isspace()):
            return False
    return True


def _request_part(part: Any, kind: str) -> str | None:
    """For a request part other than a tool return: the call id it answers (a
    tool-bound retry prompt), "" for plain user-turn content, None for anything
    unusual (an empty error result, a blank text, a kind the checkers do not know)."""
    if kind == "user-prompt":
        return "" if _user_prompt_ok(part) else None
    if kind in _REQUEST_OTHER:
        return ""
    if kind == "retry-prompt":
        if part.tool_name is None:
            # Sent as the text of model_response(), never blank for text content.
            return "" if type(part.content) is str else None
        # A tool-bound retry prompt is that call's result, sent with is_error.
        if _empty(part.content):
            return None
        i = part.tool_call_id
        return i if type(i) is str and i else None
    return None


# The loops below inline the common part kinds (returns, calls, texts): they run once
# per part of every request, and a call per part is most of what they would cost.


def anthropic(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Anthropic merges consecutive turns of one role (A11): the results answering an
    assistant turn's calls lead the next user turn, whatever the message boundaries.

    A fragment that is not first follows a user-side message, so its leading response
    opens a new assistant turn with nothing due, as it does here from the start."""
    if ctx.thinking is not None or ctx.tools is not None:
        return None
    request, response, valid_id = ModelRequest, ModelResponse, _ANTHROPIC_ID
    has_outcome, errors = _HAS_OUTCOME, _ERROR_OUTCOMES
    # Ids are unique conversation-wide: a fragment's must not be in an earlier one's.
    taken = frag.seen if frag is not None else ()
    thought = False
    seen: set[str] = set()
    calls: set[str] | None = None  # the calls of the current assistant turn
    remaining: set[str] | None = None  # results still due at the head of this user turn
    lead = False
    prev: type | None = None
    for m in msgs:
        cls = type(m)
        parts = m.parts
        if not parts or (type(parts) is not list and _odd_parts(parts)):
            return None
        if cls is response:
            if prev is not response:
                if remaining:
                    return None
                remaining = None
                prev = response
            for p in parts:
                k = p.part_kind
                if k == "tool-call":
                    i = p.tool_call_id
                    if type(i) is not str or i in seen or not valid_id(i) or i in taken:
                        return None
                    seen.add(i)
                    if calls is None:
                        calls = {i}
                    else:
                        calls.add(i)
                elif k == "text":
                    t = p.content
                    if calls is not None or type(t) is not str or not t or t.isspace():
                        return None
                elif k == "thinking":
                    thought = True
                else:
                    return None
        elif cls is request:
            if prev is not request:
                remaining = calls
                calls = None
                lead = True
                prev = request
            elif remaining and frag is not None:
                # Results spread over consecutive requests are valid, but once any
                # piece needs repair the full path moves them into the first one.
                return None
            for p in parts:
                k = p.part_kind
                if k == "tool-return":
                    if has_outcome and p.outcome in errors and _empty(p.content):
                        return None  # A9/B7: an error result with no content
                    i = p.tool_call_id
                else:
                    i = _request_part(p, k)
                    if i is None:
                        return None
                    if not i:
                        if remaining:
                            return None
                        lead = False
                        continue
                if not lead or remaining is None or i not in remaining:
                    return None
                remaining.discard(i)
        else:
            return None
    if remaining or calls is not None:
        return None
    if prev is response and (frag is None or frag.last):
        last = msgs[-1].parts[-1]
        # A10: the final assistant content may not end with whitespace.
        if last.part_kind == "text" and last.content[-1].isspace():
            return None
    if frag is not None and not frag.accept(seen, thought):
        return None
    return True


def openai(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """OpenAI Chat: every return is its own ``tool`` message, so the results of a
    response's calls are the returns right after it, up to the first other part
    (consecutive requests included); nothing else is checked across messages.

    OpenAI lets ids repeat across responses; a fragment reusing an earlier one's is
    still refused, which only sends that part of the history to the full path."""
    request, response = ModelRequest, ModelResponse
    taken = frag.seen if frag is not None else ()
    every: set[str] = set()
    thought = False
    pending: set[str] | None = None  # calls of the last response not answered yet
    run = False  # only results since the last response
    fresh = False  # no request since the last response
    for m in msgs:
        cls = type(m)
        parts = m.parts
        if not parts or (type(parts) is not list and _odd_parts(parts)):
            return None
        if cls is response:
            if pending:
                return None
            ids: set[str] | None = None
            for p in parts:
                k = p.part_kind
                if k == "tool-call":
                    i = p.tool_call_id
                    if type(i) is not str or not i or len(i) > 40 or i in taken:
                        return None
                    if ids is None:
                        ids = {i}
                    elif i in ids:
                        return None
                    else:
                        ids.add(i)
                elif k == "text":
                    t = p.content
                    if type(t) is not str or not t or t.isspace():
                        return None
                    if ids is not None and frag is not None:
                        return None  # valid, but a repair would put it before the calls
                elif k == "thinking":
                    thought = True
                else:
                    return None
            pending = ids
            if ids is not None and frag is not None:
                if not every.isdisjoint(ids):
                    return None
                every |= ids
            run = fresh = True
        elif cls is request:
            if pending and not fresh and frag is not None:
                return None  # as in `anthropic`: a repair would gather the results
            fresh = False
            for p in parts:
                k = p.part_kind
                if k == "tool-return":
                    i = p.tool_call_id
                else:
                    i = _request_part(p, k)
                    if i is None:
                        return None
                    if not i:
                        if pending:
                            return None
                        run = False
                        continue
                if not run or pending is None or i not in pending:
                    return None
                pending.discard(i)
        else:
            return None
    if pending:
        return False
    if frag is not None and not frag.accept(every, thought):
        return None
    return True


def portable(msgs: Sequence[Any], ctx: Context, frag: Frag | None = None) -> bool | None:
    """Valid on all six at once, in the one shape that is: requests and responses
    alternate from a request to a request; a response's calls (ids of nine
    alphanumerics, unique, after any text) are answered by the next request and
    nothing else is in it.

    A fragment that is not first follows a request, so it starts with a response; one
    that is not last ends with a request anyway, as a fragment ends before a response
    that follows one."""
    if (
        ctx.thinking is not None
        or ctx.tools is not None
        or ctx.tool_config is False
        or ctx.thought_signatures
        or ctx.tokenizer_version < 5
    ):
        return None
    request, response, valid_id, valid_name = ModelRequest, ModelResponse, _PORTABLE_ID, _NAME
    has_outcome, errors = _HAS_OUTCOME, _ERROR_OUTCOMES
    taken = frag.seen if frag is not None else ()
    thought = False
    seen: set[str] = set()
    pending: set[str] | None = None
    want: type = request if frag is None or frag.first else response
    for m in msgs:
        cls = type(m)
        if cls is not want:
            return None
        parts = m.parts
        if not parts or (type(parts) is not list and _odd_parts(parts)):
            return None
        if cls is request:
            for p in parts:
                k = p.part_kind
                if k == "tool-return":
                    if has_outcome and p.outcome in errors and _empty(p.content):
                        return None  # A9/B7: an error result with no content
                    i = p.tool_call_id
                else:
                    i = _request_part(p, k)
                    if i is None:
                        return None
                    if not i:
                        if pending is not None:
                            return None  # a results request holds nothing else
                        continue
                if pending is None or i not in pending:
                    return None
                pending.discard(i)
            if pending:
                return None
            pending = None
            want = response
        else:
            calls: set[str] | None = None
            spoke = reasoned = False
            for p in parts:
                k = p.part_kind
                if k == "tool-call":
                    i = p.tool_call_id
                    name = p.tool_name
                    if type(i) is not str or i in seen or not valid_id(i) or i in taken:
                        return None
                    if type(name) is not str or not valid_name(name):
                        return None
                    seen.add(i)
                    if calls is None:
                        calls = {i}
                    else:
                        calls.add(i)
                elif k == "text":
                    t = p.content
                    if calls is not None or type(t) is not str or not t or t.isspace():
                        return None
                    spoke = True
                elif k == "thinking":
                    thought = reasoned = True
                else:
                    return None
            if calls is not None and spoke and not reasoned:
                return None  # Bedrock's strict set: no text beside tool use
            pending = calls
            want = request
    if want is not response:
        return False
    if frag is not None and not frag.accept(seen, thought):
        return None
    return True


CHECKERS = {"anthropic": anthropic, "openai": openai, "portable": portable}
