"""Anthropic Messages (also Claude on Vertex, which returns the same texts).

Rules A1-A11, S1-S4, T2, H1-H3 of docs/rules.md. The API merges
consecutive turns of one role (A11), so the rules read merged turns; indices are the
caller's own message indices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from toolpair._model import Block, Fix, Message, Policy, Violation
from toolpair._view import Item, Turn, pid, turns
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule

MISSING_RESULT = Rule(
    "anthropic.missing_result",
    "A1",
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message.",
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
    path="messages.{i}",
)

RESULTS_NOT_FIRST = Rule(
    "anthropic.results_not_first",
    "A2",
    MISSING_RESULT.text,
    "documented",
    "handle-tool-calls (results first); handling-stop-reasons",
    path="messages.{i}",
)

CONTENT_AFTER_TOOL_USE = Rule(
    "anthropic.content_after_tool_use",
    "A2",
    MISSING_RESULT.text,
    "observed",
    "text after a tool_use is merged into the call turn; anthropics/claude-code#5989",
)

UNEXPECTED_RESULT = Rule(
    "anthropic.unexpected_result",
    "A3",
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message.",
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
    path="messages.{i}.content.{j}",
)

# Every quoted refusal names a block of the first assistant message
# (`messages.1.content.1`, also `.3`, `.4`): the repeat was inside one turn. The one
# recorded body with an id in two turns, each answered at once, was accepted.
DUPLICATE_TOOL_USE_ID = Rule(
    "anthropic.duplicate_tool_use_id",
    "A4",
    "messages.{i}.content.{j}: `tool_use` ids must be unique",
    "observed",
    "trycua/cua#524; anthropics/claude-code#20901, #21071, #21083, #20573, #21317",
    "an id repeated inside one assistant turn (consecutive assistant messages are one "
    "turn); an id reused by a later turn, each answered in the turn after its own, is "
    "not reported",
    seen=(
        Evidence(
            "thread",
            "for",
            "anthropics/claude-code#21071, #21083, #20573, #21317 (Claude Code 2.1.19-2.1.20 "
            "sent one tool_use twice in a message: `messages.1.content.1`, `.3`, the first "
            "assistant message, so the repeat is inside it)",
            "",
            "anthropic",
            "2026-01",
        ),
        Evidence(
            "acceptance",
            "against",
            "pydantic/pydantic-ai@4fda3898 tests/cassettes/test_tool_search/test_cross_"
            "provider_capability_replay[google-gemini-3-flash-preview-anthropic-claude-"
            "sonnet-4-5].yaml, interactions 3 and 4 (one tool_use id in two assistant "
            "turns, each answered in the next turn)",
            "claude-4",
            "anthropic",
            "2026-08",
            "claude-sonnet-4-5",
            part=True,
        ),
    ),
    path="messages.{i}.content.{j}",
)

# UNVERIFIED wording: Anthropic's schema errors name the field and say "Field required".
RESULT_WITHOUT_ID = Rule(
    "anthropic.result_without_id",
    "A3",
    "messages.{i}.content.{j}.tool_result.tool_use_id: Field required",
    "unverified",
    "schema error in the form of A6; no public copy of the exact text",
    basis="documented",
    path="messages.{i}.content.{j}.tool_result.tool_use_id",
)

DUPLICATE_RESULT = Rule(
    "anthropic.duplicate_result",
    "A5",
    "messages.{i}.content.{j}: each tool_use must have a single result. Found multiple "
    "`tool_result` blocks with id: {id}",
    "observed",
    "vectorize-io/hindsight#4250; OpenHands/software-agent-sdk#2114",
    path="messages.{i}.content.{j}",
)

INVALID_TOOL_USE_ID = Rule(
    "anthropic.invalid_tool_use_id",
    "A6",
    "messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    "observed",
    "RooCodeInc/Roo-Code#10649; tailcallhq/forgecode#1142 (length limit unverified)",
    path="messages.{i}.content.{j}.tool_use.id",
)

INVALID_SERVER_TOOL_USE_ID = Rule(
    "anthropic.invalid_server_tool_use_id",
    "A7",
    "messages.{i}.content.{j}.server_tool_use.id: String should match pattern "
    "'^srvtoolu_[a-zA-Z0-9_]+$'",
    "observed",
    "ding113/claude-code-hub#470",
    path="messages.{i}.content.{j}.server_tool_use.id",
)

INVALID_TOOL_NAME = Rule(
    "anthropic.invalid_tool_name",
    "A8",
    "tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
    "documented",
    "implement-tool-use (name pattern); apify/tester-mcp-client#11",
    path="tools.{k}.custom.name",
)

DUPLICATE_TOOL_NAME = Rule(
    "anthropic.duplicate_tool_name",
    "A8",
    "tools: Tool names must be unique.",
    "observed",
    "anthropics/claude-code#10687",
    path="tools",
)

EMPTY_ERROR_RESULT = Rule(
    "anthropic.empty_error_result",
    "A9",
    "messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true",
    "observed",
    "bytedance/trae-agent#230; jlevy/markform#153",
    path="messages.{i}.content.{j}.tool_result",
)

EMPTY_TEXT = Rule(
    "anthropic.empty_text",
    "A10",
    "messages: text content blocks must be non-empty",
    "observed",
    "anthropics/claude-code#59812; run-llama/llama_index#17278",
    path="messages",
)

# Whitespace-only text gets its own 400 (anthropics/claude-code#23369, #23440;
# home-assistant/core#175637, for whitespace-only string content too). UNVERIFIED: a
# direct test of the API (LibreChat-AI/agents#124) found such a block accepted beside
# non-blank text in the same message, so it is reported only where its message has none.
BLANK_TEXT = Rule(
    "anthropic.empty_text",
    "A10",
    "messages: text content blocks must contain non-whitespace text",
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
    path="messages",
)

TRAILING_WHITESPACE = Rule(
    "anthropic.trailing_whitespace",
    "A10",
    "messages: final assistant content cannot end with trailing whitespace",
    "observed",
    "aliasrobotics/cai#182; tailcallhq/forgecode#1872",
    path="messages",
)

SERVER_TOOL_PENDING = Rule(
    "anthropic.server_tool_pending",
    "S1",
    "`{tool}` tool use with id `{id}` was found without a corresponding `{tool}_tool_result` block",
    "documented",
    "handle-tool-calls (deferred server tools); handling-stop-reasons#tool-use",
    path="messages.{index}",
)

UNEXPECTED_SERVER_RESULT = Rule(
    "anthropic.unexpected_server_result",
    "S4",
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `{kind}` blocks: {id}. Each "
    "`{kind}` block must have a corresponding `server_tool_use` block before it.",
    "observed",
    "anthropics/claude-code#64383, #80439, #62577",
    path="messages.{i}.content.{j}",
)

# UNVERIFIED: no public copy of the 400 for a member result without toolset_name (T2);
# worded after the API's other field errors.
MISSING_TOOLSET_NAME = Rule(
    "anthropic.missing_toolset_name",
    "T2",
    "messages.{i}.content.{j}.tool_result: `toolset_name` is required: the `tool_use` it "
    "answers belongs to the `{toolset}` toolset",
    "unverified",
    "handle-tool-calls (toolset members echo toolset_name); no public copy of the 400",
    basis="documented",
    path="messages.{i}.content.{j}",
)

THINKING_NOT_FIRST = Rule(
    "anthropic.thinking_not_first",
    "H1",
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    "documented",
    "extended-thinking; deepset-ai/haystack-core-integrations#2146; mastra-ai/mastra#7799",
    "with thinking on",
    path="messages.{i}.content.0.type",
)

THINKING_DISABLED = Rule(
    "anthropic.thinking_disabled",
    "H2",
    "messages.{i}.content.{j}: When thinking is disabled, an `assistant` message in the final "
    "position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your "
    "request.",
    "observed",
    "tailcallhq/forgecode#1853",
    "with thinking off",
    path="messages.{i}.content.{j}",
)

INVALID_SIGNATURE = Rule(
    "anthropic.invalid_signature",
    "H3",
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block",
    "observed",
    "anthropics/claude-code#10627; anthropics/anthropic-sdk-python#1598",
    path="messages.{i}.content.{j}",
)

TOOL_USE_NAME_TOO_LONG = Rule(
    "anthropic.tool_use_name_too_long",
    "A12",
    "messages.{i}.content.{j}.tool_use.name: String should have at most 200 characters",
    "observed",
    "anthropics/claude-code#2673; openclaw/openclaw#13134 (2026-02); claude-code#94799",
    "every model: a tool_use block's name (the tool definitions have their own limit)",
    path="messages.{i}.content.{j}.tool_use.name",
)

# Mid-conversation system messages (2026-05, Opus 4.8 and later; Bedrock and Vertex too).
SYSTEM_FIRST = Rule(
    "anthropic.system_first",
    "Y1",
    "messages.0: use the top-level 'system' parameter for the initial system prompt; the "
    "directive-only form (content: [] with output_config) is accepted at any position",
    "observed",
    "anthropics/claude-code#64147 (2026-05); LeenHawk/gproxy#209 (2026-09, the whole text)",
    "mid-conversation system messages (Opus 4.8 and later, also on Bedrock and Vertex), "
    "on a wire body; not the directive-only form (content: [])",
    since="2026-05 (mid-conversation system messages)",
    path="messages.{index}.role",
)

SYSTEM_NOT_BEFORE_ASSISTANT = Rule(
    "anthropic.system_not_before_assistant",
    "Y2",
    "messages.{i}: role 'system' must precede an 'assistant' message or end the array",
    "observed",
    "anthropics/claude-code#73821 (2026-07); langchain4j/langchain4j#5603",
    "a system message followed by anything but an assistant turn (so never two in a row), "
    "on a wire body; also one carrying tool_addition or tool_removal blocks (beta "
    "mid-conversation-tool-changes-2026-07-01: a tool_removal sits right before an "
    "assistant turn or last)",
    since="2026-05 (mid-conversation system messages)",
    path="messages.{index}.role",
)

SYSTEM_BETWEEN_CALL_AND_RESULT = Rule(
    "anthropic.system_between_call_and_result",
    "Y2",
    SYSTEM_NOT_BEFORE_ASSISTANT.text,
    "observed",
    "platform.claude.com mid-conversation-system-messages (never between a tool_use and "
    "its tool_result); langchain4j/langchain4j#5603; anthropics/claude-code#73821 (the text)",
    "a system message between an assistant turn's tool_use blocks and the turn with their "
    "results, on a wire body; repair moves it after the results",
    since="2026-05 (mid-conversation system messages)",
    path="messages.{index}.role",
)

# UNVERIFIED wording; the placement is documented (mid-conversation-system-messages):
# after a user turn, or after an assistant turn that ends in a server tool use.
SYSTEM_AFTER_ASSISTANT = Rule(
    "anthropic.system_after_assistant",
    "Y3",
    "messages.{i}: role 'system' must follow a 'user' message or an 'assistant' message "
    "ending in a server tool use",
    "unverified",
    "platform.claude.com mid-conversation-system-messages (after a user turn, or an "
    "assistant turn ending in a server tool use); elgorro/aiquila#413",
    "a system message after an assistant turn that does not end in a server tool use, on a "
    "wire body",
    basis="documented",
    since="2026-05 (mid-conversation system messages)",
    path="messages.{index}.role",
)

# API version 2026-10-21 (the ``anthropic-version`` header; SDK Python 2.0 / TS 1.0): the
# two of its new 400s that concern a history. UNVERIFIED wordings; the refusals are
# documented by the migration guide. (Its third, sampling parameters, is not history.)
_V2026 = (
    "platform.claude.com/docs/en/api/migration-2026-10-21 (summarised by codersera; "
    "the first version after 2023-06-01)"
)

DOCUMENT_IN_ASSISTANT = Rule(
    "anthropic.document_in_assistant",
    "A13",
    "messages.{i}.content.{j}: `document` blocks are not allowed in `assistant` messages",
    "unverified",
    _V2026 + ": document blocks in assistant messages are refused",
    "requests sent with anthropic-version: 2026-10-21 or later (a header: the body "
    "never names it), on a wire body; repair makes a plain-text document a text block "
    "and reports any other",
    basis="documented",
    since="API version 2026-10-21; 2023-06-01 accepts it",
    path="messages.{i}.content.{j}",
)

CITATIONS_IN_USER_TEXT = Rule(
    "anthropic.citations_in_user_text",
    "A14",
    "messages.{i}.content.{j}.citations: `citations` are not allowed in `user` messages",
    "unverified",
    _V2026 + ": non-empty citations on a user text block are refused",
    "requests sent with anthropic-version: 2026-10-21 or later (a header), on a wire "
    "body; repair drops the citations and keeps the text",
    basis="documented",
    since="API version 2026-10-21; 2023-06-01 accepts it",
    path="messages.{i}.content.{j}.citations",
)

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def v2026(ctx: Context) -> bool:
    """Whether the request goes out under API version 2026-10-21 or a later one."""
    v = ctx.api_version
    return isinstance(v, str) and _DATE.fullmatch(v) is not None and v >= "2026-10-21"


def _version_rules(messages: Sequence[Message], add: Callable[[Violation], None]) -> None:
    for m in messages:
        content = m.native.get("content") if isinstance(m.native, dict) else None
        if m.role not in ("assistant", "user") or not isinstance(content, list):
            continue
        for j, b in enumerate(content):
            if not isinstance(b, dict):
                continue
            if m.role == "assistant" and b.get("type") == "document":
                add(DOCUMENT_IN_ASSISTANT.violation(m.index, i=m.index, j=j))
            elif m.role == "user" and b.get("type") == "text" and b.get("citations"):
                add(CITATIONS_IN_USER_TEXT.violation(m.index, i=m.index, j=j))


def _plain_text(document: dict[str, Any]) -> str | None:
    """A document's text where it is plain text (``source.type: text``), else None."""
    source = document.get("source")
    if isinstance(source, dict) and source.get("type") == "text":
        data = source.get("data")
        return data if isinstance(data, str) and data.strip() else None
    return None


