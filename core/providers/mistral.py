"""Mistral La Plateforme and ``mistral-common`` (docs/rules.md, M1-M8). The
rules are those of ``mistral_common/protocol/instruct/validator.py``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import chat, pid
from toolpair.providers._base import Context, Profile, digest
from toolpair.providers._rule import Evidence, Rule
from toolpair.providers.openai import tool_runs

INVALID_ID = Rule(
    "mistral.invalid_id",
    "M1",
    "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.",
    "documented",
    "mistral-common validator.py; jackmpcollins/magentic#276",
)

RESULT_WITHOUT_ID = Rule(
    "mistral.result_without_id",
    "M7",
    "Tool call id has to be defined.",
    "documented",
    "mistral-common validator.py (serving mode)",
    path="messages.{index}",
)

COUNT_MISMATCH = Rule(
    "mistral.count_mismatch",
    "M2",
    "Not the same number of function calls and responses",
    "documented",
    "mistral-common validator.py; mistralai/client-python#234",
    path="messages.{index}",
)

UNEXPECTED_ID = Rule(
    "mistral.unexpected_id",
    "M3",
    "Unexpected tool call id {id} in tool results",
    "documented",
    "mistral-common MistralRequestValidatorV13",
    "tokenizer 13 and later",
    path="messages.{index}.tool_call_id",
)

DUPLICATE_RESULT = Rule(
    "mistral.duplicate_result",
    "M3",
    "Duplicate tool call id {id} in tool results",
    "documented",
    "mistral-common MistralRequestValidatorV13",
    "tokenizer 13 and later",
    path="messages.{index}.tool_call_id",
)

DUPLICATE_CALL_ID = Rule(
    "mistral.duplicate_call_id",
    "M3",
    "Duplicate tool call id {id} in assistant message",
    "documented",
    "mistral-common MistralRequestValidatorV13",
    "tokenizer 13 and later",
    path="messages.{index}.tool_calls",
)

UNEXPECTED_ROLE = Rule(
    "mistral.unexpected_role",
    "M4",
    "Unexpected role '{cur}' after role '{prev}'",
    "documented",
    "mistral-common _validate_message_order; avante-corp/avante.nvim#2562",
    "without a model (mistral-common's validator, as local servers run it); not a "
    "hosted model named",
    basis="observed",
    families=("mistral-common",),
    seen=(
        Evidence(
            "acceptance",
            "against",
            "crmne/ruby_llm@fb5a49bf spec/fixtures/vcr_cassettes/chat_tool_attachments_"
            "mistral_mistral-small-latest_returns_text_and_attachments_from_tools.yml (a "
            "user message right after the tool message; 2 recordings)",
            "mistral",
            "mistral",
            "2026",
            "mistral-small-latest",
        ),
    ),
    path="messages.{index}.role",
)

BAD_LAST_ROLE = Rule(
    "mistral.bad_last_role",
    "M5",
    "Expected last role User or Tool (or Assistant with prefix or continue_final_message set "
    "to True) for serving but got {role}",
    "documented",
    "mistral-common _validate_last_message; NEKOparapa/AiNiee#641",
    path="messages",
)

CONTENT_AND_TOOL_CALLS = Rule(
    "mistral.content_and_tool_calls",
    "M6",
    "Assistant message must have either content or tool_calls, but not both.",
    "documented",
    "mistral-common _validate_assistant_message",
    "tokenizers before 5",
    path="messages.{index}",
)

INVALID_NAME = Rule(
    "mistral.invalid_name",
    "M7",
    "Function name was {n} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with "
    "a maximum length of 64.",
    "documented",
    "mistral-common validator.py",
    path="messages.{index}.tool_calls",
)

EMPTY = Rule(
    "mistral.empty",
    "M8",
    "Conversation must have at least one message",
    "documented",
    "mistral-common _validate_message_list_structure",
    path="messages",
)

BAD_START = Rule(
    "mistral.bad_start",
    "M8",
    "Conversation must start with a user message or system message",
    "documented",
    "mistral-common _validate_message_list_structure",
    path="messages",
)


_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ALLOWED = {
    "system": {"user", "assistant", "system"},
    "user": {"assistant", "system", "user"},
    "assistant": {"assistant", "user", "tool"},
    "tool": {"assistant", "tool"},
}


class Mistral(Profile):
    name = "mistral"
    bridge_after_results = True
    system_after_user_only = True
    id_pattern = re.compile(r"[a-zA-Z0-9]{9}")
    id_max = 9

    def new_id(self, original: str, salt: int) -> str:
        if salt == 0 and self.valid_id(original):
            return original
        return digest(f"{original}\x00{salt}", 9)

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        ts = chat(messages, ctx.shape)
        out: list[Violation] = []
        add = out.append
        if not ts:
            return [EMPTY.violation(0)]
        if len(ts) == 1 and ts[0].role not in ("user", "system"):
            add(BAD_START.violation(ts[0].first))
        for k in range(1, len(ts)):
            prev, cur = ts[k - 1].role, ts[k].role
            if cur not in _ALLOWED[prev]:
                at = ts[k].first
                add(UNEXPECTED_ROLE.violation(at, cur=cur, prev=prev))
        last = ts[-1]
        if last.role not in ("user", "tool"):
            native = messages[-1].native if messages else None
            prefixed = isinstance(native, dict) and native.get("prefix") is True
            if not (last.role == "assistant" and prefixed):
                add(BAD_LAST_ROLE.violation(last.first, role=last.role))
        for k, _run in tool_runs(ts):
            t = ts[k]
            calls = [it for it in t.items if it.block.kind == "call"]
            if (
                ctx.tokenizer_version < 5
                and calls
                and any(it.block.kind == "text" and it.block.text for it in t.items)
            ):
                add(CONTENT_AND_TOOL_CALLS.violation(t.first))
            call_ids: set[str] = set()
            for it in calls:
                cid = pid(it.block)
                if it.block.id is not None and not self.valid_id(cid):
                    add(
                        INVALID_ID.violation(
                            it.msg, (cid,), f"messages.{it.msg}.tool_calls", id=cid
                        )
                    )
                if it.block.name is not None and not _NAME.fullmatch(it.block.name):
                    add(INVALID_NAME.violation(it.msg, (cid,), n=it.block.name))
                if ctx.tokenizer_version >= 13 and it.block.id is not None and cid in call_ids:
                    add(DUPLICATE_CALL_ID.violation(it.msg, (cid,), id=cid))
                call_ids.add(cid)
            # M2 counts every tool message before the next assistant message, also after
            # an assistant message that made no call.
            j = k + 1
            results = []
            while j < len(ts) and ts[j].role != "assistant":
                if ts[j].role == "tool" and not ts[j].items[0].block.missing_id:
                    results.append(ts[j].items[0])
                j += 1
            if len(results) != len(calls):
                at = t.first
                add(COUNT_MISMATCH.violation(at, tuple(pid(it.block) for it in calls)))
            if ctx.tokenizer_version >= 13:
                got: set[str] = set()
                for r in results:
                    rid = pid(r.block)
                    if rid not in call_ids:
                        add(UNEXPECTED_ID.violation(r.msg, (rid,), id=rid))
                    elif rid in got:
                        add(DUPLICATE_RESULT.violation(r.msg, (rid,), id=rid))
                    got.add(rid)
        for t in ts:
            if t.role == "tool" and t.items[0].block.missing_id:
                at = t.items[0].msg
                add(RESULT_WITHOUT_ID.violation(at))
            elif t.role == "tool":
                rid = pid(t.items[0].block)
                if t.items[0].block.id is not None and not self.valid_id(rid):
                    at = t.items[0].msg
                    add(INVALID_ID.violation(at, (rid,), f"messages.{at}.tool_call_id", id=rid))
        return out


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    INVALID_ID,
    COUNT_MISMATCH,
    UNEXPECTED_ID,
    DUPLICATE_RESULT,
    DUPLICATE_CALL_ID,
    UNEXPECTED_ROLE,
    BAD_LAST_ROLE,
    CONTENT_AND_TOOL_CALLS,
    RESULT_WITHOUT_ID,
    INVALID_NAME,
    EMPTY,
    BAD_START,
)
