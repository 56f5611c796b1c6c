"""The public entry points: validate, repair, check."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from toolpair import events
from toolpair._model import (
    Codec,
    HistoryError,
    InvalidHistory,
    Message,
    Policy,
    Repaired,
    Violation,
)
from toolpair.engine import chunked, passes, pause
from toolpair.engine.coverage import NothingJudged, guard
from toolpair.engine.fast import certainly_valid
from toolpair.engine.named import named
from toolpair.formats import detect, get_codec, thinking_on
from toolpair.providers import Context, Profile, get_profile

logger = logging.getLogger("toolpair")

_CONTEXT_KEYS = frozenset(
    {
        "thinking",
        "tool_config",
        "previous_response_id",
        "store",
        "thought_signatures",
        "tokenizer_version",
        "tools",
        "signature_models",
        "api_version",
    }
)


@dataclass(slots=True)
class Parsed:
    """A history read once, and how to put a result back. The messages are decoded on
    first use: the no-op path never needs them."""

    body: Mapping[str, Any] | None
    key: str
    raw: Sequence[Any]
    codec: Codec
    profile: Profile
    ctx: Context
    _messages: list[Message] | None = None

    @property
    def messages(self) -> list[Message]:
        if self._messages is None:
            self._messages = self.profile.prepare(self.codec.decode(self.raw))
        return self._messages

    def certainly_valid(self) -> bool:
        if not self.profile.fast_path:
            return False
        return certainly_valid(self.codec, self.profile.checker, self.raw, self.ctx)

    def violations(self) -> list[Violation]:
        if self.certainly_valid():
            return []
        with pause.paused():
            return self.profile.rules(self.messages, self.ctx)


@dataclass(slots=True)
class Transcripts:
    """Formats that are not message lists but an agent's session files, read by a layer
    above (`toolpair.sessions`). The facade (`toolpair`) fills this in, so that parsing
    imports nothing of that layer."""

    #: The ``format=`` names of session files.
    names: tuple[str, ...] = ()
    #: ``read(name, parsed_file) -> (wire messages, wire format name)``.
    read: Callable[[str, Any], tuple[list[Any], str]] | None = None
    #: ``hint(head) -> (agent, format name) | None``: a list no codec explains that
    #: looks like an agent's session file.
    hint: Callable[[list[Any]], tuple[str, str] | None] | None = None


TRANSCRIPTS = Transcripts()


def parse(
    history: Any,
    provider: str,
    format: str | Codec | None,
    context: Mapping[str, Any],
    model: str | None = None,
) -> Parsed:
    unknown = set(context) - _CONTEXT_KEYS
    if unknown:
        raise TypeError(f"unknown context keyword(s): {', '.join(sorted(unknown))}")
    if model is None and isinstance(history, Mapping):
        # A request body names its model: its family's rules are the exact ones.
        given = history.get("model", history.get("modelId"))
        model = given if isinstance(given, str) else None
    if isinstance(format, str) and format in TRANSCRIPTS.names and TRANSCRIPTS.read:
        # An agent's session file: the wire messages its agent sends on resume.
        history, format = TRANSCRIPTS.read(format, history)
    codec = get_codec(format if format is not None else detect(history, provider))
    # A named model is held only to the rules the evidence grants it (do no harm), and
    # to those its framework's formatter needs kept.
    profile = (
        get_profile(provider) if model is None else named(provider, model, codec.keeps(provider))
    )
    if format is None and codec.skips_unknown and not isinstance(history, Mapping):
        _judged_guard(history, codec.name)
    body: Mapping[str, Any] | None = None
    key = ""
    ctx_values: dict[str, Any] = {}
    if isinstance(history, Mapping):
        body = history
        key = codec.body_key
        if key not in body:
            raise InvalidHistory(f"request body has no {key!r} list")
        raw = body[key]
        ctx_values.update(codec.body_context(body))
    else:
        raw = history
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise InvalidHistory(f"history must be a list of messages, not {type(raw).__name__}")
    ctx_values.update(context)
    ctx_values.update(codec.implied_context(context))
    ctx = Context(shape=codec.shape, format=codec.name, model=model, **ctx_values)
    ctx.sends_blank = partial(codec.sends_blank_text, provider=provider)
    if isinstance(ctx.thinking, Mapping):
        ctx.thinking = thinking_on(ctx.thinking)
    return Parsed(body, key, raw, codec, profile, ctx)


def _judged_guard(history: Any, fmt: str) -> None:
    """Refuse a detected format that explains nothing of the list: rules would skip
    every unknown item, and ``valid`` would be said about what was never read. (The
    command line also refuses a list it explains almost nothing of.)"""
    try:
        guard(history, fmt, almost=False)
    except NothingJudged as e:
        head = list(history[:20]) if isinstance(history, list | tuple) else []
        hint = TRANSCRIPTS.hint
        named = hint(head) if hint is not None else None
        if named is not None:
            agent, name = named
            raise NothingJudged(
                e.coverage,
                fmt,
                f"; it looks like a {agent} transcript: pass format={name!r}",
            ) from None
        raise


def validate(
    history: Any,
    provider: str,
    *,
    model: str | None = None,
    format: str | Codec | None = None,
    **context: Any,
) -> list[Violation]:
    """Everything ``provider`` would reject in ``history``, in its own words.

    ``history`` is a wire-format message list or a whole request body (the format is
    detected; ``format=`` forces it, or names a framework codec). Context a rule needs
    (``thinking``, ``tool_config``, ``previous_response_id``, ``store``, ``tools``,
    ``thought_signatures``, ``tokenizer_version``) is read from a body or passed here;
    ``signature_models`` (``{thought signature: model that produced it}``) and
    ``api_version`` (the ``anthropic-version`` header the request goes out with) only here.

    ``model`` (the id as the user writes it: ``claude-sonnet-4-5``,
    ``us.anthropic.claude-3-5-haiku-20241022-v1:0``, ``gemini-3-pro``) applies that
    model family's own rules. Without it, or for an id that cannot be placed, the
    strictest rules of any model behind that API apply.
    """
    return parse(history, provider, format, context, model).violations()


def check(
    history: Any,
    provider: str,
    *,
    model: str | None = None,
    format: str | Codec | None = None,
    **context: Any,
) -> None:
    """Raise `HistoryError` listing every violation; return None when there are none."""
    violations = validate(history, provider, model=model, format=format, **context)
    if violations:
        raise HistoryError(violations, provider)


def _shaped(p: Parsed, messages: list[Any]) -> Any:
    if p.body is None:
        return messages
    out = dict(p.body)
    out[p.key] = messages
    return out


def repair(
    history: Any,
    provider: str,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    format: str | Codec | None = None,
    **context: Any,
) -> Repaired:
    """A copy of ``history`` that ``provider`` accepts, built at read time.

    The input is never mutated; messages repair did not touch are the same objects in
    the result. Every change is a `Fix` on the result, and one WARNING on the
    ``toolpair`` logger sums them up. What has no truthful repair is reported as an
    ``unrepaired`` fix, never silently sent.
    """
    started = events.clock()
    policy = policy or Policy()
    p = parse(history, provider, format, context, model)
    if p.certainly_valid():
        return Repaired(_shaped(p, list(p.raw)), [], {}, provider, p.codec.name)
    rules: list[str] = []  # the codes behind the fixes, for the event
    with pause.paused():
        pieces = (
            None
            if policy.strict
            else chunked.repair(p.raw, p.codec, p.profile, policy, p.ctx, rules=rules)
        )
        if pieces is not None:
            natives, fixes, id_map = pieces
            left: list[Violation] = []  # the assembled pieces are certainly valid
        else:
            violations = p.profile.rules(p.messages, p.ctx)
            if not violations:
                return Repaired(_shaped(p, list(p.raw)), [], {}, provider, p.codec.name)
            if policy.strict:
                _rejected(violations, provider, p.codec.name)
                raise HistoryError(violations, provider)
            rules = [v.code for v in violations]
            keep_orphans = p.codec.shape == "items" and p.ctx.previous_response_id is not None
            natives, fixes, id_map = passes.run(
                p.messages,
                p.codec,
                p.profile,
                policy,
                keep_orphans=keep_orphans,
                signatures=p.profile.signatures_due(p.messages, p.ctx),
                foreign=p.profile.foreign_calls(p.messages, p.ctx),
            )
            left = Parsed(p.body, p.key, natives, p.codec, p.profile, p.ctx).violations()
            if left:
                natives, more = p.profile.complete(natives, left, p.codec.name, policy)
                if more:
                    fixes.extend(more)
                    left = Parsed(p.body, p.key, natives, p.codec, p.profile, p.ctx).violations()
    shaped = _shaped(p, natives)
    if left and policy.disable_thinking:
        shaped, left = _thinking_off(p, natives, shaped, left, fixes)
    for v in left:
        fixes.append(_unrepaired(v))
    result = Repaired(shaped, fixes, id_map, provider, p.codec.name)
    _report(result, started, p.ctx.model, rules)
    return result


def _thinking_off(
    p: Parsed, natives: list[Any], shaped: Any, left: list[Violation], fixes: list[Any]
) -> tuple[Any, list[Violation]]:
    """A body whose final tool loop cannot start with thinking (H1) is sent with
    thinking off, where that alone makes it valid."""
    from toolpair._model import Fix

    if p.body is None or not any(v.code.endswith(".thinking_not_first") for v in left):
        return shaped, left
    body = p.codec.without_thinking(shaped)
    if body is None:
        return shaped, left
    ctx = replace(p.ctx, thinking=False)
    still = Parsed(body, p.key, natives, p.codec, p.profile, ctx).violations()
    if len(still) >= len(left):
        return shaped, left
    at = next(v.index for v in left if v.code.endswith(".thinking_not_first"))
    fixes.append(
        Fix(
            "thinking_disabled",
            at,
            (),
            "the final assistant turn does not start with a thinking block; thinking is off "
            "for this request, as the provider's error advises",
        )
    )
    return body, still


def _rejected(violations: list[Violation], provider: str, fmt: str) -> None:
    """A strict repair refused the history: the caller's scope reports it as a rejection."""
    s = events.active()
    if s is not None:
        s.rejected(violations, provider=provider, format=fmt)


def _unrepaired(v: Violation) -> Any:
    from toolpair._model import Fix

    return Fix("unrepaired", v.index, v.ids, f"[{v.code}] {v.message}")


def _report(result: Repaired, started: float, model: str | None, rules: Iterable[str]) -> None:
    """The one event of this repair (into the caller's scope, if there is one): the
    only path by which a repair is reported, the log line included."""
    if result.fixes:
        events.report(
            result.fixes,
            result.provider,
            result.format,
            events.clock() - started,
            model=model,
            rules=rules,
        )