def _version_fixes(natives: list[Any], left: Sequence[Violation]) -> tuple[list[Any], list[Fix]]:
    """What API version 2026-10-21 refuses in a history, answered without losing what
    was said: a user text keeps its words without its citations (only the new version
    refuses them there, and they point into documents the user turn does not cite from);
    an assistant's plain-text document becomes a text block of the same words, in its
    place. Any other document (a PDF, a file, a URL) cannot be said as text, and moving it
    to a user turn would put the assistant's words in the user's mouth: it is reported,
    not changed."""
    codes = (DOCUMENT_IN_ASSISTANT.code, CITATIONS_IN_USER_TEXT.code)
    out, fixes = natives, []
    done: set[int] = set()
    for v in left:
        i = v.index
        if v.code not in codes or i in done or not 0 <= i < len(out):
            continue
        m = out[i]
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(content, list):
            continue
        done.add(i)
        new: list[Any] = []
        kinds: list[str] = []
        for b in content:
            if isinstance(b, dict) and m.get("role") == "user" and b.get("type") == "text":
                if b.get("citations"):
                    b = {k: x for k, x in b.items() if k != "citations"}
                    kinds.append("citations_dropped")
            elif isinstance(b, dict) and m.get("role") == "assistant":
                text = _plain_text(b) if b.get("type") == "document" else None
                if text is not None:
                    b = {"type": "text", "text": text}
                    kinds.append("document_as_text")
            new.append(b)
        if not kinds:
            continue
        if out is natives:
            out = list(natives)
        out[i] = {**m, "content": new}
        for kind in dict.fromkeys(kinds):
            fixes.append(
                Fix(
                    kind,
                    i,
                    (),
                    "a user text's citations dropped, its words kept: API version 2026-10-21 "
                    "refuses citations in a user turn"
                    if kind == "citations_dropped"
                    else "an assistant's plain-text document sent as a text block of the same "
                    "words: API version 2026-10-21 refuses documents in an assistant turn",
                )
            )
    return out, fixes


