"""Every rule toolpair checks: its code, the provider's own text, how sure we are of it and
where it was seen, and which models and hosts it applies to.

The texts are the very constants the provider profiles report, so this table cannot say
one thing while a profile says another; a test holds every code a profile can report to
an entry here, and ``docs/rules.md`` to what `markdown` makes of it.

    toolpair rules bedrock --model meta.llama3-3-70b-instruct-v1:0
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from toolpair.providers import PROFILES, Profile, get_profile, model_families
from toolpair.providers import anthropic as a
from toolpair.providers import bedrock as b
from toolpair.providers import deepseek as d
from toolpair.providers import gemini as g
from toolpair.providers import mistral as m
from toolpair.providers import openai as o
from toolpair.providers import responses as r
from toolpair.providers import vertex as v

Status = Literal["documented", "observed", "unverified"]
#: A recorded exchange (request and the provider's answer, kept in a public test suite),
#: an issue thread that shows the request and the error, or the provider's documentation.
Kind = Literal["refusal", "acceptance", "thread", "docs"]
Stance = Literal["for", "against"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence for or against a rule, where it was seen.

    ``family`` and ``host`` are empty where the evidence holds for every model and host
    of the API; ``date`` is when it was seen (``YYYY`` or ``YYYY-MM``), empty when unknown;
    ``model`` the model id as recorded. ``part`` marks evidence against a part of the
    rule only (the family keeps the rule in its own form, e.g. a wider id pattern).
    """

    kind: Kind
    stance: Stance
    source: str
    family: str = ""
    host: str = ""
    date: str = ""
    model: str = ""
    part: bool = False

    def __str__(self) -> str:
        where = ", ".join(x for x in (self.family, self.host, self.date) if x)
        label = {"refusal": "recorded 400", "acceptance": "recorded 200"}.get(self.kind, self.kind)
        return f"{label}: {self.source}" + (f" ({where})" if where else "")


_THREAD = re.compile(r"^[\w.-]+/[\w.-]+#")


