"""Zhipu AI's OpenAI-compatible Chat Completions (GLM; open.bigmodel.cn and api.z.ai,
docs/rules.md): the shapes OpenAI's pairing rules name, each refused with one error,
code 1214, that names no place, and a message list with no user message (Z2).

What the API refuses is known by its one text, not shape by shape: only a tool message
without its ``tool_call_id`` (documented) and a list with no user message (observed)
are known refused, so only those hold for a named GLM model (the do-no-harm policy);
without a model every OpenAI pairing rule stays, as the strict set of an
OpenAI-compatible API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from toolpair._model import Message, Violation
from toolpair.providers import openai
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Rule
from toolpair.providers.openai import OpenAIChat

#: Code 1214, as api.z.ai words it (Accept-Language en, its default); open.bigmodel.cn
#: answers ``messages 参数非法。请检查文档。`` (lobehub/lobehub#11408).
ILLEGAL = "The messages parameter is illegal. Please check the documentation."
_SEEN = (
    "continuedev/continue#13260 (GLM-5.2 on api.z.ai, 2026-09-12, the whole text); "
    "lobehub/lobehub#11408 (open.bigmodel.cn, after several tool calls, in Chinese)"
)


def _hosted(rule: Rule, basis: str, why: str) -> Rule:
    """OpenAI's ``rule`` as Zhipu reports it: its own code, code 1214's text, no place."""
    return replace(
        rule,
        code="zhipu." + rule.code.split(".", 1)[1],
        ref="Z1",
        text=ILLEGAL,
        status="observed",
        evidence=f"{_SEEN}; {why}",
        applies=f"as OpenAI's {rule.ref} ({rule.code}); the error names no place",
        basis=basis,  # type: ignore[arg-type]
        seen=(),
        path="messages",
    )


_UNSHOWN = "no public body shows Zhipu refusing this shape (OpenAI's rule, inferred)"
MISSING_RESULT = _hosted(openai.MISSING_RESULT, "unverified", _UNSHOWN)
REPEATED_CALL_ID = _hosted(openai.REPEATED_CALL_ID, "unverified", _UNSHOWN)
UNEXPECTED_TOOL_MESSAGE = _hosted(openai.UNEXPECTED_TOOL_MESSAGE, "unverified", _UNSHOWN)
RESULT_WITHOUT_ID = _hosted(
    openai.RESULT_WITHOUT_ID,
    "documented",
    "docs.z.ai api-reference/llm/chat-completion (a tool message requires tool_call_id)",
)
UNKNOWN_TOOL_CALL_ID = _hosted(openai.UNKNOWN_TOOL_CALL_ID, "unverified", _UNSHOWN)
DUPLICATE_RESULT = _hosted(openai.DUPLICATE_RESULT, "unverified", _UNSHOWN)
EMPTY_ID = _hosted(openai.EMPTY_ID, "unverified", _UNSHOWN)

NO_USER_MESSAGE = Rule(
    "zhipu.no_user_message",
    "Z2",
    ILLEGAL,
    "observed",
    "anomalyco/opencode#2557 (GLM-4.5: refused for a request with no user message, "
    "whatever system or assistant messages it holds); MetaGLM/zhipuai-sdk-python-v4#14 "
    "(a body of system, assistant and tool messages only, in Chinese)",
    "every model: a message list with no user message",
    path="messages",
)

_BY_OPENAI = {
    r.code: h
    for r, h in (
        (openai.MISSING_RESULT, MISSING_RESULT),
        (openai.REPEATED_CALL_ID, REPEATED_CALL_ID),
        (openai.UNEXPECTED_TOOL_MESSAGE, UNEXPECTED_TOOL_MESSAGE),
        (openai.RESULT_WITHOUT_ID, RESULT_WITHOUT_ID),
        (openai.UNKNOWN_TOOL_CALL_ID, UNKNOWN_TOOL_CALL_ID),
        (openai.DUPLICATE_RESULT, DUPLICATE_RESULT),
        (openai.EMPTY_ID, EMPTY_ID),
    )
}


class Zhipu(OpenAIChat):
    name = "zhipu"
    # OpenAI's 40-character limit is OpenAI's own; every other OpenAI rule stands in
    # Zhipu's own words.
    replaces = frozenset({*_BY_OPENAI, openai.ID_TOO_LONG.code})
    id_max = Profile.id_max
    # A list without a user message is a rule OpenAI's no-op checker does not read.
    fast_key = "zhipu"

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out = []
        for v in super().rules(messages, ctx):
            rule = _BY_OPENAI.get(v.code)
            if rule is not None:
                out.append(rule.violation(v.index, v.ids))
        if messages and not any(m.role == "user" for m in messages):
            out.append(NO_USER_MESSAGE.violation(messages[0].index))
        return out


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_RESULT,
    REPEATED_CALL_ID,
    UNEXPECTED_TOOL_MESSAGE,
    RESULT_WITHOUT_ID,
    UNKNOWN_TOOL_CALL_ID,
    DUPLICATE_RESULT,
    EMPTY_ID,
    NO_USER_MESSAGE,
)