_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_SERVER_ID = re.compile(r"srvtoolu_[a-zA-Z0-9_]+")

#: Native block type names, for H1's "found" and the paths.
_TYPE_NAMES = {
    "call": "tool_use",
    "result": "tool_result",
    "text": "text",
    "image": "image",
    "server_call": "server_tool_use",
}


def _sent_as_is(block: Block, wire: bool, ctx: Context) -> bool:
    # A content block dict is sent as it stands; so is a message's string content on the
    # wire format (an empty one is a different error). A framework's own objects are
    # judged by its codec's ``sends_blank_text``, where it says.
    said = ctx.sends_blank(block) if ctx.sends_blank is not None else None
    if said is not None:
        return said
    native = block.native
    return isinstance(native, dict) or (wire and isinstance(native, str) and native != "")


def _blank_text(
    t: Turn, ctx: Context, add: Callable[[Violation], None], beside_calls: bool = False
) -> None:
    """A10: an empty text block anywhere; a whitespace-only one where its message has no
    other text (nor, with ``beside_calls``, a tool use). Only blank text that reaches the
    API is judged: frameworks that drop it before sending (LangChain's list content,
    llama-index's empty TextBlock) must not be reported for it."""
    wire = ctx.format == "anthropic"
    blank: dict[int, bool] = {}  # message -> has an empty block (else: whitespace only)
    solid: set[int] = set()
    for it in t.items:
        b = it.block
        if beside_calls and b.kind == "call":
            solid.add(it.msg)
        if b.kind != "text" or b.text is None:
            continue
        if b.text.strip():
            solid.add(it.msg)
        elif _sent_as_is(b, wire, ctx):
            blank[it.msg] = blank.get(it.msg, False) or not b.text
    for i, empty in blank.items():
        if empty:
            add(EMPTY_TEXT.violation(i))
        elif i not in solid:
            add(BLANK_TEXT.violation(i))


