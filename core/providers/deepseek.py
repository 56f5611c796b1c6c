"""DeepSeek's OpenAI-compatible endpoints (docs/rules.md): Chat Completions with
OpenAI's rules plus thinking mode's ``reasoning_content``, and a Responses endpoint that
pairs by place rather than by ``call_id`` alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from toolpair._model import Fix, Message, Policy, Violation
from toolpair._view import current_user_turn, flat, pid
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule, profile_has
from toolpair.providers.openai import OpenAIChat
from toolpair.providers.responses import Responses

MISSING_REASONING_CONTENT = Rule(
    "deepseek.missing_reasoning_content",
    "D1",
    "Missing `reasoning_content` field in the assistant message at message index {i}. For "
    "more information, please refer to "
    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    "observed",
    "continuedev/continue#10193 (V3.2); Sylinko/Everywhere#287 (V3.2, 2026-02)",
    "thinking on in the body (deepseek-reasoner is held to D2), on a wire body",
    profile_has("reasoning_every_turn", False),
    since="V3.2: the current tool loop's assistant turns; V4 asks it of every assistant turn (D2)",
    path="messages[{i}]",
)

REASONING_NOT_PASSED_BACK = Rule(
    "deepseek.reasoning_not_passed_back",
    "D2",
    "The `reasoning_content` in the thinking mode must be passed back to the API.",
    "observed",
    "Zoo-Code-Org/Zoo-Code#201 (V4); danny-avila/LibreChat#13366 (enforced gradually from 2026-05)",
    "deepseek-v4 in thinking mode, and deepseek-reasoner (served by V4), every "
    "assistant turn, on a wire body",
    profile_has("reasoning_every_turn"),
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
)

MISSING_OUTPUT = Rule(
    "deepseek-responses.missing_output",
    "D3",
    "No tool output found for tool call {id}.",
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
    path="input",
)

ORPHAN_OUTPUT = Rule(
    "deepseek-responses.orphan_output",
    "D3",
    "No tool call found for tool output with call_id {id}.",
    "observed",
    "deepseek-ai/DeepSeek-V3#1588, #1611",
    path="input",
)


class DeepSeek(OpenAIChat):
    name = "deepseek"
    reports_as: ClassVar[dict[str, str]] = {"openai.": "deepseek."}
    # OpenAI's 40-character limit is not DeepSeek's: its own ids (`call_0_` and a UUID,
    # 43 characters) come back in every tool loop.
    replaces = frozenset({"openai.id_too_long"})
    id_max = Profile.id_max
    #: The model thinks whatever the request says (deepseek-reasoner).
    thinks: ClassVar[bool] = False
    #: V4: every assistant turn passes its reasoning back, not only the current loop's.
    reasoning_every_turn: ClassVar[bool] = False

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out = [_renamed(v, self.reports_as) for v in super().rules(messages, ctx)]
        if not (ctx.thinking or self.thinks) or ctx.format != "openai":
            # Only a wire body shows the field; a framework's formatter decides it.
            return out
        start = 0 if self.reasoning_every_turn else current_user_turn(messages)
        for m in messages[start:]:
            if m.role != "assistant" or not isinstance(m.native, dict):
                continue
            if "reasoning_content" in m.native:
                continue
            if self.reasoning_every_turn:
                out.append(REASONING_NOT_PASSED_BACK.violation(m.index))
            elif any(b.kind == "call" for b in m.blocks):
                out.append(
                    MISSING_REASONING_CONTENT.violation(
                        m.index,
                        tuple(pid(b) for b in m.blocks if b.kind == "call"),
                        i=m.index,
                    )
                )
        return out

    def complete(
        self, natives: list[Any], left: Sequence[Violation], fmt: str, policy: Policy
    ) -> tuple[list[Any], list[Fix]]:
        # The reasoning itself is gone and cannot be made up; DeepSeek takes the field
        # back empty (recorded: the request of pydantic-ai's fix for #5829).
        codes = ("deepseek.missing_reasoning_content", "deepseek.reasoning_not_passed_back")
        out, fixes = natives, []
        for v in left:
            if v.code not in codes or fmt != "openai" or not 0 <= v.index < len(out):
                continue
            m = out[v.index]
            if not isinstance(m, dict) or "reasoning_content" in m:
                continue
            if out is natives:
                out = list(natives)
            out[v.index] = {**m, "reasoning_content": ""}
            fixes.append(
                Fix(
                    "reasoning_content_added",
                    v.index,
                    v.ids,
                    "the turn's reasoning was not kept; it goes back empty, as DeepSeek takes",
                )
            )
        return out, fixes

    def for_model(self, model: str) -> Profile:
        m = model.lower().rsplit("/", 1)[-1]
        if m.startswith("deepseek-v4"):
            return _V4
        if m.startswith("deepseek-reasoner"):
            return _REASONER
        return self


class _DeepSeekReasoner(DeepSeek):
    thinks = True
    # Thinking whatever the body says: every assistant turn's reasoning_content is a
    # rule that OpenAI's no-op checker does not read.
    fast_path = False
    # The alias has been served by the V4 models since 2026: a recorded refusal
    # (pydantic-ai#5829, 2026-06) answers a tool-call turn without reasoning_content in
    # V4's words, and V4 asks it of every assistant turn.
    reasoning_every_turn = True


class _DeepSeekV4(DeepSeek):
    reasoning_every_turn = True


_REASONER = _DeepSeekReasoner()
_V4 = _DeepSeekV4()


class DeepSeekResponses(Responses):
    """Outputs must come right after the group of calls they answer (no pairing across
    the input by ``call_id``), and reasoning items may be grouped before their calls,
    the layout OpenAI refuses. A reasoning item after a call ends the group: the calls
    before it are left without outputs (``rs, fc1, rs, fc2, out1, out2`` is refused)."""

    name = "deepseek-responses"
    # Outputs right after their group of calls: stricter than OpenAI's pairing by id.
    fast_key = "deepseek-responses"
    reasoning_adjacency = False
    reasoning_ends_calls = True
    fc_needs_reasoning = False
    reports_as: ClassVar[dict[str, str]] = {"openai-responses.": "deepseek-responses."}
    replaces = frozenset(
        {
            "openai-responses.missing_output",
            "openai-responses.orphan_output",
            "openai-responses.reasoning_without_following",
        }
    )

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out = [
            _renamed(v, self.reports_as)
            for v in super().rules(messages, ctx)
            if v.code not in self.replaces
        ]
        add = out.append
        items = flat(messages)
        n = len(items)
        k = 0
        group: list[tuple[str, int]] = []  # (call id, index) of the calls before the outputs
        leading = ctx.previous_response_id is not None
        while k < n:
            it, _role = items[k]
            b = it.block
            if b.kind in ("call", "reasoning"):
                group = []
                while k < n and items[k][0].block.kind in ("call", "reasoning"):
                    c = items[k][0]
                    if c.block.kind == "call":
                        group.append((pid(c.block), c.msg))
                    elif group:
                        break
                    k += 1
                answered: set[str] = set()
                while k < n and items[k][0].block.kind == "result":
                    r = items[k][0]
                    rid = pid(r.block)
                    if any(rid == cid for cid, _ in group) and rid not in answered:
                        answered.add(rid)
                    else:
                        add(_orphan(rid, r.msg))
                    k += 1
                for cid, at in group:
                    if cid not in answered:
                        add(MISSING_OUTPUT.violation(at, (cid,), id=cid))
                leading = False
                continue
            if b.kind == "result" and not leading:
                add(_orphan(pid(b), it.msg))
            elif b.kind != "result":
                leading = False
            k += 1
        return out


def _orphan(cid: str, at: int) -> Violation:
    return ORPHAN_OUTPUT.violation(at, (cid,), id=cid)


def _renamed(v: Violation, names: dict[str, str]) -> Violation:
    for old, new in names.items():
        if v.code.startswith(old):
            return Violation(new + v.code[len(old) :], v.message, v.index, v.ids, v.path)
    return v


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_REASONING_CONTENT,
    REASONING_NOT_PASSED_BACK,
    MISSING_OUTPUT,
    ORPHAN_OUTPUT,
)