def _parsed(rule: Rule) -> tuple[Evidence, ...]:
    """The sources named in ``evidence`` as Evidence for the rule: issue threads (each
    ``owner/repo#n`` and the numbers after it), and documentation for the rest."""
    out = []
    for part in (x.strip() for x in rule.evidence.split(";")):
        if not part:
            continue
        kind: Kind = "thread" if _THREAD.match(part) else "docs"
        out.append(Evidence(kind, "for", part))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule as one provider (or host) enforces it.

    ``ref`` numbers the rule within its provider (A1, B3, R3...); ``text`` is the message
    template the profile reports, with ``{i}``-style placeholders; ``status`` says
    whether the provider documents it, it was observed in a real error, or the wording
    is inferred; ``evidence`` names the public sources; ``applies`` says, in words,
    for which models it holds, and ``when`` decides it for a profile. ``seen`` holds the
    recorded exchanges and reports for and against it by family, host and date, and
    ``since`` says from when it holds (or until when) where the provider changed.

    For a named model a rule that a recorded acceptance contradicts, or that only a
    thread supports against one, is not enforced; without a model the strict set keeps
    it only where a refusal somewhere shows it (``record`` has both).
    """

    code: str
    ref: str
    text: str
    status: Status
    evidence: str
    applies: str = "every model"
    when: Callable[[Profile], bool] | None = None
    seen: tuple[Evidence, ...] = ()
    since: str = ""
    #: How the rule itself (not its wording) is known, where that differs from
    #: ``status``: a required field whose error text is inferred is still documented.
    basis: Status | None = None
    #: The model families the refusals behind an observed rule were seen for, where they
    #: single some out; empty: seen across the API's models without a family distinction.
    families: tuple[str, ...] = ()

    @property
    def provider(self) -> str:
        return self.code.split(".", 1)[0]

    @property
    def record(self) -> tuple[Evidence, ...]:
        """Every piece of evidence: the sources of ``evidence``, then ``seen``."""
        return _parsed(self) + self.seen

    @property
    def against(self) -> tuple[Evidence, ...]:
        return tuple(e for e in self.seen if e.stance == "against")

    @property
    def grounds(self) -> Status:
        """How the rule itself is known: ``basis`` where given, else ``status``."""
        return self.basis or self.status


def enforced(rule: Rule, families: tuple[str, ...]) -> bool:
    """Do no harm (docs/rules.md, "Named models"): whether ``rule`` fires for a named
    model placed in ``families`` (empty for an id that cannot be placed).

    It fires when the API documents it for every model behind it, or a refusal shows it
    for the model's family (an observed rule whose refusals single out no family holds
    for every model of the API), and no recorded acceptance of that family stands
    against the whole rule. A rule known only by inference, or only from other
    families, does not fire; without a model the strict set keeps every rule."""
    if any(
        e.kind == "acceptance" and not e.part and e.family and e.family in families
        for e in rule.against
    ):
        return False
    if rule.grounds == "documented":
        return True
    if rule.grounds == "unverified":
        return False
    return not rule.families or any(f in families for f in rule.families)


def _is(name: str) -> Callable[[Profile], bool]:
    return lambda p: p.name == name


def _attr(name: str, value: object = True) -> Callable[[Profile], bool]:
    return lambda p: getattr(p, name, None) == value


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

A = "anthropic"
RULES: tuple[Rule, ...] = (
    # --- Anthropic Messages ---------------------------------------------------------
    Rule(
        "anthropic.missing_result",
        "A1",
        a.A1,
        "documented",
        "platform.claude.com handle-tool-calls; anthropics/claude-code#5989, #1237",
        seen=(
            Evidence(
                "thread",
                "for",
                "anthropics/claude-code#39316, #54638 (Claude Code 2.1 shows this 400 as `API "
                "Error: 400 due to tool use concurrency issues. Run /rewind to recover the "
                "conversation.`)",
                "",
                "anthropic",
                "2026-03",
            ),
        ),
    ),
    Rule(
        "anthropic.results_not_first",
        "A2",
        a.A1,
        "documented",
        "handle-tool-calls (results first); handling-stop-reasons",
    ),
    Rule(
        "anthropic.content_after_tool_use",
        "A2",
        a.A1,
        "observed",
        "text after a tool_use is merged into the call turn; anthropics/claude-code#5989",
    ),
    Rule(
        "anthropic.unexpected_result",
        "A3",
        a.A3,
        "observed",
        "anthropics/claude-code#13460, #12162, #18947",
        seen=(
            Evidence(
                "thread",
                "for",
                "anthropics/claude-code#40305 (orphan tool_result blocks after compaction, which "
                "Claude Code 2.1 shows as `tool use concurrency issues`)",
                "",
                "anthropic",
                "2026-03",
            ),
        ),
    ),
    Rule(
        "anthropic.result_without_id",
        "A3",
        a.A_NO_ID,
        "unverified",
        "schema error in the form of A6; no public copy of the exact text",
        basis="documented",
    ),
    Rule(
        "anthropic.duplicate_tool_use_id",
        "A4",
        a.A4,
        "observed",
        "trycua/cua#524; anthropics/claude-code#20901",
    ),
    Rule(
        "anthropic.duplicate_result",
        "A5",
        a.A5,
        "observed",
        "vectorize-io/hindsight#4250; OpenHands/software-agent-sdk#2114",
    ),
    Rule(
        "anthropic.invalid_tool_use_id",
        "A6",
        a.A6,
        "observed",
        "RooCodeInc/Roo-Code#10649; tailcallhq/forgecode#1142 (length limit unverified)",
    ),
    Rule(
        "anthropic.invalid_server_tool_use_id",
        "A7",
        a.A7,
        "observed",
        "ding113/claude-code-hub#470",
    ),
    Rule(
        "anthropic.invalid_tool_name",
        "A8",
        # The template doubles the braces of the pattern's quantifier for str.format.
        a.A8_NAME.replace("{{", "{").replace("}}", "}"),
        "documented",
        "implement-tool-use (name pattern); apify/tester-mcp-client#11",
    ),
    Rule(
        "anthropic.duplicate_tool_name",
        "A8",
        a.A8_UNIQUE,
        "observed",
        "anthropics/claude-code#10687",
    ),
    Rule(
        "anthropic.empty_error_result",
        "A9",
        a.A9,
        "observed",
        "bytedance/trae-agent#230; jlevy/markform#153",
    ),
    Rule(
        "anthropic.empty_text",
        "A10",
        a.A10,
        "observed",
        "anthropics/claude-code#59812; run-llama/llama_index#17278",
    ),
    Rule(
        "anthropic.empty_text",
        "A10",
        a.A10_BLANK,
        "unverified",
        "whitespace-only text alone in its message; home-assistant/core#175637",
        "without a model: a whitespace-only text where its message has no other text; a "
        "named model: nor a tool use",
        seen=(
            Evidence(
                "acceptance",
                "against",
                "simonw/llm-anthropic@3ae428f3 tests/cassettes/test_anthropic/test_tools.yaml "
                "(a text of one space beside two tool_use blocks)",
                "claude-4",
                "anthropic",
                "2026-04",
                "claude-haiku-4-5-20251001",
                part=True,
            ),
        ),
        basis="observed",
    ),
    Rule(
        "anthropic.trailing_whitespace",
        "A10",
        a.A10_TRAILING,
        "observed",
        "aliasrobotics/cai#182; tailcallhq/forgecode#1872",
    ),
    Rule(
        "anthropic.tool_use_name_too_long",
        "A12",
        a.A12_NAME,
        "observed",
        "anthropics/claude-code#2673; openclaw/openclaw#13134 (2026-02); claude-code#94799",
        "every model: a tool_use block's name (the tool definitions have their own limit)",
    ),
    Rule(
        "anthropic.system_first",
        "Y1",
        a.Y1_FIRST,
        "observed",
        "anthropics/claude-code#64147 (2026-05); LeenHawk/gproxy#209 (2026-09, the whole text)",
        "mid-conversation system messages (Opus 4.8 and later, also on Bedrock and Vertex), "
        "on a wire body; not the directive-only form (content: [])",
        since="2026-05 (mid-conversation system messages)",
    ),
    Rule(
        "anthropic.system_not_before_assistant",
        "Y2",
        a.Y2_BEFORE,
        "observed",
        "anthropics/claude-code#73821 (2026-07); langchain4j/langchain4j#5603",
        "a system message followed by anything but an assistant turn (so never two in a row), "
        "on a wire body; also one carrying tool_addition or tool_removal blocks (beta "
        "mid-conversation-tool-changes-2026-07-01: a tool_removal sits right before an "
        "assistant turn or last)",
        since="2026-05 (mid-conversation system messages)",
    ),
    Rule(
        "anthropic.system_between_call_and_result",
        "Y2",
        a.Y2_BEFORE,
        "observed",
        "platform.claude.com mid-conversation-system-messages (never between a tool_use and "
        "its tool_result); langchain4j/langchain4j#5603; anthropics/claude-code#73821 (the text)",
        "a system message between an assistant turn's tool_use blocks and the turn with their "
        "results, on a wire body; repair moves it after the results",
        since="2026-05 (mid-conversation system messages)",
    ),
    Rule(
        "anthropic.system_after_assistant",
        "Y3",
        a.Y3_AFTER,
        "unverified",
        "platform.claude.com mid-conversation-system-messages (after a user turn, or an "
        "assistant turn ending in a server tool use); elgorro/aiquila#413",
        "a system message after an assistant turn that does not end in a server tool use, on a "
        "wire body",
        basis="documented",
        since="2026-05 (mid-conversation system messages)",
    ),
    Rule(
        "anthropic.server_tool_pending",
        "S1",
        a.S1,
        "documented",
        "handle-tool-calls (deferred server tools); handling-stop-reasons#tool-use",
    ),
    Rule(
        "anthropic.unexpected_server_result",
        "S4",
        a.S4,
        "observed",
        "anthropics/claude-code#64383, #80439, #62577",
    ),
    Rule(
        "anthropic.missing_toolset_name",
        "T2",
        a.T2,
        "unverified",
        "handle-tool-calls (toolset members echo toolset_name); no public copy of the 400",
        basis="documented",
    ),
    Rule(
        "anthropic.thinking_not_first",
        "H1",
        a.H1,
        "documented",
        "extended-thinking; deepset-ai/haystack-core-integrations#2146; mastra-ai/mastra#7799",
        "with thinking on",
    ),
    Rule(
        "anthropic.thinking_disabled",
        "H2",
        a.H2,
        "observed",
        "tailcallhq/forgecode#1853",
        "with thinking off",
    ),
    Rule(
        "anthropic.invalid_signature",
        "H3",
        a.H3,
        "observed",
        "anthropics/claude-code#10627; anthropics/anthropic-sdk-python#1598",
    ),
    # --- Bedrock Converse -----------------------------------------------------------
    Rule(
        "bedrock.missing_result",
        "B1",
        b.B1,
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
    ),
    Rule(
        "bedrock.missing_result",
        "B1",
        b.B1_CLAUDE,
        "observed",
        "n8n-io/n8n#16987; 2FastLabs/agent-squad#396; BenedictKing/ccx#187 (the reason "
        "suffix, 2026)",
        "Claude, when the answering turn holds no result (Converse lets it through; the "
        "model names the call turn)",
        _attr("claude_words"),
    ),
    Rule(
        "bedrock.too_many_results",
        "B2",
        b.B2,
        "observed",
        "pydantic/pydantic-ai#2327; Just-Curieous/Curie#16",
    ),
    Rule(
        "bedrock.mixed_result_turn",
        "B3",
        b.B3,
        "observed",
        "BerriAI/litellm#6053 (Claude 3 Opus); langchain-ai/langchain-aws#141",
        "without a model, Claude 3, Llama, Mistral; Claude 4 refuses only media other than "
        "images and PDF; Nova never; Kimi unconfirmed, so not reported",
        lambda p: getattr(p, "result_turn", "results") != "any",
        families=("claude-3", "claude-4", "llama", "mistral"),
    ),
    Rule(
        "bedrock.mixed_tool_use_turn",
        "B3",
        b.B3_USE,
        "observed",
        "strands-agents/harness-sdk#1223 (Llama); langchain-ai/langchain-aws#1118",
        "without a model, Llama, Mistral (a turn with reasoning is exempt); not Claude, Nova, "
        "Kimi, nor a model of another family named (Cohere)",
        _attr("calls_only"),
        seen=(
            Evidence(
                "acceptance",
                "against",
                *_KIMI_ON_BEDROCK,
            ),
        ),
        # Seen refused for Llama and Mistral only: a model of another family (Cohere's
        # Command R through Converse) is not held to it by name.
        families=("llama", "mistral"),
    ),
    Rule(
        "bedrock.roles_not_alternating",
        "B4",
        b.B4,
        "observed",
        "microsoft/semantic-kernel#10281; langchain-ai/langchain-aws#130",
        seen=(
            # Claude 3.5 through Converse, the request shown: no recording of a 200 for
            # consecutive turns of one role was found to stand against them.
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
        ),
    ),
    Rule(
        "bedrock.first_not_user",
        "B5",
        b.B5,
        "observed",
        "langgenius/dify#12340; strands-agents/sdk-typescript#727",
    ),
    Rule(
        "bedrock.missing_tool_config",
        "B6",
        b.B6,
        "observed",
        "langgenius/dify#17545, #16421",
    ),
    Rule(
        "bedrock.empty_error_result",
        "B7",
        b.B7_ERROR,
        "observed",
        "aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15",
    ),
    Rule(
        "bedrock.result_json_not_object",
        "B11",
        b.B11,
        "unverified",
        "sigoden/aichat#1550 (2026-09); API_runtime_ToolResultContentBlock (json: a JSON document)",
        "every model, on a wire body: repair sends the value as its JSON text",
        basis="observed",
        since="2026-09",
    ),
    Rule(
        "bedrock.blank_text",
        "B7",
        b.B7_BLANK,
        "observed",
        "aws-samples/bedrock-engineer#8",
    ),
    Rule(
        "bedrock.invalid_tool_use_id",
        "B8",
        b.B8,
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
    ),
    Rule(
        "bedrock.invalid_tool_use_id",
        "B8",
        m.M1,
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
    ),
    Rule(
        "bedrock.result_without_id",
        "B8",
        b.B_NO_ID,
        "unverified",
        "the AWS validation-error format (1-based member indices)",
        basis="documented",
    ),
    Rule(
        "bedrock.duplicate_tool_use_id",
        "B9",
        b.B9,
        "unverified",
        "BerriAI/litellm#20049 (rejected; the text was never captured)",
        basis="observed",
    ),
    Rule(
        "bedrock.thinking_not_first",
        "B10",
        b.B10 + a.H1,
        "documented",
        "AWS extended thinking with tool use; anomalyco/opencode#3077",
        "Claude with thinking on",
    ),
    # --- OpenAI Chat Completions ----------------------------------------------------
    Rule(
        "openai.missing_result",
        "O1",
        o.O1,
        "observed",
        "BerriAI/litellm#10083; router-for-me/CLIProxyAPI#2798",
    ),
    Rule(
        "openai.repeated_call_id",
        "O1",
        o.O1,
        "unverified",
        "one id on two calls leaves one unanswered; O1 is the closest confirmed text",
    ),
    Rule(
        "openai.unexpected_tool_message",
        "O2",
        o.O2,
        "observed",
        "miurla/morphic#136; run-llama/llama_index#10493",
    ),
    Rule(
        "openai.result_without_id",
        "O2",
        o.O_NO_ID,
        "unverified",
        "Groq words it as a missing property (hackclub/ai#22); OpenAI's text inferred",
        basis="documented",
    ),
    Rule(
        "openai.unknown_tool_call_id",
        "O3",
        o.O3,
        "observed",
        "dapr/dapr-agents#145",
    ),
    Rule(
        "openai.duplicate_result",
        "O4",
        o.O4,
        "observed",
        "agno-agi/agno#5116; anomalyco/opencode#1211",
    ),
    Rule(
        "openai.id_too_long",
        "O5",
        o.O5,
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
    ),
    Rule(
        "openai.empty_id",
        "O5",
        o.O5_EMPTY,
        "unverified",
        "OpenAI's standard wording for an empty string field",
        basis="documented",
    ),
    # --- OpenAI Responses -----------------------------------------------------------
    Rule(
        "openai-responses.missing_output",
        "R1",
        r.R1,
        "observed",
        "openai/openai-agents-python#673, #1061",
        "every call item: function_call, custom_tool_call, and (openai-python 3.57 types) "
        "Codex's local_shell_call, shell_call, apply_patch_call and PTC's program, each "
        "answered by its own output type (the wording seen is the function call's)",
    ),
    Rule(
        "openai-responses.orphan_program_call",
        "R8",
        r.R8_ORPHAN,
        "unverified",
        "openai-python 3.57 response_input_item_param (caller.caller_id names the program "
        "item's call_id); OpenHands 4082, openai-agents 3833, vercel/ai 17767 (truncated "
        "programs)",
        "without previous_response_id: a call a program made (Programmatic Tool Calling, "
        "2026-07) needs that program item in the input",
        basis="observed",
    ),
    Rule(
        "openai-responses.caller_not_echoed",
        "R8",
        r.R8_CALLER,
        "unverified",
        "openai-python 3.57 response_input_item_param (every output type carries the "
        "caller of its call); OpenHands 4082, openai-agents 3833",
        "an output of a call a program made",
        basis="observed",
    ),
    Rule(
        "openai-responses.orphan_output",
        "R2",
        r.R2,
        "observed",
        "pydantic/pydantic-ai#4887; agno-agi/agno#9372",
        "without previous_response_id",
    ),
    Rule(
        "openai-responses.result_without_id",
        "R2",
        r.R_NO_ID,
        "unverified",
        "OpenAI's standard wording for a missing required parameter",
        basis="documented",
    ),
    Rule(
        "openai-responses.reasoning_without_following",
        "R3",
        r.R3,
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
    ),
    Rule(
        "openai-responses.call_without_reasoning",
        "R3",
        r.R3_CALL,
        "observed",
        "vercel/ai#7099; continuedev/continue#8933; cookbook reasoning_items",
        "without a model, or for an id toolpair cannot place; not for OpenAI's own models "
        "(gpt-4o, gpt-4.1, gpt-5, o-series): whether an fc_ item needs its reasoning is what "
        "the server stored for it, which the request cannot show",
        _attr("fc_needs_reasoning"),
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
    ),
    Rule(
        "openai-responses.duplicate_item",
        "R4",
        r.R4,
        "observed",
        "vercel/ai#13307, #7883; earendil-works/pi#5147",
    ),
    Rule(
        "openai-responses.bad_item_id",
        "R5",
        r.R5,
        "observed",
        "nodetool-ai/nodetool#4252; laravel/ai#1052",
    ),
    Rule(
        "openai-responses.call_id_too_long",
        "R6",
        r.R6,
        "observed",
        "AnswerDotAI/fastllm#45; openai/codex#14355",
    ),
    Rule(
        "openai-responses.empty_call_id",
        "R6",
        r.R6_EMPTY,
        "unverified",
        "OpenAI's standard wording for an empty string field",
        basis="documented",
    ),
    Rule(
        "openai-responses.item_not_persisted",
        "R7",
        r.R7,
        "observed",
        "can1357/oh-my-pi#41; anomalyco/opencode#7724",
        "with store set to false",
    ),
    # --- Gemini and Vertex AI -------------------------------------------------------
    Rule(
        "gemini.missing_response",
        "G1",
        g.G1,
        "observed",
        "langchain-ai/langchain#27799; GoogleCloudPlatform/generative-ai#368",
    ),
    Rule(
        "gemini.unexpected_response",
        "G1",
        g.G1,
        "observed",
        "google-gemini/deprecated-generative-ai-js#267",
    ),
    Rule(
        "gemini.response_count",
        "G2",
        g.G2,
        "observed",
        "google-gemini/gemini-cli#4217, #16415",
        "every model (without ids only the count is checked); Gemini 2.5 on the Gemini API "
        "takes the responses split across consecutive user turns",
    ),
    Rule(
        "gemini.call_turn_position",
        "G3",
        g.G3,
        "observed",
        "google-gemini/gemini-cli#11814, #26486",
    ),
    Rule(
        "gemini.ends_with_call",
        "G4",
        g.G4,
        "observed",
        "songquanpeng/one-api#836 (an older text)",
    ),
    Rule(
        "gemini.missing_thought_signature",
        "G5",
        g.G5,
        "documented",
        "ai.google.dev thought-signatures; 1jehuang/jcode#518",
        "Gemini 3 (not the image model); Gemini 2.5 Flash-Lite on the Gemini API (from "
        "2026-05); any model with thought_signatures=True; not the rest of Gemini 2.5",
        _is("gemini"),
        seen=(
            Evidence(
                "thread",
                "for",
                "Gitlawb/openclaude#583; rowboatlabs/rowboat#694",
                "gemini-2.5",
                "gemini",
                "2026-04",
            ),
            Evidence(
                "thread",
                "for",
                "Mirrowel/LLM-API-Key-Proxy#160 (through gemini-cli's endpoint)",
                "gemini-2.5",
                "gemini",
                "2026-05",
                "gemini-2.5-flash-lite",
            ),
            Evidence(
                "acceptance",
                "against",
                "simonw/llm-gemini@2a8c855a tests/cassettes/test_gemini/test_tools.yaml",
                "gemini-2.5",
                "gemini",
                "",
                "gemini-2.5-flash",
                # Still there on request: thought_signatures=True holds any model to it.
                part=True,
            ),
        ),
    ),
    Rule(
        "gemini.empty_parts",
        "G6",
        g.G6,
        "observed",
        "langchain-ai/langchain-google#1056",
        "the Gemini API",
        _is("gemini"),
    ),
    Rule(
        "gemini.foreign_thought_signature",
        "G8",
        g.G8,
        "observed",
        "lbjlaq/Antigravity-Manager#3342; earendil-works/pi#6996; heyhuynhgiabuu/proxypal#119 "
        "(worded 'Corrupted thought signature.')",
        "Gemini 3 on the Gemini API, in the current turn, where the model that produced a "
        "signature is known (signature_models=) and differs from the request's in version or "
        "tier; repair puts the documented skip value in its place. Not Vertex AI (documented "
        "to take it); not Gemini 2.5 (no refusal found)",
        _attr("foreign_signatures_refused"),
        families=("gemini-3",),
        seen=(
            Evidence(
                "docs",
                "against",
                "docs.cloud.google.com gemini-enterprise-agent-platform thought-signatures "
                "(the zh-CN page, 'Thought signatures from other models'): a request holding "
                "signatures from an incompatible model still succeeds, its thoughts left out",
                "",
                "vertex",
                "2026",
            ),
        ),
    ),
    Rule(
        "vertex.missing_thought_signature",
        "G5",
        v.V_SIGNATURE,
        "observed",
        "RooCodeInc/Roo-Code#9499; QwenLM/qwen-code#1187",
        "Gemini 3 on Vertex AI (as G5)",
        _is("vertex"),
    ),
    Rule(
        "gemini.empty_parts",
        "G6",
        v.V_EMPTY,
        "observed",
        "envoyproxy/ai-gateway#2686 (the text past 'parts field' is unverified)",
        "Vertex AI",
        _is("vertex"),
    ),
    Rule(
        "vertex.mixed_response_turn",
        "V1",
        v.V1,
        "observed",
        "Prism-Shadow/agenthub#189; envoyproxy/ai-gateway#2686 (Gemini 3.7 Flash on Vertex)",
        "Vertex AI without a model, and Gemini 3; not Gemini 2.5 (recorded 200s), nor another "
        "family named",
        families=("gemini-3",),
        seen=(
            Evidence(
                "acceptance",
                "against",
                "crmne/ruby_llm@fb5a49bf spec/fixtures/vcr_cassettes/chat_tool_attachments_"
                "vertexai_gemini-2_5-flash_returns_text_and_attachments_from_tools.yml (a "
                "functionResponse and text in one user turn; 3 recordings)",
                "gemini-2.5",
                "vertex",
                "2026",
                "gemini-2.5-flash",
            ),
        ),
    ),
    Rule(
        "vertex.unknown_id_field",
        "V2",
        v.V2,
        "observed",
        "pydantic/pydantic-ai#5081; vercel/ai#15664 (the v1 API)",
        "Vertex AI without a model, on a wire body: v1 refuses the field, v1beta1 takes it, "
        "and which one is in the URL, not the request",
        _attr("ids_allowed", False),
        seen=(
            Evidence(
                "acceptance",
                "against",
                "pydantic/pydantic-ai@4fda3898 tests/models/cassettes/test_multimodal_tool_"
                "returns/test_mixed_content_ordering[google_vertex].yaml (v1beta1)",
                "gemini-3",
                "vertex",
                "2026-06",
                "gemini-3-flash-preview",
            ),
        ),
    ),
    # --- Mistral --------------------------------------------------------------------
    Rule(
        "mistral.invalid_id",
        "M1",
        m.M1,
        "documented",
        "mistral-common validator.py; jackmpcollins/magentic#276",
    ),
    Rule(
        "mistral.count_mismatch",
        "M2",
        m.M2,
        "documented",
        "mistral-common validator.py; mistralai/client-python#234",
    ),
    Rule(
        "mistral.unexpected_id",
        "M3",
        m.M3_UNEXPECTED,
        "documented",
        "mistral-common MistralRequestValidatorV13",
        "tokenizer 13 and later",
    ),
    Rule(
        "mistral.duplicate_result",
        "M3",
        m.M3_DUP_RESULT,
        "documented",
        "mistral-common MistralRequestValidatorV13",
        "tokenizer 13 and later",
    ),
    Rule(
        "mistral.duplicate_call_id",
        "M3",
        m.M3_DUP_CALL,
        "documented",
        "mistral-common MistralRequestValidatorV13",
        "tokenizer 13 and later",
    ),
    Rule(
        "mistral.unexpected_role",
        "M4",
        m.M4,
        "documented",
        "mistral-common _validate_message_order; avante-corp/avante.nvim#2562",
        "without a model (mistral-common's validator, as local servers run it); not a "
        "hosted model named",
        # The refusal on record (mistral-inference#135) came from the local library's
        # validator, not the hosted API: a hosted model is not held to it by name.
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
    ),
    Rule(
        "mistral.bad_last_role",
        "M5",
        m.M5,
        "documented",
        "mistral-common _validate_last_message; NEKOparapa/AiNiee#641",
    ),
    Rule(
        "mistral.content_and_tool_calls",
        "M6",
        m.M6,
        "documented",
        "mistral-common _validate_assistant_message",
        "tokenizers before 5",
    ),
    Rule(
        "mistral.result_without_id",
        "M7",
        m.M7,
        "documented",
        "mistral-common validator.py (serving mode)",
    ),
    Rule(
        "mistral.invalid_name",
        "M7",
        m.M7_NAME,
        "documented",
        "mistral-common validator.py",
    ),
    Rule(
        "mistral.empty",
        "M8",
        m.M8_EMPTY,
        "documented",
        "mistral-common _validate_message_list_structure",
    ),
    Rule(
        "mistral.bad_start",
        "M8",
        m.M8_START,
        "documented",
        "mistral-common _validate_message_list_structure",
    ),
    # --- DeepSeek -------------------------------------------------------------------
    Rule(
        "deepseek.missing_reasoning_content",
        "D1",
        d.D1,
        "observed",
        "continuedev/continue#10193 (V3.2); Sylinko/Everywhere#287 (V3.2, 2026-02)",
        "thinking on in the body (deepseek-reasoner is held to D2), on a wire body",
        _attr("reasoning_every_turn", False),
        since="V3.2: the current tool loop's assistant turns; V4 asks it of every "
        "assistant turn (D2)",
    ),
    Rule(
        "deepseek.reasoning_not_passed_back",
        "D2",
        d.D2,
        "observed",
        "Zoo-Code-Org/Zoo-Code#201 (V4); danny-avila/LibreChat#13366 (enforced gradually from "
        "2026-05)",
        "deepseek-v4 in thinking mode, and deepseek-reasoner (served by V4), every "
        "assistant turn, on a wire body",
        _attr("reasoning_every_turn"),
        since="V4 (every assistant turn, not only the current loop's); deepseek-reasoner "
        "answers in these words from 2026",
        seen=(
            Evidence(
                "thread",
                "for",
                "pydantic/pydantic-ai#5829 (a tool-call turn without reasoning_content, "
                "refused in V4's words)",
                "deepseek-reasoner",
                "api.deepseek.com",
                "2026-06",
                "deepseek-reasoner",
            ),
        ),
    ),
    Rule(
        "deepseek-responses.missing_output",
        "D3",
        d.DR1,
        "observed",
        "deepseek-ai/DeepSeek-V3#1588, #1611; fish2lab/DSCodex#9",
        "every model: any item between a call group and its outputs, a reasoning item "
        "between parallel calls included",
        seen=(
            Evidence(
                "thread",
                "for",
                "deepseek-ai/awesome-deepseek-integration#740 (a reasoning item between call "
                "and output)",
                "deepseek-v4",
                "deepseek-responses",
                "2026-09",
                "deepseek-flash",
            ),
        ),
    ),
    Rule(
        "deepseek-responses.orphan_output",
        "D3",
        d.DR2,
        "observed",
        "deepseek-ai/DeepSeek-V3#1588, #1611",
    ),
)


#: The layout a rule alone asks repair for, as the profile traits that produce it: code ->
#: (trait, its value where the rule is withheld for a named model).
LAYOUT: dict[str, tuple[tuple[str, object], ...]] = {
    "bedrock.mixed_tool_use_turn": (("calls_only", False),),
    "bedrock.mixed_result_turn": (
        ("results_only", False),
        ("result_turn", "any"),
        ("bridge_after_results", False),
    ),
    "bedrock.roles_not_alternating": (("strict_alternation", False),),
    "openai-responses.call_without_reasoning": (("fc_needs_reasoning", False),),
    "vertex.mixed_response_turn": (("results_only", False), ("bridge_after_results", False)),
    "mistral.unexpected_role": (("bridge_after_results", False), ("system_after_user_only", False)),
}


def withheld(provider: str, model: str) -> list[Rule]:
    """The rules ``model``'s profile checks that the do-no-harm policy withholds from it."""
    fired = {(r.code, r.text) for r in rules_for(provider, model)}
    return [r for r in rules_for(provider, model, every=True) if (r.code, r.text) not in fired]