def _type_name(item: Item) -> str:
    native = item.block.native
    if isinstance(native, dict) and isinstance(native.get("type"), str):
        return str(native["type"])
    return _TYPE_NAMES.get(item.block.kind, item.block.kind)


def current_loop(ts: Sequence[Turn]) -> list[Turn]:
    """The turns after the last user turn that holds anything but results: the tool
    loop the model is in, which counts as one assistant turn (H1)."""
    start = 0
    for k in range(len(ts) - 1, -1, -1):
        t = ts[k]
        if t.role == "user" and any(it.block.kind != "result" for it in t.items):
            start = k + 1
            break
    return list(ts[start:])


def thinking_start_violation(ts: Sequence[Turn], rule: Rule) -> Violation | None:
    """H1: with thinking on, a final tool loop must start with a thinking block
    (``rule``: H1 as the API or host words it)."""
    loop = current_loop(ts)
    if not any(
        t.role == "assistant" and any(it.block.kind == "call" for it in t.items) for t in loop
    ):
        return None
    first = next((t for t in loop if t.role == "assistant"), None)
    if first is None or not first.items:
        return None
    head = first.items[0]
    if head.block.kind == "thinking":
        return None
    return rule.violation(head.msg, i=head.msg, found=_type_name(head))


#: Server tools whose documented result block has an error form, as the API itself
#: returns it when the tool fails: the one shape repair can truthfully answer S1 with.
_SERVER_ERRORS = frozenset({"web_search", "web_fetch", "code_execution"})


