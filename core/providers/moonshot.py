"""Moonshot AI's OpenAI-compatible Chat Completions (Kimi; api.moonshot.ai and
api.moonshot.cn, docs/rules.md): OpenAI's pairing rules, reported under Moonshot's name
as the DeepSeek host reports them, plus thinking mode's ``reasoning_content`` on every
assistant tool-call message (K1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from toolpair._model import Fix, Message, Policy, Violation
from toolpair._view import pid
from toolpair.providers._base import Context, Profile, renamed
from toolpair.providers._rule import Evidence, Rule
from toolpair.providers.openai import OpenAIChat

MISSING_REASONING_CONTENT = Rule(
    "moonshot.missing_reasoning_content",
    "K1",
    "thinking is enabled but reasoning_content is missing in assistant tool call message at "
    "index {i}",
    "observed",
    "MoonshotAI/kimi-agent-sdk#169 (K2.6, 2026-04); liliMozi/openhanako#1667 (K2.6, "
    "2026-06: every assistant tool-call message of the history, not only the current "
    "loop's); VicBilibily/GCMP#162 (K2.6, 2026-05); Kilo-Org/kilocode#5544 (K2.5, "
    "api.moonshot.ai); bytedance/deer-flow#3043 (K2.5, api.moonshot.cn); "
    "earendil-works/pi#4178 (K2.6: an empty string counts as missing, a single space is "
    "taken); platform.moonshot.ai docs/guide/use-kimi-k2-thinking-model (multi-step tool "
    "calls keep reasoning_content)",
    "thinking on: kimi-k2-thinking, kimi-k2.5 and kimi-k2.6 unless the body turns it off "
    "(thinking: {type: disabled}), or any model with thinking: {type: enabled}; every "
    "assistant message with tool_calls, on a wire body",
    basis="documented",
    since="K2 thinking (2025-11); K2.5, K2.6 (thinking on by default)",
    seen=(
        Evidence(
            "thread",
            "for",
            "agentscope-ai/QwenPaw#433 (Kimi-K2.5 behind SiliconFlow, the same text)",
            "kimi",
            "siliconflow",
            "2026-03",
            "moonshotai/Kimi-K2.5",
        ),
    ),
    path="messages[{i}]",
)


def _missing(native: Any) -> bool:
    """Whether an assistant message lacks its reasoning as Moonshot reads it: no field,
    null, or an empty string (pi#4178: "" is refused like a missing field)."""
    value = native.get("reasoning_content")
    return not isinstance(value, str) or value == ""


class Moonshot(OpenAIChat):
    name = "moonshot"
    reports_as: ClassVar[dict[str, str]] = {"openai.": "moonshot."}
    # OpenAI's 40-character limit is OpenAI's own: Kimi mints ids such as
    # ``functions.<name>:<n>`` and no Moonshot refusal of a long id is known.
    replaces = frozenset({"openai.id_too_long"})
    id_max = Profile.id_max
    #: Thinking on unless the body turns it off (kimi-k2.5, kimi-k2.6, kimi-k2-thinking).
    thinks_by_default: ClassVar[bool] = False

    def _thinking(self, ctx: Context) -> bool:
        return bool(ctx.thinking) or (self.thinks_by_default and ctx.thinking is None)

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out = [renamed(v, self.reports_as) for v in super().rules(messages, ctx)]
        if not self._thinking(ctx) or ctx.format != "openai":
            # Only a wire body shows the field; a framework's formatter decides it.
            return out
        for m in messages:
            if m.role != "assistant" or not isinstance(m.native, dict):
                continue
            calls = tuple(pid(b) for b in m.blocks if b.kind == "call")
            if calls and _missing(m.native):
                out.append(MISSING_REASONING_CONTENT.violation(m.index, calls, i=m.index))
        return out

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # The reasoning itself is gone and cannot be made up. Moonshot refuses an empty
        # string like a missing field and takes a single space (pi#4178): the smallest
        # value that says nothing.
        out, fixes = natives, []
        for v in left:
            if v.code != MISSING_REASONING_CONTENT.code or fmt != "openai":
                continue
            if not 0 <= v.index < len(out) or not isinstance(out[v.index], dict):
                continue
            m = out[v.index]
            if not _missing(m):
                continue
            if out is natives:
                out = list(natives)
            out[v.index] = {**m, "reasoning_content": " "}
            fixes.append(
                Fix(
                    "reasoning_content_added",
                    v.index,
                    v.ids,
                    "the turn's reasoning was not kept; a single space goes back in its "
                    "place, the smallest value Moonshot takes",
                )
            )
        return out, fixes

    def for_model(self, model: str) -> Profile:
        if _thinks_by_default(model):
            return _THINKING
        return self


def _thinks_by_default(model: str) -> bool:
    m = model.lower().rsplit("/", 1)[-1]
    return m.startswith(("kimi-k2-thinking", "kimi-k2.5", "kimi-k2.6", "kimi-k2-5", "kimi-k2-6"))


class _MoonshotThinking(Moonshot):
    thinks_by_default = True
    # OpenAI's no-op checker does not read reasoning_content: this one does, then
    # runs OpenAI's.
    fast_key = "moonshot-thinking"


_THINKING = _MoonshotThinking()


#: The rules this module checks, in the order of docs/rules.md.
RULES = (MISSING_REASONING_CONTENT,)