def relaxed(provider: str, model: str) -> dict[str, object]:
    """The layout traits ``model``'s profile lets go: those that only withheld rules ask
    for (a trait a fired rule of the same code still needs stays)."""
    fired = {x.code for x in rules_for(provider, model)}
    out: dict[str, object] = {}
    for rule in withheld(provider, model):
        if rule.code not in fired:
            out.update(LAYOUT.get(rule.code, ()))
    return out


def rules_for(provider: str, model: str | None = None, *, every: bool = False) -> list[Rule]:
    """The rules ``provider`` (with ``model``) holds a history to, each once, in the
    order of `RULES`; a host reports a base API's rules under its own code where it
    renames them. Portable: every member's. For a named model, only those the do-no-harm
    policy lets fire (`enforced`); ``every=True`` gives the model's profile's rules
    before that policy."""
    profile = get_profile(provider, model)
    if provider == "portable":
        from toolpair.providers.portable import MEMBERS

        seen: dict[tuple[str, str], Rule] = {}
        for member in MEMBERS:
            for rule in rules_for(member.name, None, every=every):
                seen.setdefault((rule.code, rule.text), rule)
        return list(seen.values())
    # The profiles this one builds on, by name (a model family adds no name of its own).
    bases = [vars(c)["name"] for c in type(profile).__mro__ if vars(c).get("name") in PROFILES]
    out: list[Rule] = []
    for rule in RULES:
        if rule.provider not in bases or rule.code in profile.replaces:
            continue
        if rule.when is not None and not rule.when(profile):
            continue
        for old, new in profile.reports_as.items():
            if rule.code.startswith(old):
                rule = replace(rule, code=new + rule.code[len(old) :])
        out.append(rule)
    if model is not None and not every:
        families = model_families(provider, model)
        out = [r for r in out if enforced(r, families)]
    return out