def _server_error(call: Any, policy: Policy) -> dict[str, Any] | None:
    sid = call.get("id")
    if call.get("type") == "mcp_tool_use":
        return {
            "type": "mcp_tool_result",
            "tool_use_id": sid,
            "is_error": True,
            "content": [{"type": "text", "text": policy.placeholder}],
        }
    name = call.get("name")
    if call.get("type") == "server_tool_use" and name in _SERVER_ERRORS:
        return {
            "type": f"{name}_tool_result",
            "tool_use_id": sid,
            "content": {"type": f"{name}_tool_result_error", "error_code": "unavailable"},
        }
    return None


class Anthropic(Profile):
    name = "anthropic"
    ids_unique_per_turn = True
    #: Whitespace-only text beside a tool use in its message is accepted (a recorded
    #: 200 on claude-haiku-4-5); threads report the 400 without the request, so only the
    #: strict set (no model) holds it.
    blank_beside_calls: ClassVar[bool] = False

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # A server tool left pending (S1): its error result goes right after the call in
        # the same assistant turn, where the API itself puts the result it returns.
        out, fixes = _move_systems(natives, left) if fmt == "anthropic" else (natives, [])
        if fmt == "anthropic":
            out, more = _version_fixes(out, left)
            fixes.extend(more)
        for v in left:
            if v.code != "anthropic.server_tool_pending" or fmt != "anthropic" or not v.ids:
                continue
            if not 0 <= v.index < len(out) or not isinstance(out[v.index], dict):
                continue
            m = out[v.index]
            content = m.get("content")
            if not isinstance(content, list):
                continue
            at = next(
                (
                    j
                    for j, b in enumerate(content)
                    if isinstance(b, dict) and b.get("id") == v.ids[0]
                ),
                None,
            )
            result = None if at is None else _server_error(content[at], policy)
            if at is None or result is None:
                continue
            if out is natives:
                out = list(natives)
            out[v.index] = {**m, "content": [*content[: at + 1], result, *content[at + 1 :]]}
            fixes.append(
                Fix(
                    "server_result_added",
                    v.index,
                    v.ids,
                    f"{result['type']} with an error right after its call, as the API reports "
                    "a failed server tool",
                )
            )
        return out, fixes

    def for_model(self, model: str) -> Profile:
        return _NAMED if type(self) is Anthropic else self

    id_pattern = re.compile(r"[a-zA-Z0-9_-]+")
    # The length limit is UNVERIFIED (docs/rules.md A6); 64 is what the ecosystem assumes
    # and what Bedrock enforces, so rewritten ids stay within it.
    id_max = 64

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        ts = turns(messages, "all", ctx.shape)
        out: list[Violation] = []
        add = out.append
        seen_servers: set[str] = set()
        toolsets: dict[str, str] = {}
        for k, t in enumerate(ts):
            if t.role == "assistant":
                self._assistant(ts, k, t, seen_servers, toolsets, add)
            else:
                self._user(ts, k, t, toolsets, add)
            _blank_text(t, ctx, add, self.blank_beside_calls)
            for it in t.items:
                b = it.block
                if b.kind == "thinking" and b.sub == "thinking":
                    sig = b.native.get("signature") if isinstance(b.native, dict) else None
                    if not isinstance(sig, str) or not sig:
                        add(
                            INVALID_SIGNATURE.violation(
                                it.msg,
                                i=it.msg,
                                j=it.pos,
                            )
                        )
        if ts and ts[-1].role == "assistant" and ts[-1].items:
            last = ts[-1].items[-1]
            if (
                last.block.kind == "text"
                and (last.block.text or "") != (last.block.text or "").rstrip()
            ):
                add(TRAILING_WHITESPACE.violation(last.msg))
        if ctx.thinking:
            v = thinking_start_violation(ts, THINKING_NOT_FIRST)
            if v is not None:
                add(v)
        elif ctx.thinking is False and messages and messages[-1].role == "assistant":
            last_msg = messages[-1]
            for j, b in enumerate(last_msg.blocks):
                if b.kind == "thinking":
                    add(
                        THINKING_DISABLED.violation(
                            last_msg.index,
                            i=last_msg.index,
                            j=j,
                        )
                    )
                    break
        if ctx.tools is not None:
            out.extend(self._tools(ctx.tools))
        for m in messages:
            if m.role != "assistant":
                continue
            for j, b in enumerate(m.blocks):
                if b.kind == "call" and b.name is not None and len(b.name) > 200:
                    add(
                        TOOL_USE_NAME_TOO_LONG.violation(
                            m.index,
                            (pid(b),),
                            i=m.index,
                            j=j,
                        )
                    )
        if ctx.format == "anthropic":
            # A framework's system messages go to the top-level system prompt; only the
            # wire format sends them inside ``messages``.
            _system_turns(messages, add)
            if v2026(ctx):
                _version_rules(messages, add)
        return out

    def _assistant(
        self,
        ts: Sequence[Turn],
        k: int,
        t: Turn,
        seen_servers: set[str],
        toolsets: dict[str, str],
        emit: Callable[[Violation], None],
    ) -> None:
        calls: list[Item] = []
        after_call: list[Item] = []
        pending: dict[str, Item] = {}
        seen_calls: set[str] = set()  # A4: ids must differ within the turn
        for it in t.items:
            b = it.block
            if b.kind == "call":
                calls.append(it)
                cid = pid(b)
                if b.toolset:
                    toolsets[cid] = b.toolset
                if b.id is not None and self.id_pattern.fullmatch(cid) is None:
                    emit(INVALID_TOOL_USE_ID.violation(it.msg, (cid,), i=it.msg, j=it.pos))
                if b.id is not None and cid in seen_calls:
                    emit(DUPLICATE_TOOL_USE_ID.violation(it.msg, (cid,), i=it.msg, j=it.pos))
                seen_calls.add(cid)
            elif b.kind == "server_call":
                if b.id is not None:
                    if b.sub == "server_tool_use" and not _SERVER_ID.fullmatch(b.id):
                        emit(
                            INVALID_SERVER_TOOL_USE_ID.violation(
                                it.msg,
                                (b.id,),
                                i=it.msg,
                                j=it.pos,
                            )
                        )
                    seen_servers.add(b.id)
                    pending[b.id] = it
                if calls:
                    after_call.append(it)
            elif b.kind == "server_result":
                if b.id is not None and b.id not in seen_servers:
                    emit(
                        UNEXPECTED_SERVER_RESULT.violation(
                            it.msg,
                            (b.id,),
                            i=it.msg,
                            j=it.pos,
                            kind=b.sub,
                            id=b.id,
                        )
                    )
                if b.id is not None:
                    pending.pop(b.id, None)
                if calls:
                    after_call.append(it)
            elif b.kind not in ("thinking", "reasoning") and calls:
                after_call.append(it)
        nxt = ts[k + 1] if k + 1 < len(ts) else None
        if calls:
            leading: set[str] = set()
            anywhere: set[str] = set()
            if nxt is not None and nxt.role == "user":
                in_front = True
                for it in nxt.items:
                    if it.block.kind == "result":
                        anywhere.add(pid(it.block))
                        if in_front:
                            leading.add(pid(it.block))
                    else:
                        in_front = False
            missing = [c for c in calls if pid(c.block) not in leading]
            if missing:
                at = missing[0].msg
                ids = tuple(dict.fromkeys(pid(c.block) for c in missing))
                rule = RESULTS_NOT_FIRST if all(i in anywhere for i in ids) else MISSING_RESULT
                emit(rule.violation(at, ids, i=at, ids=", ".join(ids)))
            if after_call:
                first = after_call[0]
                before = tuple(
                    pid(c.block) for c in calls if (c.msg, c.pos) < (first.msg, first.pos)
                )
                emit(
                    CONTENT_AFTER_TOOL_USE.violation(
                        first.msg,
                        before,
                        f"messages.{first.msg}.content.{first.pos}",
                        i=first.msg,
                        ids=", ".join(before),
                    )
                )
        # A server tool still pending when the turn ends: every later turn may hold only
        # results (S1; measured on claude-sonnet-4-5: refused as soon as any turn with other
        # content follows, not only the next one), and a pause_turn at the very end is fine
        # (S3).
        if pending and any(
            it.block.kind != "result" for later in ts[k + 1 :] for it in later.items
        ):
            for sid, it in pending.items():
                tool = it.block.name or "server_tool"
                emit(SERVER_TOOL_PENDING.violation(it.msg, (sid,), tool=tool, id=sid))

    def _user(
        self,
        ts: Sequence[Turn],
        k: int,
        t: Turn,
        toolsets: dict[str, str],
        emit: Callable[[Violation], None],
    ) -> None:
        prev = ts[k - 1] if k > 0 else None
        prev_calls = (
            {pid(it.block) for it in prev.items if it.block.kind == "call"}
            if prev is not None and prev.role == "assistant"
            else set()
        )
        seen: set[str] = set()
        for it in t.items:
            b = it.block
            if b.kind != "result":
                continue
            if b.missing_id:
                emit(RESULT_WITHOUT_ID.violation(it.msg, i=it.msg, j=it.pos))
                continue
            rid = pid(b)
            if rid not in prev_calls:
                emit(UNEXPECTED_RESULT.violation(it.msg, (rid,), i=it.msg, j=it.pos, id=rid))
            elif rid in seen:
                emit(DUPLICATE_RESULT.violation(it.msg, (rid,), i=it.msg, j=it.pos, id=rid))
            seen.add(rid)
            if b.is_error and b.empty:
                emit(EMPTY_ERROR_RESULT.violation(it.msg, (rid,), i=it.msg, j=it.pos))
            toolset = toolsets.get(rid)
            if toolset and not b.toolset and rid in prev_calls:
                emit(
                    MISSING_TOOLSET_NAME.violation(
                        it.msg, (rid,), i=it.msg, j=it.pos, toolset=toolset
                    )
                )

    def _tools(self, tools: Sequence[object]) -> list[Violation]:
        out = []
        names: set[str] = set()
        for k, tool in enumerate(tools):
            if not isinstance(tool, dict) or "name" not in tool:
                continue
            name = tool["name"]
            if tool.get("type") in (None, "custom") and (
                not isinstance(name, str) or not _NAME.fullmatch(name)
            ):
                out.append(INVALID_TOOL_NAME.violation(0, k=k))
            if name in names:
                out.append(DUPLICATE_TOOL_NAME.violation(0))
            names.add(name)
        return out


