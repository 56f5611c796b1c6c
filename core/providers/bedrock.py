"""AWS Bedrock Converse (docs/rules.md, B1-B10). Stricter than Anthropic
direct: turns never merge, a result turn holds nothing else, the history starts with a
user turn."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolpair._model import Block, Fix, Message, Policy, Violation
from toolpair._view import pid, turns
from toolpair.providers._base import Context, Profile
from toolpair.providers._models import bedrock_family
from toolpair.providers._rule import Evidence, Rule, profile_has
from toolpair.providers.anthropic import THINKING_NOT_FIRST as ANTHROPIC_THINKING_NOT_FIRST
from toolpair.providers.anthropic import thinking_start_violation
from toolpair.providers.mistral import INVALID_ID as MISTRAL_INVALID_ID
from toolpair.providers.mistral import Mistral

#: The recorded 200 of Kimi K2 on Bedrock (source, family, host, date, model): it
#: stands against two Bedrock rules at once.
_KIMI_ON_BEDROCK = (
    "pydantic/pydantic-ai@4fda3898 tests/models/cassettes/test_bedrock/"
    "test_bedrock_moonshotai_tool_call.yaml",
    "kimi",
    "bedrock",
    "",
    "moonshot.kimi-k2-thinking",
)


MISSING_RESULT = Rule(
    "bedrock.missing_result",
    "B1",
    "Expected toolResult blocks at messages.{i}.content for the following Ids: {ids}",
    "observed",
    "agno-agi/agno#6698, #6242; camel-ai/camel#3954",
    "every model; for Claude, Converse's own check: the answering turn holds some of "
    "the results (it names that turn)",
    seen=(
        Evidence(
            "refusal",
            "for",
            "anomalyco/opencode@317768a7 packages/ai/test/fixtures/recordings/"
            "bedrock-recovery/rejects-continuation-with-a-missing-parallel-tool-result.json",
            "claude-4",
            "bedrock",
            "",
            "us.anthropic.claude-sonnet-4-6",
        ),
    ),
)

TOO_MANY_RESULTS = Rule(
    "bedrock.too_many_results",
    "B2",
    "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse "
    "blocks of previous turn.",
    "observed",
    "pydantic/pydantic-ai#2327; Just-Curieous/Curie#16",
    path="messages.{i}.content",
)

MIXED_RESULT_TURN = Rule(
    "bedrock.mixed_result_turn",
    "B3",
    "messages.{i}.content: Conversation blocks and tool result blocks cannot be provided in "
    "the same turn.",
    "observed",
    "BerriAI/litellm#6053 (Claude 3 Opus); langchain-ai/langchain-aws#141",
    "without a model, Claude 3, Llama, Mistral; Claude 4 refuses only media other than "
    "images and PDF; Nova never; Kimi unconfirmed, so not reported",
    lambda p: getattr(p, "result_turn", "results") != "any",
    families=("claude-3", "claude-4", "llama", "mistral"),
    path="messages.{i}.content",
)

ROLES_NOT_ALTERNATING = Rule(
    "bedrock.roles_not_alternating",
    "B4",
    "A conversation must alternate between user and assistant roles. Make sure the "
    "conversation alternates between user and assistant roles and try again.",
    "observed",
    "microsoft/semantic-kernel#10281; langchain-ai/langchain-aws#130",
    "without a model, and every model but Claude 3.x, which took two user turns in a row "
    "(recorded, 2025-09 to 2026-02)",
    seen=(
        # Claude 3.5 through Converse, the request shown (2024).
        Evidence(
            "thread",
            "for",
            "cline/cline#431 (claude-3.5-sonnet through LiteLLM); CopilotKit/CopilotKit#736 "
            "(anthropic.claude-3-5-sonnet-20240620-v1:0, ChatBedrockConverse); "
            "stackblitz-labs/bolt.diy#1144 (two assistant turns)",
            "claude-3",
            "bedrock",
            "2024-10",
        ),
        # Recorded 200s of two user turns in a row through Converse: Claude 3.5 Haiku
        # before a tool loop, Claude 3 Haiku a toolResult turn then a text turn. A
        # recorded acceptance outweighs the threads: for Claude 3.x the rule is withheld.
        Evidence(
            "acceptance",
            "against",
            "crmne/ruby_llm@1e3c65e9 spec/fixtures/vcr_cassettes/chat_function_calling_"
            "bedrock_anthropic_claude-3-5-haiku-20241022-v1_0_*.yml (4 requests)",
            "claude-3",
            "bedrock",
            "2025-09",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        Evidence(
            "acceptance",
            "against",
            "crewAIInc/crewAI@bd4d039f lib/crewai/tests/cassettes/agents/"
            "TestBedrockNativeToolCalling.test_bedrock_agent_kickoff_with_tools_mocked.yaml "
            "(5 requests, up to 5 such pairs each)",
            "claude-3",
            "bedrock",
            "2026-01",
            "anthropic.claude-3-haiku-20240307-v1:0",
        ),
        Evidence(
            "acceptance",
            "against",
            "crewAIInc/crewAI@120f2ef6, @5b00b5f8 lib/crewai/tests/cassettes/agents/"
            "TestNativeToolCallingBehavior.test_bedrock_mcp_tool_with_optional_fields_no_"
            "schema_error.yaml (two recordings)",
            "claude-3",
            "bedrock",
            "2026-02",
            "anthropic.claude-3-haiku-20240307-v1:0",
        ),
    ),
    path="messages.{index}",
)

FIRST_NOT_USER = Rule(
    "bedrock.first_not_user",
    "B5",
    "A conversation must start with a user message. Try again with a conversation that "
    "starts with a user message.",
    "observed",
    "langgenius/dify#12340; strands-agents/sdk-typescript#727",
    path="messages.0",
)

MISSING_TOOL_CONFIG = Rule(
    "bedrock.missing_tool_config",
    "B6",
    "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    "observed",
    "langgenius/dify#17545, #16421",
    path="toolConfig",
)

EMPTY_ERROR_RESULT = Rule(
    "bedrock.empty_error_result",
    "B7",
    "The content field at messages.{i}.content.{j}.toolResult cannot be empty when status "
    "value is error.",
    "observed",
    "aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15",
    path="messages.{i}.content.{j}.toolResult",
)

BLANK_TEXT = Rule(
    "bedrock.blank_text",
    "B7",
    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text "
    "to the text field, and try again.",
    "observed",
    "aws-samples/bedrock-engineer#8",
    path="messages.{i}.content.{j}",
)

# UNVERIFIED (docs/rules.md B8, B9): the service's texts for a bad or duplicate toolUseId
# were never captured; these follow the AWS validation-error format.
INVALID_TOOL_USE_ID = Rule(
    "bedrock.invalid_tool_use_id",
    "B8",
    "1 validation error detected: Value '{id}' at 'messages.{i}.member.content.{j}.member."
    "{kind}.toolUseId' failed to satisfy constraint: Member must satisfy regular expression "
    "pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64",
    "unverified",
    "API_runtime_ToolUseBlock (pattern and length documented; the text is inferred)",
    "models other than Ministral; Kimi also takes `.` and `:` (`functions.name:0`)",
    lambda p: p.id_max != 9,
    seen=(
        Evidence(
            "acceptance",
            "against",
            *_KIMI_ON_BEDROCK,
            part=True,
        ),
    ),
    basis="documented",
    path="messages.{i}.content.{j}",
)

# UNVERIFIED: the AWS validation format (1-based member indices) for a null field.
RESULT_WITHOUT_ID = Rule(
    "bedrock.result_without_id",
    "B8",
    "1 validation error detected: Value null at 'messages.{i}.member.content.{j}.member."
    "toolResult.toolUseId' failed to satisfy constraint: Member must not be null",
    "unverified",
    "the AWS validation-error format (1-based member indices)",
    basis="documented",
)

DUPLICATE_TOOL_USE_ID = Rule(
    "bedrock.duplicate_tool_use_id",
    "B9",
    "messages.{i}.content.{j}: Duplicate toolUseId {id}. Tool use ids must be unique.",
    "unverified",
    "BerriAI/litellm#20049 (rejected; the text was never captured)",
    basis="observed",
    path="messages.{i}.content.{j}",
)
B10 = "The model returned the following errors: "
# UNVERIFIED wording (the AWS validation format); the rule was seen in sigoden/aichat#1550
# (2026-09): a toolResult's json content block holds a JSON object, not a list or a scalar.
RESULT_JSON_NOT_OBJECT = Rule(
    "bedrock.result_json_not_object",
    "B11",
    "1 validation error detected: Value at 'messages.{i}.member.content.{j}.member.toolResult."
    "content.{k}.member.json' failed to satisfy constraint: Member must be a JSON object",
    "unverified",
    "sigoden/aichat#1550 (2026-09); API_runtime_ToolResultContentBlock (json: a JSON document)",
    "every model, on a wire body: repair sends the value as its JSON text",
    basis="observed",
    since="2026-09",
)

MIXED_TOOL_USE_TURN = Rule(
    "bedrock.mixed_tool_use_turn",
    "B3",
    "messages.{i}.content: Conversation blocks and tool use blocks cannot be provided in the "
    "same turn.",
    "observed",
    "strands-agents/harness-sdk#1223 (Llama); langchain-ai/langchain-aws#1118",
    "without a model, Llama, Mistral (a turn with reasoning is exempt); not Claude, Nova, "
    "Kimi, nor a model of another family named (Cohere)",
    profile_has("calls_only"),
    seen=(
        Evidence(
            "acceptance",
            "against",
            *_KIMI_ON_BEDROCK,
        ),
    ),
    families=("llama", "mistral"),
    path="messages.{i}.content",
)

#: Claude behind Converse answers in Anthropic's words, wrapped, a call whose answering
#: turn holds no results at all (Converse's own B1 check names a turn that holds some).
MISSING_RESULT_CLAUDE = Rule(
    "bedrock.missing_result",
    "B1",
    B10 + "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
    "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the "
    "next message. (reason: TOOL_USE_RESULT_MISMATCH)",
    "observed",
    "n8n-io/n8n#16987; 2FastLabs/agent-squad#396; BenedictKing/ccx#187 (the reason suffix, 2026)",
    "Claude, when the answering turn holds no result (Converse lets it through; the "
    "model names the call turn)",
    profile_has("claude_words"),
)

INVALID_TOOL_USE_ID_MISTRAL = Rule(
    "bedrock.invalid_tool_use_id",
    "B8",
    MISTRAL_INVALID_ID.text,
    "observed",
    "vercel/ai#11802 (ministral-3 refuses Bedrock's own tooluse_ ids)",
    "Ministral (not other Mistral models: Pixtral Large took tooluse_ ids)",
    lambda p: p.id_max == 9,
    seen=(
        Evidence(
            "acceptance",
            "against",
            "pydantic/pydantic-ai@4fda3898 tests/models/cassettes/test_bedrock/test_bedrock_"
            "media_kind_delivered_in_tool_result[mistral_document].yaml",
            "pixtral",
            "bedrock",
            "2026-07",
            "us.mistral.pixtral-large-2502-v1:0",
        ),
    ),
    path="messages.{i}.content.{j}",
)

THINKING_NOT_FIRST = Rule(
    "bedrock.thinking_not_first",
    "B10",
    B10 + ANTHROPIC_THINKING_NOT_FIRST.text,
    "documented",
    "AWS extended thinking with tool use; anomalyco/opencode#3077",
    "Claude with thinking on",
    path="messages.{i}.content.0.type",
)


class Bedrock(Profile):
    """Without a model: the strictest rules of any model behind Converse (a result turn
    holds only results, an assistant turn with tool use holds no text, ids
    ``[a-zA-Z0-9_-]{1,64}``, user first). A model id gives its family's own rules."""

    name = "bedrock"
    results_only = True
    bridge_after_results = True
    strict_alternation = True
    first_user = True
    id_pattern = re.compile(r"[a-zA-Z0-9_-]+")
    id_max = 64
    #: An assistant turn with tool use may hold no text or media (Llama, Mistral). A
    #: turn holding signed reasoning is exempt: only Claude replays it, and Claude
    #: accepts text beside tool use.
    calls_only = True
    #: Which other blocks a result turn may hold: none, text and images, or any.
    result_turn: ClassVar[str] = "results"
    #: Claude words a missing result as Anthropic does, behind Converse's prefix.
    claude_words: ClassVar[bool] = False
    #: Nova's server tools answer a toolUse with a toolResult in the same assistant turn.
    inline_server_results: ClassVar[bool] = False
    invalid_id: ClassVar[Rule] = INVALID_TOOL_USE_ID

    def for_model(self, model: str) -> Profile:
        return FAMILIES.get(bedrock_family(model) or "", self)

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # A json content block that is no object goes as its JSON text: nothing is lost,
        # and a text block is what every model takes in a result.
        out, fixes = natives, []
        for at in sorted({v.index for v in left if v.code == "bedrock.result_json_not_object"}):
            m = out[at] if fmt == "bedrock" and 0 <= at < len(out) else None
            if not isinstance(m, dict) or not isinstance(m.get("content"), list):
                continue
            content, ids = [], []
            for b in m["content"]:
                inner = b.get("toolResult") if isinstance(b, dict) else None
                parts = inner.get("content") if isinstance(inner, dict) else None
                if (
                    not isinstance(inner, dict)
                    or not isinstance(parts, list)
                    or not any(_bad_json(p) for p in parts)
                ):
                    content.append(b)
                    continue
                fixed = [{"text": json.dumps(p["json"])} if _bad_json(p) else p for p in parts]
                content.append({**b, "toolResult": {**inner, "content": fixed}})
                ids.append(str(inner.get("toolUseId")))
            if out is natives:
                out = list(natives)
            out[at] = {**m, "content": content}
            fixes.append(
                Fix(
                    "result_json_as_text",
                    at,
                    tuple(ids),
                    "a json block that is no object sent as its text",
                )
            )
        return out, fixes

    def prepare(self, messages: list[Message]) -> list[Message]:
        if not self.inline_server_results:
            return messages
        for m in messages:
            if m.role != "assistant":
                continue
            answered = {b.id for b in m.blocks if b.kind == "result"}
            if not answered:
                continue
            calls = {b.id for b in m.blocks if b.kind == "call"} & answered
            m.blocks = [
                replace(b, kind="server_call" if b.kind == "call" else "server_result")
                if b.kind in ("call", "result") and b.id in calls
                else b
                for b in m.blocks
            ]
        return messages

    def _accepts_in_result_turn(self, b: Block) -> bool:
        if self.result_turn == "any":
            return True
        if self.result_turn == "media":
            return b.kind == "text" or (b.kind == "image" and b.sub in ("image", "document:pdf"))
        return False

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        ts = turns(messages, "tool", ctx.shape)
        out: list[Violation] = []
        add = out.append
        if ts and ts[0].role != "user":
            add(FIRST_NOT_USER.violation(ts[0].first))
        seen: set[str] = set()
        has_tool_blocks = False
        for k, t in enumerate(ts):
            if k and ts[k - 1].role == t.role:
                add(ROLES_NOT_ALTERNATING.violation(t.first))
            results = [
                it for it in t.items if it.block.kind == "result" and not it.block.missing_id
            ]
            calls = [it for it in t.items if it.block.kind == "call"]
            has_tool_blocks = has_tool_blocks or bool(results or calls)
            for it in t.items:
                b = it.block
                if b.kind == "text" and b.text is not None and not b.text.strip():
                    add(BLANK_TEXT.violation(it.msg, i=it.msg, j=it.pos))
                if b.missing_id:
                    add(
                        RESULT_WITHOUT_ID.violation(
                            it.msg,
                            (),
                            f"messages.{it.msg}.content.{it.pos}.toolResult.toolUseId",
                            i=it.msg + 1,
                            j=it.pos + 1,
                        )
                    )
                elif b.kind in ("call", "result"):
                    bid = pid(b)
                    if b.id is not None and not self.valid_id(bid):
                        kind = "toolUse" if b.kind == "call" else "toolResult"
                        add(
                            self.invalid_id.violation(
                                it.msg,
                                (bid,),
                                id=bid,
                                i=it.msg,
                                j=it.pos,
                                kind=kind,
                            )
                        )
                if b.kind == "call":
                    if b.id is not None and b.id in seen:
                        add(
                            DUPLICATE_TOOL_USE_ID.violation(
                                it.msg,
                                (pid(b),),
                                i=it.msg,
                                j=it.pos,
                                id=b.id,
                            )
                        )
                    seen.add(pid(b))
                if b.kind == "result" and isinstance(b.native, dict):
                    inner = b.native.get("toolResult")
                    parts = inner.get("content") if isinstance(inner, dict) else None
                    for n, part in enumerate(parts if isinstance(parts, list) else ()):
                        if _bad_json(part):
                            add(
                                RESULT_JSON_NOT_OBJECT.violation(
                                    it.msg,
                                    (pid(b),),
                                    f"messages.{it.msg}.content.{it.pos}.toolResult"
                                    f".content.{n}.json",
                                    i=it.msg + 1,
                                    j=it.pos + 1,
                                    k=n + 1,
                                )
                            )
                if b.kind == "result" and b.is_error and b.empty:
                    add(
                        EMPTY_ERROR_RESULT.violation(
                            it.msg,
                            (pid(b),),
                            i=it.msg,
                            j=it.pos,
                        )
                    )
            if results and any(
                it.block.kind in ("text", "image") and not self._accepts_in_result_turn(it.block)
                for it in t.items
            ):
                add(MIXED_RESULT_TURN.violation(t.first, i=t.first))
            if t.role == "user" and results:
                prev = ts[k - 1] if k else None
                prev_calls = (
                    [pid(it.block) for it in prev.items if it.block.kind == "call"]
                    if prev is not None and prev.role == "assistant"
                    else []
                )
                if len(results) > len(prev_calls):
                    add(
                        TOO_MANY_RESULTS.violation(
                            t.first,
                            tuple(pid(it.block) for it in results),
                            i=t.first,
                        )
                    )
            if (
                calls
                and self.calls_only
                and t.role == "assistant"
                and any(it.block.kind in ("text", "image") for it in t.items)
                and not any(it.block.kind in ("thinking", "reasoning") for it in t.items)
            ):
                add(
                    MIXED_TOOL_USE_TURN.violation(
                        t.first,
                        tuple(pid(it.block) for it in calls),
                        i=t.first,
                    )
                )
            if calls:
                nxt = ts[k + 1] if k + 1 < len(ts) else None
                got = (
                    {pid(it.block) for it in nxt.items if it.block.kind == "result"}
                    if nxt is not None and nxt.role == "user"
                    else set()
                )
                missing = tuple(
                    dict.fromkeys(pid(it.block) for it in calls if pid(it.block) not in got)
                )
                if missing:
                    # Converse's own check reads the answering turn once it holds results
                    # and names that turn; one with none gets through to Claude, which
                    # names the call turn in Anthropic's words.
                    if self.claude_words and not got:
                        at, rule, path = t.first, MISSING_RESULT_CLAUDE, f"messages.{t.first}"
                    else:
                        at = nxt.first if nxt is not None else t.msgs[-1] + 1
                        rule, path = MISSING_RESULT, f"messages.{at}.content"
                    add(rule.violation(at, missing, path, i=at, ids=", ".join(missing)))
        if has_tool_blocks and ctx.tool_config is False:
            add(MISSING_TOOL_CONFIG.violation(0))
        if ctx.thinking:
            v = thinking_start_violation(ts, THINKING_NOT_FIRST)
            if v is not None:
                add(v)
        return out