# --------------------------------------------------------------------------- the page

_TITLES = {
    "anthropic": "Anthropic Messages (also Claude on Vertex and Bedrock InvokeModel)",
    "bedrock": "AWS Bedrock Converse",
    "openai": "OpenAI Chat Completions",
    "openai-responses": "OpenAI Responses",
    "gemini": "Gemini API (generateContent)",
    "mistral": "Mistral (La Plateforme and mistral-common)",
    "vertex": "Gemini on Vertex AI (`vertex`)",
    "deepseek": "DeepSeek Chat Completions (`deepseek`)",
    "deepseek-responses": "DeepSeek Responses (`deepseek-responses`)",
}

#: Model ids the matrix shows, as users write them.
_MATRIX: tuple[tuple[str, str | None], ...] = (
    ("bedrock", None),
    ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0"),
    ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("bedrock", "amazon.nova-pro-v1:0"),
    ("bedrock", "meta.llama3-3-70b-instruct-v1:0"),
    ("bedrock", "mistral.mistral-large-2407-v1:0"),
    ("bedrock", "mistral.ministral-3-8b-instruct-v1:0"),
    ("bedrock", "moonshot.kimi-k2-thinking"),
    ("bedrock", "cohere.command-r-plus-v1:0"),
    ("openai-responses", None),
    ("openai-responses", "gpt-4.1"),
    ("openai-responses", "gpt-5"),
    ("gemini", None),
    ("gemini", "gemini-2.5-flash"),
    ("gemini", "gemini-3-pro-preview"),
    ("vertex", "gemini-2.5-flash"),
    ("vertex", "gemini-3-flash"),
    ("mistral", None),
    ("mistral", "mistral-small-latest"),
    ("deepseek", "deepseek-chat"),
    ("deepseek", "deepseek-reasoner"),
    ("deepseek", "deepseek-v4"),
    ("deepseek-responses", None),
)