#: System turns repair moves forward, past the user turns after them, to stand before
#: the next assistant turn (or last): out from between a call and its results rather
#: than answering the call behind them.
_MOVABLE = frozenset(
    {
        "anthropic.system_between_call_and_result",
        "anthropic.system_not_before_assistant",
        "anthropic.system_first",
    }
)


def _move_systems(natives: list[Any], left: Sequence[Violation]) -> tuple[list[Any], list[Fix]]:
    out, fixes = natives, []
    # From the last one back, so each move leaves the earlier indices where they were.
    for v in sorted((v for v in left if v.code in _MOVABLE), key=lambda v: -v.index):
        i = v.index
        if not 0 <= i < len(out) or not isinstance(out[i], dict) or out[i].get("role") != "system":
            continue
        j = i + 1
        while j < len(out) and isinstance(out[j], dict) and out[j].get("role") == "user":
            j += 1
        if j == i + 1:
            continue  # nothing to move past: another system turn, or an assistant turn
        out = [*out[:i], *out[i + 1 : j], out[i], *out[j:]]
        fixes.append(
            Fix(
                "system_moved",
                i,
                v.ids,
                "a system turn moved past the user turns after it"
                + (", out from between the calls and their results" if v.ids else ""),
            )
        )
    return out, fixes