def _bad_json(part: Any) -> bool:
    return isinstance(part, dict) and "json" in part and not isinstance(part["json"], dict)


class _Claude3(Bedrock):
    """Claude 3.x: result turns hold only results; text beside tool use is fine."""

    calls_only = False
    claude_words = True
    fast_key = "bedrock-claude"


class _Claude4(Bedrock):
    """Claude 4 and later: a result turn may also carry text and images (documents
    other than PDF and video are still refused)."""

    calls_only = False
    claude_words = True
    results_only = False
    bridge_after_results = False
    result_turn = "media"
    fast_key = "bedrock-claude4"


class _Nova(Bedrock):
    """Nova: any content beside results, text beside tool use, and server tools whose
    results sit in the assistant turn."""

    calls_only = False
    results_only = False
    bridge_after_results = False
    result_turn = "any"
    inline_server_results = True
    # The no-op checker would see Nova's inline server results as misplaced ones.
    fast_path = False


class _Llama(Bedrock):
    """Llama: results alone, no text beside tool use (the strict set)."""


class _Mistral(Bedrock):
    """Mistral models: the strict set (Pixtral Large took Bedrock's own ``tooluse_``
    ids, so the 9-character rule is Ministral's alone)."""


class _Ministral(Bedrock):
    """Ministral: the strict set, and Mistral's own 9-character ids."""

    id_pattern = Mistral.id_pattern
    id_max = 9
    invalid_id = INVALID_TOOL_USE_ID_MISTRAL
    new_id = Mistral.new_id
    # Stricter ids than the strict profile's no-op checker knows.
    fast_path = False