def traits(p: Profile, relax: Mapping[str, object] | None = None) -> str:
    """What a profile asks of a history beyond pairing, in a few words; ``relax`` holds
    the traits a named model's profile lets go (`relaxed`)."""
    if relax:
        p = _Relaxed(p, relax)  # type: ignore[assignment]
    out = []
    if p.name in ("bedrock", "vertex", "portable"):
        out.append("results alone in their turn" if p.results_only else "text beside results")
    if p.name in ("bedrock", "portable"):
        out.append("no text beside tool use" if p.calls_only else "text beside tool use")
    if getattr(p, "inline_server_results", False):
        out.append("server tools answered in the assistant turn")
    if getattr(p, "signatures_required", False):
        out.append("thought signatures required")
    if p.fc_needs_reasoning:
        out.append("fc_ items need their reasoning")
    elif p.name in ("openai-responses", "deepseek-responses"):
        out.append("fc_ items stand alone")
    if not p.reasoning_adjacency and p.name == "deepseek-responses":
        out.append("outputs right after their calls; grouped reasoning accepted")
    if getattr(p, "thinks", False):
        out.append("always thinking")
    if not p.ids_allowed:
        out.append("no ids on the wire")
    if p.id_max == 9:
        out.append("9-character ids")
    return ", ".join(out) or "-"


