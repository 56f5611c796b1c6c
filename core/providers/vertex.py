"""Gemini on Vertex AI (docs/rules.md): Gemini's rules, stricter where Vertex is.
A turn of function responses may hold nothing else, the v1 API refuses ``id`` on
function calls and responses, and two texts are worded differently."""

from __future__ import annotations

from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import pid, turns
from toolpair.providers._base import Context, Profile
from toolpair.providers.gemini import Gemini

V1 = "Requests ending with a model turn are not supported."
V2 = (
    'Invalid JSON payload received. Unknown name "id" at '
    "'contents[{i}].parts[{j}].{field}': Cannot find field."
)
V_SIGNATURE = (
    "Unable to submit request because function call `{name}` in the {n}. content block is "
    "missing a `thought_signature`. Learn more: "
    "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures"
)
# UNVERIFIED past "parts field": the observed report quotes the text cut short.
V_EMPTY = (
    "Unable to submit request because it must include at least one parts field, which "
    "describes the prompt input. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)


class Vertex(Gemini):
    name = "vertex"
    # Gemini's checker, and mixed response turns and id fields refused (the v1 API).
    fast_key = "vertex"
    missing_signature_text = V_SIGNATURE
    empty_parts_text = V_EMPTY
    # Function responses and the user's own content go in separate turns.
    results_only = True
    bridge_after_results = True
    #: Vertex's v1 API has no ``id`` field on function calls and responses; v1beta1
    #: takes them. Which one a request goes to is in its URL, not in the request, so
    #: only the strict set (no model) is held to it.
    ids_allowed = False

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
                add(
                    Violation(
                        "vertex.mixed_response_turn",
                        V1,
                        t.first,
                        tuple(pid(it.block) for it in results),
                        f"contents[{t.first}]",
                    )
                )
        if ctx.format == "gemini" and not self.ids_allowed:
            # Only the wire body shows whether an id is sent; a framework's formatter
            # decides that for itself.
            for m in messages:
                for j, b in enumerate(m.blocks):
                    if b.kind in ("call", "result") and b.id is not None:
                        field = "function_call" if b.kind == "call" else "function_response"
                        add(
                            Violation(
                                "vertex.unknown_id_field",
                                V2.format(i=m.index, j=j, field=field),
                                m.index,
                                (b.id,),
                                f"contents[{m.index}].parts[{j}].{field}.id",
                            )
                        )
        return out


_NAMED: dict[type, Profile] = {}