def _system_turns(messages: Sequence[Message], add: Callable[[Violation], None]) -> None:
    """Where a mid-conversation system message may stand (Y1-Y3): not first, after a
    user turn (or an assistant turn ending in a server tool use), and last or before an
    assistant turn; so never two in a row, and never between a tool_use and its result.
    The directive-only form (``content: []``) may stand anywhere."""
    n = len(messages)
    for k, m in enumerate(messages):
        if m.role != "system" or (isinstance(m.native, dict) and m.native.get("content") == []):
            continue
        i = m.index
        if k == 0:
            add(SYSTEM_FIRST.violation(i))
            continue
        prev = messages[k - 1]
        nxt = messages[k + 1] if k + 1 < n else None
        calls = [b for b in prev.blocks if b.kind == "call"] if prev.role == "assistant" else []
        answered = {b.id for b in nxt.blocks if b.kind == "result"} if nxt is not None else set()
        split = tuple(pid(b) for b in calls if b.id in answered)
        if split:
            # Its results come after it: the system turn splits the pair.
            add(SYSTEM_BETWEEN_CALL_AND_RESULT.violation(i, split, i=i))
            continue
        if prev.role == "assistant" and not (prev.blocks and prev.blocks[-1].kind == "server_call"):
            add(SYSTEM_AFTER_ASSISTANT.violation(i, i=i))
        if nxt is not None and nxt.role != "assistant":
            add(SYSTEM_NOT_BEFORE_ASSISTANT.violation(i, i=i))


