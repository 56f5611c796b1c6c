"""Google Gemini generateContent (docs/rules.md, G1-G7). Pairing is by turn
and count: the content after a function-call turn answers every call in it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from toolpair._model import Fix, Message, Policy, Violation
from toolpair._view import Item, Turn, pid, turns
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule, profile_has, profile_named
from toolpair.providers.anthropic import current_loop

#: pydantic-ai's recorded 200s of Gemini 3 Flash on the Gemini API: one step's calls in
#: two consecutive model turns (the second a synthetic `search_tools` call with the skip
#: signature), answered by one user turn holding both responses, matched by id.
_SPLIT_CALLS = Evidence(
    "acceptance",
    "against",
    "pydantic/pydantic-ai@4fda3898 tests/cassettes/test_tool_search/test_cross_provider_"
    "capability_replay[*gemini-3-flash-preview*].yaml (4 requests)",
    "gemini-3",
    "gemini",
    "2026-08",
    "gemini-3-flash-preview",
    part=True,
)

MISSING_RESPONSE = Rule(
    "gemini.missing_response",
    "G1",
    "Please ensure that function response turn comes immediately after a function call turn.",
    "observed",
    "langchain-ai/langchain#27799; GoogleCloudPlatform/generative-ai#368",
    "every model; Gemini 3 on the Gemini API takes one step's calls split across "
    "consecutive model turns, answered together by the next user turn",
    seen=(_SPLIT_CALLS,),
    path="contents[{index}]",
)

UNEXPECTED_RESPONSE = Rule(
    "gemini.unexpected_response",
    "G1",
    MISSING_RESPONSE.text,
    "observed",
    "google-gemini/deprecated-generative-ai-js#267",
    path="contents[{index}]",
)

RESPONSE_COUNT = Rule(
    "gemini.response_count",
    "G2",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.",
    "observed",
    "google-gemini/gemini-cli#4217, #16415",
    "every model (without ids only the count is checked); Gemini 2.5 on the Gemini API "
    "takes the responses split across consecutive user turns",
    path="contents[{index}]",
)

CALL_TURN_POSITION = Rule(
    "gemini.call_turn_position",
    "G3",
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn.",
    "observed",
    "google-gemini/gemini-cli#11814, #26486",
    "every model; Gemini 3 on the Gemini API takes a call turn right after another call "
    "turn of the same step (both answered by the next user turn)",
    seen=(_SPLIT_CALLS,),
    path="contents[{index}]",
)

ENDS_WITH_CALL = Rule(
    "gemini.ends_with_call",
    "G4",
    "Please ensure that multiturn requests ends with a user role or a function response.",
    "observed",
    "songquanpeng/one-api#836 (an older text)",
    path="contents[{index}]",
)

MISSING_THOUGHT_SIGNATURE = Rule(
    "gemini.missing_thought_signature",
    "G5",
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {n}. Please "
    "refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
    "documented",
    "ai.google.dev thought-signatures; 1jehuang/jcode#518",
    "Gemini 3 (not the image model); Gemini 2.5 Flash-Lite on the Gemini API (from "
    "2026-05); any model with thought_signatures=True; not the rest of Gemini 2.5",
    profile_named("gemini"),
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
    path="contents[{n}]",
)

EMPTY_PARTS = Rule(
    "gemini.empty_parts",
    "G6",
    "GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty",
    "observed",
    "langchain-ai/langchain-google#1056",
    "the Gemini API",
    profile_named("gemini"),
    path="contents[{i}].parts",
)

FOREIGN_THOUGHT_SIGNATURE = Rule(
    "gemini.foreign_thought_signature",
    "G8",
    # Also worded "Corrupted thought signature." (heyhuynhgiabuu/proxypal#119).
    "Invalid thought signature.",
    "observed",
    "lbjlaq/Antigravity-Manager#3342; earendil-works/pi#6996; heyhuynhgiabuu/proxypal#119 "
    "(worded 'Corrupted thought signature.')",
    "Gemini 3 on the Gemini API, in the current turn, where the model that produced a "
    "signature is known (signature_models=) and differs from the request's in version or "
    "tier; repair puts the documented skip value in its place. Not Vertex AI (documented "
    "to take it); not Gemini 2.5 (no refusal found)",
    profile_has("foreign_signatures_refused"),
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
    path="contents[{index}]",
)

#: The documented stand-in for a signature the request cannot send (Gemini API and Vertex
#: AI alike; the same value repair gives a call that never had one).
SKIP_SIGNATURE = "skip_thought_signature_validator"
_STAND_INS = frozenset({SKIP_SIGNATURE, "context_engineering_is_the_way_to_go"})
_VERSION = re.compile(r"gemini-(\d+(?:\.\d+)?)")


class Gemini(Profile):
    name = "gemini"
    #: The host's own wording for the rules whose text differs between hosts.
    missing_signature: ClassVar[Rule] = MISSING_THOUGHT_SIGNATURE
    empty_parts: ClassVar[Rule] = EMPTY_PARTS
    #: Gemini 3: the first call of each step in the current turn needs its thought
    #: signature, whatever the caller says. Gemini 2.5 is not held to it: it took an
    #: unsigned second-round call after a signed first round (docs/rules.md G5).
    signatures_required: ClassVar[bool] = False
    #: Gemini 2.5 on the Gemini API took the responses to one call turn split across
    #: consecutive user turns (the strict set holds them to one turn, G2).
    split_responses: ClassVar[bool] = False
    #: Gemini 3 on the Gemini API took one step's calls split across consecutive model
    #: turns, answered together by the next user turn (G1, G3's evidence against).
    split_calls: ClassVar[bool] = False
    first_not_call = True
    drop_empty = True
    # Consecutive turns of one role are rejected in practice (docs/rules.md): merging
    # them is what makes a call turn follow a user turn again (G3).
    strict_alternation = True
    # Ids are optional (G7); names follow [a-zA-Z0-9_-]{1,64}, ids are kept within it.
    id_max = 64
    #: A signature another model produced is refused in the current turn (G8); Vertex
    #: documents that it takes one and leaves its thoughts out.
    foreign_signatures_refused: ClassVar[bool] = True

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out: list[Violation] = []
        add = out.append
        for m in messages:
            if not m.blocks and m.role != "system":
                add(self.empty_parts.violation(m.index, i=m.index))
        ts = [t for t in turns(messages, "tool", ctx.shape) if t.items]
        absorbed: set[int] = set()  # turns read as part of the response turn before them
        for k, t in enumerate(ts):
            calls = [it for it in t.items if it.block.kind == "call"]
            results = [it for it in t.items if it.block.kind == "result"]
            prev = ts[k - 1] if k else None
            if k in absorbed:
                continue
            if calls:
                if prev is None or prev.role == "assistant":
                    add(CALL_TURN_POSITION.violation(t.first))
                at = k + 1
                while (
                    self.split_calls
                    and at < len(ts)
                    and ts[at].role == "assistant"
                    and all(it.block.kind == "call" for it in ts[at].items)
                ):
                    calls += ts[at].items
                    absorbed.add(at)
                    at += 1
                nxt = ts[at] if at < len(ts) else None
                ids = tuple(pid(it.block) for it in calls)
                if nxt is None:
                    add(ENDS_WITH_CALL.violation(t.first, ids))
                else:
                    got = [it for it in nxt.items if it.block.kind == "result"]
                    j = at + 1
                    while (
                        self.split_responses
                        and got
                        and len(got) < len(calls)
                        and j < len(ts)
                        and ts[j].role == "user"
                        and all(it.block.kind == "result" for it in ts[j].items)
                    ):
                        got += ts[j].items
                        absorbed.add(j)
                        j += 1
                    if nxt.role != "user" or not got:
                        add(MISSING_RESPONSE.violation(nxt.first, ids))
                    elif len(got) != len(calls) or not _same_calls(calls, got):
                        add(RESPONSE_COUNT.violation(nxt.first, ids))
            if results and (prev is None or not any(it.block.kind == "call" for it in prev.items)):
                ids = tuple(pid(it.block) for it in results)
                add(UNEXPECTED_RESPONSE.violation(t.first, ids))
        if self.signatures_due(messages, ctx):
            for it in unsigned_steps(ts):
                add(
                    self.missing_signature.violation(
                        it.msg,
                        (pid(it.block),),
                        name=it.block.name,
                        n=it.msg,
                    )
                )
        if self.foreign_signatures_refused and ctx.signature_models and ctx.model:
            for i, j, block in foreign_signatures(messages, ts, ctx.signature_models, ctx.model):
                add(
                    # Only the Gemini API refuses it (Vertex documents otherwise).
                    FOREIGN_THOUGHT_SIGNATURE.violation(
                        i, (pid(block),), f"contents[{i}].parts[{j}].thoughtSignature"
                    )
                )
        return out

    def signatures_due(self, messages: Sequence[Message], ctx: Context) -> bool:
        return ctx.thought_signatures or self.signatures_required

    def foreign_calls(self, messages: Sequence[Message], ctx: Context) -> frozenset[int]:
        if not (self.foreign_signatures_refused and ctx.signature_models and ctx.model):
            return frozenset()
        ts = [t for t in turns(messages, "tool", ctx.shape) if t.items]
        found = foreign_signatures(messages, ts, ctx.signature_models, ctx.model)
        return frozenset(id(b.native) for _, _, b in found)

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # G8: the documented stand-in replaces a signature another model produced, in the
        # current turn only (the only one validated); the call and its place stay.
        out, fixes = natives, []
        for v in left:
            if not v.code.endswith(".foreign_thought_signature") or fmt != "gemini":
                continue
            m = re.search(r"parts\[(\d+)\]", v.path)
            content = out[v.index] if 0 <= v.index < len(out) else None
            if m is None or not isinstance(content, Mapping):
                continue
            parts = content.get("parts")
            j = int(m.group(1))
            if not isinstance(parts, list) or not j < len(parts):
                continue
            part = parts[j]
            key = "thoughtSignature" if "thoughtSignature" in part else "thought_signature"
            if out is natives:
                out = list(natives)
            new_parts = list(parts)
            new_parts[j] = {**part, key: SKIP_SIGNATURE}
            out[v.index] = {**content, "parts": new_parts}
            fixes.append(
                Fix(
                    "signature_bypassed",
                    v.index,
                    v.ids,
                    "the call's thought signature was produced by another model; the "
                    "documented bypass value stands in",
                )
            )
        return out, fixes

    def for_model(self, model: str) -> Profile:
        from toolpair.providers._models import gemini_family

        family = gemini_family(model)
        if family == "gemini-2.5" and self.name == "gemini" and "flash-lite" in model.lower():
            # Refused unsigned since 2026-05 (Mirrowel/LLM-API-Key-Proxy#160).
            return _specialised(type(self), "gemini-2.5-flash-lite")
        if family == "gemini-3" or (family == "gemini-2.5" and self.name == "gemini"):
            return _specialised(type(self), family)
        return self


def unsigned_steps(ts: Sequence[Turn]) -> list[Item]:
    """The first call of each model step in the current turn, where it has no
    signature (parallel calls: only the first part of a step carries one)."""
    out = []
    for t in current_loop(ts):
        if t.role != "assistant":
            continue
        first = next((it for it in t.items if it.block.kind == "call"), None)
        if first is not None and not first.block.item_id:
            out.append(first)
    return out


def generation(model: str) -> tuple[str, str] | None:
    """A Gemini model's version and tier (``("3.5", "flash")``), which its signatures
    are bound to; None for an id that names neither (an alias such as
    ``gemini-flash-latest``)."""
    m = model.lower().rsplit("/", 1)[-1]
    version = _VERSION.match(m)
    if version is None:
        return None
    rest = m[version.end() :]
    tier = next((t for t in ("flash-lite", "flash", "pro") if f"-{t}" in rest), None)
    return (version.group(1), tier) if tier is not None else None


def foreign_signatures(
    messages: Sequence[Message],
    ts: Sequence[Turn],
    produced_by: Mapping[str, str],
    model: str,
) -> list[tuple[int, int, Any]]:
    """The function calls of the current turn whose thought signature a model of another
    version or tier produced: (content index, part index, block). Where either model
    cannot be placed, nothing is said."""
    mine = generation(model)
    if mine is None:
        return []
    by_index = {m.index: m for m in messages}
    out = []
    for t in current_loop(ts):
        if t.role != "assistant":
            continue
        for i in dict.fromkeys(t.msgs):
            for j, b in enumerate(by_index[i].blocks):
                sig = b.item_id
                if b.kind != "call" or not isinstance(sig, str) or sig in _STAND_INS:
                    continue
                other = produced_by.get(sig)
                theirs = generation(other) if isinstance(other, str) else None
                if theirs is not None and theirs != mine:
                    out.append((i, j, b))
    return out


_CACHE: dict[tuple[type, str], Profile] = {}


def _specialised(base: type[Gemini], family: str) -> Profile:
    """``base`` as a model family sees it (cached: a profile holds no state)."""
    key = (base, family)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    # The no-op checker does not read signatures: these families take the full path.
    if family == "gemini-3":
        attrs = {"signatures_required": True, "fast_path": False}
        # Recorded on the Gemini API only: Vertex keeps the strict reading.
        attrs["split_calls"] = base.name == "gemini"
        cls: type[Gemini] = type(base.__name__ + "3", (base,), attrs)
    elif family == "gemini-2.5":
        cls = type(base.__name__ + "25", (base,), {"split_responses": True})
    elif family == "gemini-2.5-flash-lite":
        attrs = {"split_responses": True, "signatures_required": True, "fast_path": False}
        cls = type(base.__name__ + "25Lite", (base,), attrs)
    else:
        raise ValueError(f"unknown Gemini family {family!r}")
    prof = _CACHE[key] = cls()
    return prof


def _same_calls(calls: Sequence[Item], results: Sequence[Item]) -> bool:
    """With ids on both halves they must match as sets. Whether Gemini itself rejects
    mismatched ids is UNVERIFIED (docs/rules.md G7): a mismatch is reported under G2,
    the rule that holds the pairing. Without ids the count is all that is checked: a
    response named otherwise than its call was taken (G2's evidence against)."""
    if all(x.block.id for x in calls) and all(x.block.id for x in results):
        return sorted(pid(x.block) for x in calls) == sorted(pid(x.block) for x in results)
    return True


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_RESPONSE,
    UNEXPECTED_RESPONSE,
    RESPONSE_COUNT,
    CALL_TURN_POSITION,
    ENDS_WITH_CALL,
    MISSING_THOUGHT_SIGNATURE,
    EMPTY_PARTS,
    FOREIGN_THOUGHT_SIGNATURE,
)
