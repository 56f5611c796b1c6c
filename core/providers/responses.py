"""OpenAI Responses (docs/rules.md, R1-R8). Pairing is by ``call_id``
anywhere in ``input`` (plus the stored previous response), so placement is free;
reasoning items must sit directly before the item they produced."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolpair._model import Block, Fix, Message, Policy, Violation
from toolpair._view import Item, flat, pid
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule, profile_has

MISSING_OUTPUT = Rule(
    "openai-responses.missing_output",
    "R1",
    "No tool output found for function call {id}.",
    "observed",
    "openai/openai-agents-python#673, #1061",
    "every call item: function_call, custom_tool_call, and (openai-python 3.57 types) "
    "Codex's local_shell_call, shell_call, apply_patch_call and PTC's program, each "
    "answered by its own output type (the wording seen is the function call's); a "
    'tool_search_call with `execution: "client"` (hosted tool search needs nothing)',
    seen=(
        Evidence(
            "docs",
            "for",
            "https://developers.openai.com/api/docs/guides/tools-tool-search (client-executed "
            "tool search: the application answers a tool_search_call with a "
            'tool_search_output of its call_id, `execution: "client"`, the tools loaded)',
        ),
    ),
    path="input",
)

ORPHAN_OUTPUT = Rule(
    "openai-responses.orphan_output",
    "R2",
    "No tool call found for function call output with call_id {id}.",
    "observed",
    "pydantic/pydantic-ai#4887; agno-agi/agno#9372",
    "without previous_response_id; an output answering a client tool_search_call (of "
    "either output type) is paired, not an orphan",
    seen=(
        Evidence(
            "acceptance",
            "against",
            "pydantic/pydantic-ai@4fda3898 tests/cassettes/test_tool_availability_"
            "portability/test_tool_availability_portability_matrix[R5-T3-native-search]"
            ".yaml, interaction 0 (a client tool_search_call answered by a "
            "function_call_output of its call_id)",
            "gpt-5",
            "openai",
            "2026-08",
            "gpt-5.6",
            part=True,
        ),
    ),
    path="input",
)

REASONING_WITHOUT_FOLLOWING = Rule(
    "openai-responses.reasoning_without_following",
    "R3",
    "Item '{id}' of type 'reasoning' was provided without its required following item.",
    "observed",
    "mastra-ai/mastra#8738; openai/openai-agents-js#326 (an id-less message does not count)",
    "a reasoning item with an id: one sent without (store off, its encrypted content "
    "carried) is tied to nothing",
    seen=(
        Evidence(
            "acceptance",
            "against",
            "crmne/ruby_llm@fb5a49bf spec/fixtures/vcr_cassettes/chat_function_calling_"
            "openai_gpt-5-nano_can_use_tools_in_multi-turn_conversations.yml (an id-less "
            "reasoning item before an id-less assistant message, store false; 5 recordings)",
            "gpt-5",
            "openai",
            "2026",
            "gpt-5-nano",
            part=True,
        ),
    ),
    path="input",
)

CALL_WITHOUT_REASONING = Rule(
    "openai-responses.call_without_reasoning",
    "R3",
    "Item '{id}' of type 'function_call' was provided without its required 'reasoning' item.",
    "observed",
    "vercel/ai#7099; continuedev/continue#8933; cookbook reasoning_items",
    "without a model, or for an id toolpair cannot place; not for OpenAI's own models "
    "(gpt-4o, gpt-4.1, gpt-5, o-series): whether an fc_ item needs its reasoning is what "
    "the server stored for it, which the request cannot show",
    profile_has("fc_needs_reasoning"),
    seen=(
        Evidence(
            "acceptance",
            "against",
            "pydantic/pydantic-ai@4fda3898 tests/models/cassettes/test_openai_responses/"
            "test_openai_responses_history_with_combined_tool_call_id.yaml",
            "gpt-5",
            "openai",
            "",
            "gpt-5",
        ),
        Evidence(
            "acceptance",
            "against",
            "pydantic/pydantic-ai@4fda3898 tests/models/cassettes/test_openai_responses/"
            "test_openai_responses_phase_live.yaml (an fc_ item after a message after its "
            "reasoning)",
            "gpt-5",
            "openai",
            "2026-04",
            "gpt-5.5",
        ),
    ),
    path="input",
)

# UNVERIFIED: OpenAI's standard wording for a missing required field.
RESULT_WITHOUT_ID = Rule(
    "openai-responses.result_without_id",
    "R2",
    "Missing required parameter: 'input[{i}].call_id'.",
    "unverified",
    "OpenAI's standard wording for a missing required parameter",
    basis="documented",
    path="input[{i}].call_id",
)

DUPLICATE_ITEM = Rule(
    "openai-responses.duplicate_item",
    "R4",
    "Duplicate item found with id {id}. Remove duplicate items from your input and try again.",
    "observed",
    "vercel/ai#13307, #7883; earendil-works/pi#5147",
    path="input",
)

BAD_ITEM_ID = Rule(
    "openai-responses.bad_item_id",
    "R5",
    "Invalid 'input[{i}].id': '{id}'. Expected an ID that begins with 'fc'.",
    "observed",
    "nodetool-ai/nodetool#4252; laravel/ai#1052",
    path="input[{i}].id",
)

CALL_ID_TOO_LONG = Rule(
    "openai-responses.call_id_too_long",
    "R6",
    "Invalid 'input[{i}].call_id': string too long. Expected a string with maximum length 64, "
    "but got a string with length {n} instead.",
    "observed",
    "AnswerDotAI/fastllm#45; openai/codex#14355",
    path="input[{i}].call_id",
)

# UNVERIFIED: OpenAI's standard wording for an empty string field.
EMPTY_CALL_ID = Rule(
    "openai-responses.empty_call_id",
    "R6",
    "Invalid 'input[{i}].call_id': empty string. Expected a string with minimum length 1, "
    "but got an empty string instead.",
    "unverified",
    "OpenAI's standard wording for an empty string field",
    basis="documented",
    path="input[{i}].call_id",
)

# UNVERIFIED wordings: Programmatic Tool Calling (2026-07) is documented in the SDK's
# types (a call made by a program names it in ``caller``; its output echoes that
# caller); the API's texts for these refusals have no public copy.
CALLER_NOT_ECHOED = Rule(
    "openai-responses.caller_not_echoed",
    "R8",
    "Invalid 'input[{i}].caller': the output of call {id} must echo the caller of its call "
    "(program {caller}).",
    "unverified",
    "openai-python 3.57 response_input_item_param (every output type carries the "
    "caller of its call); OpenHands 4082, openai-agents 3833",
    "an output of a call a program made",
    basis="observed",
    path="input[{i}].caller",
)

ORPHAN_PROGRAM_CALL = Rule(
    "openai-responses.orphan_program_call",
    "R8",
    "No program found for call {id} with caller_id {caller}.",
    "unverified",
    "openai-python 3.57 response_input_item_param (caller.caller_id names the program "
    "item's call_id); OpenHands 4082, openai-agents 3833, vercel/ai 17767 (truncated "
    "programs)",
    "without previous_response_id: a call a program made (Programmatic Tool Calling, "
    "2026-07) needs that program item in the input",
    basis="observed",
    path="input[{index}].caller",
)

ITEM_NOT_PERSISTED = Rule(
    "openai-responses.item_not_persisted",
    "R7",
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try "
    "again with `store` set to true, or remove this item from your input.",
    "observed",
    "can1357/oh-my-pi#41; anomalyco/opencode#7724",
    "with store set to false",
    path="input",
)


#: Call item types that a program may make (their outputs echo its caller).
_CALLS = frozenset({"function_call", "custom_tool_call", "shell_call", "apply_patch_call"})


class Responses(Profile):
    name = "openai-responses"
    reasoning_adjacency = True
    #: Without a model (or with one that cannot be placed): an ``fc_`` item id may not
    #: be sent without the reasoning item before it (R3). Whether the server ties that
    #: item to a reasoning item depends on what it stored for it (gpt-5 took an ``fc_``
    #: item made by a response without reasoning, gpt-5.5 one after a message after
    #: its reasoning), which the request cannot show: an OpenAI model toolpair can
    #: place is not held to it.
    fc_needs_reasoning = True
    id_max = 64

    def for_model(self, model: str) -> Profile:
        m = model.lower().rsplit("/", 1)[-1]
        # Bedrock's OpenAI-compatible endpoint names them `openai.gpt-5...`.
        m = m.removeprefix("openai.")
        if self.fc_needs_reasoning and m.startswith(_PLACED):
            return _non_reasoning(type(self))
        return self

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # An output that lost its call's caller (PTC) gets it back: the call names it.
        out, fixes = natives, []
        for v in left:
            if not v.code.endswith(".caller_not_echoed") or fmt != "openai-responses":
                continue
            call = next(
                (
                    m
                    for m in natives
                    if isinstance(m, dict)
                    and m.get("call_id") == v.ids[0]
                    and m.get("type") in _CALLS
                    and isinstance(m.get("caller"), dict)
                ),
                None,
            )
            if call is None or not 0 <= v.index < len(out) or not isinstance(out[v.index], dict):
                continue
            if out is natives:
                out = list(natives)
            out[v.index] = {**out[v.index], "caller": call["caller"]}
            fixes.append(
                Fix("caller_echoed", v.index, v.ids, "the output echoes the caller of its call")
            )
        return out, fixes

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        items = flat(messages)
        out: list[Violation] = []
        add = out.append
        tied = self.fc_needs_reasoning
        # Every call needs an output of its own: keyed by call_id and counted, so a
        # call_id used twice needs two outputs. (The API's wording for a repeated
        # call_id is UNVERIFIED; R1/R2 are the closest confirmed texts.) Id-less calls
        # (a Gemini history seen as Responses) pair by name and count.
        calls: dict[str, list[int]] = {}
        outputs: dict[str, list[int]] = {}
        orphans: list[tuple[str, int]] = []
        item_ids: set[str] = set()
        for n, (it, _role) in enumerate(items):
            b = it.block
            if b.item_id is not None:
                if b.item_id in item_ids:
                    add(DUPLICATE_ITEM.violation(it.msg, (b.item_id,), id=b.item_id))
                item_ids.add(b.item_id)
            if b.kind == "call":
                if (
                    tied
                    and b.sub == "function_call"
                    and b.item_id is not None
                    and ctx.previous_response_id is None
                    and not _after_reasoning(items, n)
                ):
                    add(CALL_WITHOUT_REASONING.violation(it.msg, (b.item_id, pid(b)), id=b.item_id))
                cid = pid(b) if b.id is not None else "\x00" + (b.name or "")
                calls.setdefault(cid, []).append(it.msg)
                if (
                    b.item_id is not None
                    and b.sub == "function_call"
                    and not b.item_id.startswith("fc")
                ):
                    add(BAD_ITEM_ID.violation(it.msg, (b.item_id,), i=it.msg, id=b.item_id))
                if b.id == "":
                    add(EMPTY_CALL_ID.violation(it.msg, ("",), i=it.msg))
                if len(cid) > self.id_max:
                    add(CALL_ID_TOO_LONG.violation(it.msg, (cid,), i=it.msg, n=len(cid)))
            elif b.kind == "result" and b.missing_id:
                add(RESULT_WITHOUT_ID.violation(it.msg, i=it.msg))
            elif b.kind == "result":
                key = pid(b) if b.id is not None else "\x00" + (b.name or "")
                if b.id is None and len(outputs.get(key, ())) >= len(calls.get(key, ())):
                    # Without an id an output can only answer a call before it.
                    orphans.append((key, it.msg))
                    continue
                outputs.setdefault(key, []).append(it.msg)
            elif b.kind == "reasoning":
                nxt = items[n + 1] if n + 1 < len(items) else None
                rid = b.item_id or ""
                # The API ties a reasoning item to the item it produced by its id: one
                # sent without an id (store off, encrypted content) is tied to nothing.
                if b.item_id is not None and (nxt is None or not _produced(nxt)):
                    add(REASONING_WITHOUT_FOLLOWING.violation(it.msg, (rid,), id=rid))
                native = b.native if isinstance(b.native, dict) else {}
                if ctx.store is False and not native.get("encrypted_content"):
                    add(ITEM_NOT_PERSISTED.violation(it.msg, (rid,), id=rid))
        out.extend(_programs(items, ctx))
        for cid, ats in calls.items():
            answered = len(outputs.get(cid, ()))
            missing = ats[answered:]
            shown = cid.lstrip("\x00")
            for at in missing:
                add(MISSING_OUTPUT.violation(at, (shown,), id=shown))
        if ctx.previous_response_id is None:
            for cid, at in orphans:
                shown = cid.lstrip("\x00")
                add(ORPHAN_OUTPUT.violation(at, (shown,), id=shown))
            for cid, ats in outputs.items():
                made = len(calls.get(cid, ()))
                extra = ats[made:]
                shown = cid.lstrip("\x00")
                for at in extra:
                    add(ORPHAN_OUTPUT.violation(at, (shown,), id=shown))
        return out


def _caller(b: Block) -> tuple[str, str] | None:
    """The program a call or output names as its caller, as (type, caller_id)."""
    c = b.native.get("caller") if isinstance(b.native, dict) else None
    if not isinstance(c, dict) or c.get("type") != "program":
        return None
    return "program", str(c.get("caller_id"))


def _programs(items: Sequence[tuple[Item, str]], ctx: Context) -> list[Violation]:
    """Programmatic Tool Calling: a call a program made needs that program in the input
    (truncating a program orphans its children), and its output echoes its caller."""
    programs = {pid(it.block) for it, _ in items if it.block.sub == "program"}
    made: dict[str, tuple[str, str]] = {}
    out: list[Violation] = []
    for it, _role in items:
        b = it.block
        if b.kind == "call" and b.sub != "program":
            caller = _caller(b)
            if caller is None:
                continue
            made[pid(b)] = caller
            if caller[1] not in programs and ctx.previous_response_id is None:
                out.append(
                    ORPHAN_PROGRAM_CALL.violation(
                        it.msg,
                        (pid(b), caller[1]),
                        id=pid(b),
                        caller=caller[1],
                    )
                )
        elif b.kind == "result" and b.id is not None and b.id in made and _caller(b) != made[b.id]:
            out.append(
                CALLER_NOT_ECHOED.violation(
                    it.msg,
                    (b.id, made[b.id][1]),
                    i=it.msg,
                    id=b.id,
                    caller=made[b.id][1],
                )
            )
    return out


def _produced(entry: tuple[Item, str]) -> bool:
    """Whether an item can be the one a reasoning item produced: an assistant-side item,
    not another reasoning item, and not an assistant message without an ``id`` (the
    API ties the two by the item's id)."""
    it, role = entry
    b = it.block
    if role != "assistant" or b.kind == "reasoning":
        return False
    return not (b.kind == "text" and b.item_id is None)


def _after_reasoning(items: Sequence[tuple[Item, str]], n: int) -> bool:
    """Whether the call at ``n`` is in the run of calls right after a reasoning item."""
    k = n - 1
    while k >= 0 and items[k][0].block.kind == "call":
        k -= 1
    return k >= 0 and items[k][0].block.kind == "reasoning"


#: OpenAI model ids toolpair places: the non-reasoning ones, and the reasoning ones
#: whose fc_ items stand on what the server stored.
_PLACED = ("gpt-3", "gpt-4", "chatgpt-4o", "gpt-5", "o1", "o3", "o4", "codex")
_NON_REASONING: dict[type, Profile] = {}


def _non_reasoning(base: type[Responses]) -> Profile:
    hit = _NON_REASONING.get(base)
    if hit is None:
        cls = type(base.__name__ + "NonReasoning", (base,), {"fc_needs_reasoning": False})
        hit = _NON_REASONING[base] = cls()
    return hit


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_OUTPUT,
    ORPHAN_PROGRAM_CALL,
    CALLER_NOT_ECHOED,
    ORPHAN_OUTPUT,
    RESULT_WITHOUT_ID,
    REASONING_WITHOUT_FOLLOWING,
    CALL_WITHOUT_REASONING,
    DUPLICATE_ITEM,
    BAD_ITEM_ID,
    CALL_ID_TOO_LONG,
    EMPTY_CALL_ID,
    ITEM_NOT_PERSISTED,
)
