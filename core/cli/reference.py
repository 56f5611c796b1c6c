"""``toolpair rules``: the rules a provider (and model) holds a history to."""

from __future__ import annotations

import argparse
import sys

from toolpair.cli.reading import checked_model, err
from toolpair.providers import PROVIDERS, get_profile


def cmd_rules(args: argparse.Namespace) -> int:
    from toolpair import rules

    if args.markdown:
        sys.stdout.write(rules.markdown())
        return 0
    if args.model and not args.provider:
        err("--model needs a PROVIDER")
        return 2
    providers = [args.provider] if args.provider else [p for p in PROVIDERS if p != "portable"]
    for provider in providers:
        model = checked_model(provider, args.model)
        profile = get_profile(provider, model)
        shown = f", model {model}" if model else ""
        if args.model and not model:
            shown = f" (--model {args.model} ignored, not one of its models: the strictest rules)"
        relax = rules.relaxed(provider, model) if model else None
        traits = rules.traits(profile, relax)
        if traits == "-":
            traits = "the pairing rules below, nothing beyond them"
        print(f"{provider}{shown}: {traits}")
        for r in rules.rules_for(provider, model):
            print(f"  {r.ref:<4} {r.code:<46} {r.status:<10} {r.shown}")
            if r.applies != "every model":
                print(f"  {'':<4} {'':<46} applies to: {r.applies}")
    return 0