class _Kimi(Bedrock):
    """Kimi (Moonshot): its own ``functions.name:0`` ids and text beside tool use were
    taken; whether a result turn may hold more is unconfirmed, so not reported."""

    id_pattern = re.compile(r"[a-zA-Z0-9_.:-]+")
    calls_only = False
    results_only = False
    bridge_after_results = False
    result_turn = "any"
    # Wider ids than the strict profile's no-op checker knows.
    fast_path = False


FAMILIES: dict[str, Profile] = {
    "claude-3": _Claude3(),
    "claude-4": _Claude4(),
    "nova": _Nova(),
    "llama": _Llama(),
    "mistral": _Mistral(),
    "ministral": _Ministral(),
    "kimi": _Kimi(),
}


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_RESULT,
    MISSING_RESULT_CLAUDE,
    TOO_MANY_RESULTS,
    MIXED_RESULT_TURN,
    MIXED_TOOL_USE_TURN,
    ROLES_NOT_ALTERNATING,
    FIRST_NOT_USER,
    MISSING_TOOL_CONFIG,
    EMPTY_ERROR_RESULT,
    RESULT_JSON_NOT_OBJECT,
    BLANK_TEXT,
    INVALID_TOOL_USE_ID,
    INVALID_TOOL_USE_ID_MISTRAL,
    RESULT_WITHOUT_ID,
    DUPLICATE_TOOL_USE_ID,
    THINKING_NOT_FIRST,
)