class _Relaxed:
    """A profile's traits as a named model's profile has them."""

    def __init__(self, p: Profile, relax: Mapping[str, object]) -> None:
        self._p, self._relax = p, relax

    def __getattr__(self, name: str) -> object:
        return self._relax[name] if name in self._relax else getattr(self._p, name)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    """``docs/rules.md``: every rule by provider and host, and the model matrix."""
    lines = [
        "# Rule reference",
        "",
        "Generated from `toolpair.rules` (`toolpair rules --markdown`); a test keeps this page",
        "and the code in step. Status: **documented** by the provider, **observed** in a real",
        "error (the public report is named), or **unverified** (the rule is known, the exact",
        "wording is inferred); where the rule itself is known better or worse than its wording,",
        "the status says so (`the rule: ...`), and where refusals were seen only for some model",
        "families, it names them (`refused for ...`). Sources are GitHub `owner/repo#number`",
        "references unless named otherwise; a recorded 200 or 400 is a live exchange kept in a",
        "public test suite (`owner/repo@commit path`). `toolpair rules PROVIDER --model MODEL`",
        "prints the rules for one model.",
        "",
        "## Named models: do no harm",
        "",
        "Evidence decides enforcement, in one place (`toolpair.rules.enforced`, applied by the",
        "engine to every `validate` and `repair` that names a model, on the wire and in every",
        "integration). A rule fires for a named model only when",
        "",
        "1. the API **documents** it for every model behind it (`basis` documented: a required",
        "   field, a documented pattern, even where the error's wording is inferred), or",
        "2. a refusal **observed** it for that model's family: an observed rule whose refusals",
        "   single out no family holds for every model of the API; one seen refused only for some",
        "   families (`families`) holds only for those,",
        "",
        "and no recorded acceptance of that family stands against the whole rule. A rule known",
        "only by inference (**unverified**), or only from other families (a local library's",
        "validator, another vendor behind the same API), does not fire for a named model, and",
        "repair does not change what only such a rule would flag: the layout it alone asks for",
        "(text kept out of a tool-use turn, results alone in their turn, strict alternation, an",
        "`fc_` item held to its reasoning, a bridge after results) is not produced either. A",
        "model id that cannot be placed in a family is still a named model: only the rules every",
        "model of the API is held to apply. Without a model the strict set stays, and repair",
        "changes a shape only where a refusal somewhere shows it.",
        "",
        "What the request alone cannot decide is not reported and not changed, even where a",
        "change would be harmless: an OpenAI Responses `function_call` with its `fc_` id and no",
        "reasoning item is refused only when the server stored reasoning for it, and recorded",
        "200s of that shape stand in the corpus; dropping the item's `id` (keeping `call_id`)",
        "would be harmless on every model, but repair does not touch a body the provider may",
        "accept as it is. Without a model, where every model behind the API is assumed, repair",
        "does drop it.",
        "",
        "Where one rule has two wordings, the current one is reported, at the index that",
        "wording names. A missing result on Anthropic: ``messages.{i}: `tool_use` ids were",
        "found without ...`` names the assistant turn (mid-2025 on); the older",
        "``messages.{i}: Did not find {n} `tool_result` block(s) at the beginning of this",
        "message`` (seen to 2025-04) named the answering turn; the current wording is the",
        "one reported, on Vertex and Bedrock InvokeModel too. Claude behind Converse:",
        "Converse's own check",
        "(`Expected toolResult blocks at messages.{i}.content ...`, the answering turn) fires",
        "when the answering turn holds some of the results; one holding none gets through to",
        "the model, which answers in Anthropic's words behind `The model returned the",
        "following errors: ` and names the call turn.",
        "",
        "## Model and host matrix",
        "",
        "What `model=` changes. Without a model (or with an id that cannot be placed) the",
        "strictest rules of any model behind that API apply, so a repair is safe everywhere.",
        "",
        "| provider | model | how the model is held | rules that differ from the strict set |",
        "|---|---|---|---|",
    ]
    for provider, model in _MATRIX:
        strict = {(x.code, x.text) for x in rules_for(provider)}
        mine = {(x.code, x.text) for x in rules_for(provider, model)}
        dropped = sorted(c for c, _ in strict - mine if c not in {c2 for c2, _ in mine})
        changed = sorted({c for c, _ in mine - strict} - set(dropped))
        notes = []
        if dropped:
            notes.append("not checked: " + ", ".join(f"`{c}`" for c in dropped))
        if changed:
            notes.append("own wording or rule: " + ", ".join(f"`{c}`" for c in changed))
        if model is None:
            notes = ["the strict set"]
        lines.append(
            f"| `{provider}` | {f'`{model}`' if model else '(none)'} | "
            f"{traits(get_profile(provider, model), relaxed(provider, model) if model else None)}"
            f" | {'; '.join(notes) or 'the same rules'} |"
        )
    for provider, title in _TITLES.items():
        lines += ["", f"## {title}", ""]
        lines.append("| ref | code | status | applies to | text | evidence for | against |")
        lines.append("|---|---|---|---|---|---|---|")
        for rule in RULES:
            if rule.provider != provider:
                continue
            pro = "; ".join([rule.evidence, *(str(e) for e in rule.seen if e.stance == "for")])
            if rule.since:
                pro += f"; since: {rule.since}"
            con = "; ".join(str(e) for e in rule.against) or "-"
            status: str = rule.status
            if rule.grounds != rule.status:
                status += f" (the rule: {rule.grounds})"
            if rule.families:
                status += f"; refused for {', '.join(rule.families)}"
            lines.append(
                f"| {rule.ref} | `{rule.code}` | {status} | {_cell(rule.applies)} | "
                f"{_cell(rule.text)} | {_cell(pro)} | {_cell(con)} |"
            )
    return "\n".join(lines) + "\n"


__all__ = [
    "LAYOUT",
    "RULES",
    "Evidence",
    "Rule",
    "enforced",
    "markdown",
    "relaxed",
    "rules_for",
    "traits",
    "withheld",
]
