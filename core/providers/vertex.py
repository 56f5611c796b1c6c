"""Gemini on Vertex AI (docs/rules.md): Gemini's rules, stricter where Vertex is.
A turn of function responses may hold nothing else, the v1 API refuses ``id`` on
function calls and responses, and two texts are worded differently."""

from __future__ import annotations

from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import pid, turns
from toolpair.providers._base import Context, Profile
from toolpair.providers._rule import Evidence, Rule, profile_has, profile_named
from toolpair.providers.gemini import Gemini

MIXED_RESPONSE_TURN = Rule(
    "vertex.mixed_response_turn",
    "V1",
    "Requests ending with a model turn are not supported.",
    "observed",
    "Prism-Shadow/agenthub#189; envoyproxy/ai-gateway#2686 (Gemini 3.7 Flash on Vertex); "
    "router-for-me/CLIProxyAPI#5607 (Gemini 3.8 Flash on Vertex; the same turn taken by the "
    "Gemini API)",
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
    path="contents[{index}]",
)

UNKNOWN_ID_FIELD = Rule(
    "vertex.unknown_id_field",
    "V2",
    'Invalid JSON payload received. Unknown name "id" at '
    "'contents[{i}].parts[{j}].{field}': Cannot find field.",
    "observed",
    "pydantic/pydantic-ai#5081; vercel/ai#15664 (the v1 API)",
    "Vertex AI without a model, on a wire body: v1 refuses the field, v1beta1 takes it, "
    "and which one is in the URL, not the request",
    profile_has("ids_allowed", False),
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
    path="contents[{i}].parts[{j}].{field}.id",
)

MISSING_THOUGHT_SIGNATURE = Rule(
    "vertex.missing_thought_signature",
    "G5",
    "Unable to submit request because function call `{name}` in the {n}. content block is "
    "missing a `thought_signature`. Learn more: "
    "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures",
    "observed",
    "RooCodeInc/Roo-Code#9499; QwenLM/qwen-code#1187",
    "Gemini 3 on Vertex AI (as G5)",
    profile_named("vertex"),
    path="contents[{n}]",
)

# UNVERIFIED past "parts field": the observed report quotes the text cut short.
EMPTY_PARTS = Rule(
    "gemini.empty_parts",
    "G6",
    "Unable to submit request because it must include at least one parts field, which "
    "describes the prompt input. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
    "observed",
    "envoyproxy/ai-gateway#2686 (the text past 'parts field' is unverified)",
    "Vertex AI",
    profile_named("vertex"),
    path="contents[{i}].parts",
)


class Vertex(Gemini):
    name = "vertex"
    missing_signature = MISSING_THOUGHT_SIGNATURE
    empty_parts = EMPTY_PARTS
    # Gemini's checker, and mixed response turns and id fields refused (the v1 API).
    fast_key = "vertex"
    # Function responses and the user's own content go in separate turns.
    results_only = True
    bridge_after_results = True
    #: Vertex's v1 API has no ``id`` field on function calls and responses; v1beta1
    #: takes them. Which one a request goes to is in its URL, not in the request, so
    #: only the strict set (no model) is held to it.
    ids_allowed = False
    #: "If a request contains thought signatures from an incompatible model, the request
    #: still succeeds" (Vertex AI's thought-signatures page): G8 is not Vertex's.
    foreign_signatures_refused = False

    def for_model(self, model: str) -> Profile:
        base = super().for_model(model)
        hit = _NAMED.get(type(base))
        if hit is None:
            cls = type(
                type(base).__name__ + "Named",
                (type(base),),
                {"ids_allowed": True, "fast_key": "vertex-ids"},
            )
            hit = _NAMED[type(base)] = cls()
        return hit

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        out = super().rules(messages, ctx)
        add = out.append
        for t in turns(messages, "tool", ctx.shape):
            results = [it for it in t.items if it.block.kind == "result"]
            if results and any(it.block.kind != "result" for it in t.items):
                add(MIXED_RESPONSE_TURN.violation(t.first, tuple(pid(it.block) for it in results)))
        if ctx.format == "gemini" and not self.ids_allowed:
            # Only the wire body shows whether an id is sent; a framework's formatter
            # decides that for itself.
            for m in messages:
                for j, b in enumerate(m.blocks):
                    if b.kind in ("call", "result") and b.id is not None:
                        field = "function_call" if b.kind == "call" else "function_response"
                        add(
                            UNKNOWN_ID_FIELD.violation(
                                m.index,
                                (b.id,),
                                i=m.index,
                                j=j,
                                field=field,
                            )
                        )
        return out


_NAMED: dict[type, Profile] = {}


#: The rules this module checks, in the order of docs/rules.md.
RULES = (
    MISSING_THOUGHT_SIGNATURE,
    EMPTY_PARTS,
    MIXED_RESPONSE_TURN,
    UNKNOWN_ID_FIELD,
)