class _Named(Anthropic):
    blank_beside_calls = True


_NAMED = _Named()


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_RESULT,
    RESULTS_NOT_FIRST,
    CONTENT_AFTER_TOOL_USE,
    UNEXPECTED_RESULT,
    RESULT_WITHOUT_ID,
    DUPLICATE_TOOL_USE_ID,
    DUPLICATE_RESULT,
    INVALID_TOOL_USE_ID,
    INVALID_SERVER_TOOL_USE_ID,
    INVALID_TOOL_NAME,
    DUPLICATE_TOOL_NAME,
    EMPTY_ERROR_RESULT,
    EMPTY_TEXT,
    BLANK_TEXT,
    TRAILING_WHITESPACE,
    TOOL_USE_NAME_TOO_LONG,
    DOCUMENT_IN_ASSISTANT,
    CITATIONS_IN_USER_TEXT,
    SYSTEM_FIRST,
    SYSTEM_NOT_BEFORE_ASSISTANT,
    SYSTEM_BETWEEN_CALL_AND_RESULT,
    SYSTEM_AFTER_ASSISTANT,
    SERVER_TOOL_PENDING,
    UNEXPECTED_SERVER_RESULT,
    MISSING_TOOLSET_NAME,
    THINKING_NOT_FIRST,
    THINKING_DISABLED,
    INVALID_SIGNATURE,
)
