"""OpenAI Chat Completions (docs/rules.md, O1-O5): an assistant message
with ``tool_calls`` is followed at once by one ``tool`` message per call."""

from __future__ import annotations

from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import Turn, chat, pid
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule

MISSING_RESULT = Rule(
    "openai.missing_result",
    "O1",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    "observed",
    "BerriAI/litellm#10083; router-for-me/CLIProxyAPI#2798",
    path="messages.[{index}].role",
)

REPEATED_CALL_ID = Rule(
    "openai.repeated_call_id",
    "O1",
    MISSING_RESULT.text,
    "unverified",
    "one id on two calls leaves one unanswered; O1 is the closest confirmed text",
    path="messages.[{index}].role",
)

UNEXPECTED_TOOL_MESSAGE = Rule(
    "openai.unexpected_tool_message",
    "O2",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.",
    "observed",
    "miurla/morphic#136; run-llama/llama_index#10493",
    path="messages.[{index}].role",
)

UNKNOWN_TOOL_CALL_ID = Rule(
    "openai.unknown_tool_call_id",
    "O3",
    "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
    "observed",
    "dapr/dapr-agents#145",
    path="messages.[{index}].tool_call_id",
)

DUPLICATE_RESULT = Rule(
    "openai.duplicate_result",
    "O4",
    "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}' in messages[{a}] and "
    "messages[{b}].",
    "observed",
    "agno-agi/agno#5116; anomalyco/opencode#1211",
    path="messages.[{b}].tool_call_id",
)

ID_TOO_LONG = Rule(
    "openai.id_too_long",
    "O5",
    "Invalid 'messages[{i}].tool_calls[{k}].id': string too long. Expected a string with "
    "maximum length 40, but got a string with length {n} instead.",
    "observed",
    "Portkey-AI/gateway#1062; microsoft/autogen#6377",
    seen=(
        Evidence(
            "acceptance",
            "against",
            "crmne/ruby_llm@08d50f03 spec/fixtures/vcr_cassettes/chat_function_calling_"
            "deepseek_deepseek-chat_can_use_tools_in_multi-turn_conversations.yml (its own "
            "`call_0_` ids, 43 characters, sent back; 12 recordings)",
            "deepseek",
            "deepseek",
            "2025-08",
            "deepseek-chat",
        ),
    ),
    path="messages[{i}].tool_calls[{k}].id",
)

# UNVERIFIED: OpenAI's standard wording for an empty string field.
EMPTY_ID = Rule(
    "openai.empty_id",
    "O5",
    "Invalid 'messages[{i}].tool_calls[{k}].id': empty string. Expected a string with "
    "minimum length 1, but got an empty string instead.",
    "unverified",
    "OpenAI's standard wording for an empty string field",
    basis="documented",
    path="messages[{i}].tool_calls[{k}].id",
)


def tool_runs(ts: Sequence[Turn]) -> list[tuple[int, list[int]]]:
    """(assistant turn index, the tool turns right after it) for every assistant turn."""
    out = []
    for k, t in enumerate(ts):
        if t.role != "assistant":
            continue
        j = k + 1
        run = []
        while j < len(ts) and ts[j].role == "tool":
            run.append(j)
            j += 1
        out.append((k, run))
    return out


class OpenAIChat(Profile):
    name = "openai"
    id_max = 40

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        ts = chat(messages, ctx.shape)
        out: list[Violation] = []
        add = out.append
        answered: set[int] = set()
        for k, run in tool_runs(ts):
            t = ts[k]
            calls = [it for it in t.items if it.block.kind == "call"]
            for n, it in enumerate(calls):
                cid = pid(it.block)
                if it.block.id == "":
                    add(EMPTY_ID.violation(it.msg, ("",), i=it.msg, k=n))
                if it.block.id is not None and len(cid) > self.id_max:
                    add(
                        ID_TOO_LONG.violation(
                            it.msg,
                            (cid,),
                            i=it.msg,
                            k=n,
                            n=len(cid),
                        )
                    )
            ids = {pid(it.block) for it in calls}
            if len(ids) < len(calls):
                # One id on two calls of a message leaves one of them without a response
                # message of its own. UNVERIFIED: no public copy of the API's text for
                # this; O1 is the closest confirmed wording.
                repeated = tuple(
                    dict.fromkeys(
                        i
                        for n, i in enumerate(map(pid, (c.block for c in calls)))
                        if i in [pid(c.block) for c in calls[:n]]
                    )
                )
                at = calls[0].msg
                add(REPEATED_CALL_ID.violation(at, repeated, ids=", ".join(repeated)))
            first_seen: dict[str, int] = {}
            for j in run:
                answered.add(j)
                r = ts[j].items[0]
                rid = pid(r.block)
                if r.block.missing_id:
                    add(_no_id(r.msg))
                elif not calls:
                    add(UNEXPECTED_TOOL_MESSAGE.violation(r.msg, (rid,)))
                elif rid not in ids:
                    add(UNKNOWN_TOOL_CALL_ID.violation(r.msg, (rid,), id=rid))
                elif rid in first_seen:
                    add(
                        DUPLICATE_RESULT.violation(
                            r.msg,
                            (rid,),
                            id=rid,
                            a=first_seen[rid],
                            b=r.msg,
                        )
                    )
                else:
                    first_seen[rid] = r.msg
            missing = tuple(
                dict.fromkeys(pid(it.block) for it in calls if pid(it.block) not in first_seen)
            )
            if missing:
                at = calls[0].msg
                add(MISSING_RESULT.violation(at, missing, ids=", ".join(missing)))
        for j, t in enumerate(ts):
            if t.role == "tool" and j not in answered:
                r = t.items[0]
                if r.block.missing_id:
                    add(_no_id(r.msg))
                    continue
                add(UNEXPECTED_TOOL_MESSAGE.violation(r.msg, (pid(r.block),)))
        return out


# UNVERIFIED wording (OpenAI's text for a tool message without its id).
RESULT_WITHOUT_ID = Rule(
    "openai.result_without_id",
    "O2",
    "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
    "unverified",
    "Groq words it as a missing property (hackclub/ai#22); OpenAI's text inferred",
    basis="documented",
    path="messages.[{index}].tool_call_id",
)


def _no_id(at: int) -> Violation:
    return RESULT_WITHOUT_ID.violation(at)


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_RESULT,
    REPEATED_CALL_ID,
    UNEXPECTED_TOOL_MESSAGE,
    RESULT_WITHOUT_ID,
    UNKNOWN_TOOL_CALL_ID,
    DUPLICATE_RESULT,
    ID_TOO_LONG,
    EMPTY_ID,
)
