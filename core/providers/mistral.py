"""Mistral La Plateforme and ``mistral-common`` (docs/rules.md, M1-M8). The
rules are those of ``mistral_common/protocol/instruct/validator.py``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import chat, pid
from toolpair.providers._base import Context, Profile, digest
from toolpair.providers.openai import tool_runs

M1 = "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."
M7 = "Tool call id has to be defined."
M2 = "Not the same number of function calls and responses"
M3_UNEXPECTED = "Unexpected tool call id {id} in tool results"
M3_DUP_RESULT = "Duplicate tool call id {id} in tool results"
M3_DUP_CALL = "Duplicate tool call id {id} in assistant message"
M4 = "Unexpected role '{cur}' after role '{prev}'"
M5 = (
    "Expected last role User or Tool (or Assistant with prefix or continue_final_message set "
    "to True) for serving but got {role}"
)
M6 = "Assistant message must have either content or tool_calls, but not both."
M7_NAME = (
    "Function name was {n} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with "
    "a maximum length of 64."
)
M8_EMPTY = "Conversation must have at least one message"
M8_START = "Conversation must start with a user message or system message"

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
            return [Violation("mistral.empty", M8_EMPTY, 0, (), "messages")]
        if len(ts) == 1 and ts[0].role not in ("user", "system"):
            add(Violation("mistral.bad_start", M8_START, ts[0].first, (), "messages"))
        for k in range(1, len(ts)):
            prev, cur = ts[k - 1].role, ts[k].role
            if cur not in _ALLOWED[prev]:
                at = ts[k].first
                add(
                    Violation(
                        "mistral.unexpected_role",
                        M4.format(cur=cur, prev=prev),
                        at,
                        (),
                        f"messages.{at}.role",
                    )
                )
        last = ts[-1]
        if last.role not in ("user", "tool"):
            native = messages[-1].native if messages else None
            prefixed = isinstance(native, dict) and native.get("prefix") is True
            if not (last.role == "assistant" and prefixed):
                add(
                    Violation(
                        "mistral.bad_last_role",
                        M5.format(role=last.role),
                        last.first,
                        (),
                        "messages",
                    )
                )
        for k, _run in tool_runs(ts):
            t = ts[k]
            calls = [it for it in t.items if it.block.kind == "call"]
            if (
                ctx.tokenizer_version < 5
                and calls
                and any(it.block.kind == "text" and it.block.text for it in t.items)
            ):
                add(
                    Violation(
                        "mistral.content_and_tool_calls", M6, t.first, (), f"messages.{t.first}"
                    )
                )
            call_ids: set[str] = set()
            for it in calls:
                cid = pid(it.block)
                if it.block.id is not None and not self.valid_id(cid):
                    add(
                        Violation(
                            "mistral.invalid_id",
                            M1.format(id=cid),
                            it.msg,
                            (cid,),
                            f"messages.{it.msg}.tool_calls",
                        )
                    )
                if it.block.name is not None and not _NAME.fullmatch(it.block.name):
                    add(
                        Violation(
                            "mistral.invalid_name",
                            M7_NAME.format(n=it.block.name),
                            it.msg,
                            (cid,),
                            f"messages.{it.msg}.tool_calls",
                        )
                    )
                if ctx.tokenizer_version >= 13 and it.block.id is not None and cid in call_ids:
                    add(
                        Violation(
                            "mistral.duplicate_call_id",
                            M3_DUP_CALL.format(id=cid),
                            it.msg,
                            (cid,),
                            f"messages.{it.msg}.tool_calls",
                        )
                    )
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
                add(
                    Violation(
                        "mistral.count_mismatch",
                        M2,
                        at,
                        tuple(pid(it.block) for it in calls),
                        f"messages.{at}",
                    )
                )
            if ctx.tokenizer_version >= 13:
                got: set[str] = set()
                for r in results:
                    rid = pid(r.block)
                    if rid not in call_ids:
                        add(
                            Violation(
                                "mistral.unexpected_id",
                                M3_UNEXPECTED.format(id=rid),
                                r.msg,
                                (rid,),
                                f"messages.{r.msg}.tool_call_id",
                            )
                        )
                    elif rid in got:
                        add(
                            Violation(
                                "mistral.duplicate_result",
                                M3_DUP_RESULT.format(id=rid),
                                r.msg,
                                (rid,),
                                f"messages.{r.msg}.tool_call_id",
                            )
                        )
                    got.add(rid)
        for t in ts:
            if t.role == "tool" and t.items[0].block.missing_id:
                at = t.items[0].msg
                add(Violation("mistral.result_without_id", M7, at, (), f"messages.{at}"))
            elif t.role == "tool":
                rid = pid(t.items[0].block)
                if t.items[0].block.id is not None and not self.valid_id(rid):
                    at = t.items[0].msg
                    add(
                        Violation(
                            "mistral.invalid_id",
                            M1.format(id=rid),
                            at,
                            (rid,),
                            f"messages.{at}.tool_call_id",
                        )
                    )
        return out
