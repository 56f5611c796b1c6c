"""Every rule toolpair checks: its code, the provider's own text, how sure we are of it and
where it was seen, and which models and hosts it applies to.

Each rule is defined once, beside the check that reports it (``RULES`` of each module in
`toolpair.providers`), and reported through `Rule.violation`, so the index cannot say
one thing while a profile says another. This module collects them, decides which apply to
a provider and model, and renders ``docs/rules.md`` and ``toolpair rules``.

    toolpair rules bedrock --model meta.llama3-3-70b-instruct-v1:0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from toolpair.providers import (
    PROFILES,
    Evidence,
    Profile,
    Rule,
    anthropic,
    bedrock,
    deepseek,
    gemini,
    get_profile,
    mistral,
    model_families,
    moonshot,
    openai,
    responses,
    vertex,
    zhipu,
)
from toolpair.providers import Kind as Kind
from toolpair.providers import Stance as Stance
from toolpair.providers import Status as Status


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


#: Every rule, as the provider modules define them beside their checks: one provider
#: (or host) after another, in the order of the page.
RULES: tuple[Rule, ...] = (
    *anthropic.RULES,
    *bedrock.RULES,
    *openai.RULES,
    *responses.RULES,
    *gemini.RULES,
    *vertex.RULES,
    *mistral.RULES,
    *deepseek.RULES,
    *moonshot.RULES,
    *zhipu.RULES,
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
    "moonshot": "Moonshot AI Chat Completions, Kimi (`moonshot`)",
    "zhipu": "Zhipu AI Chat Completions, GLM (`zhipu`)",
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
    ("moonshot", None),
    ("moonshot", "kimi-k2.6"),
    ("moonshot", "kimi-k2-0905-preview"),
    ("zhipu", None),
    ("zhipu", "glm-5.2"),
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
    if getattr(p, "thinks_by_default", False):
        out.append("thinking unless the body turns it off")
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
                f"{_cell(rule.shown)} | {_cell(pro)} | {_cell(con)} |"
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
