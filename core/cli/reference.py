"""``toolpair rules``: the rules a provider (and model) holds a history to."""

from __future__ import annotations

import argparse
import sys

from toolpair.cli.reading import err
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
        profile = get_profile(provider, args.model)
        model = f", model {args.model}" if args.model else ""
        relax = rules.relaxed(provider, args.model) if args.model else None
        print(f"{provider}{model}: {rules.traits(profile, relax)}")
        for r in rules.rules_for(provider, args.model):
            print(f"  {r.ref:<4} {r.code:<46} {r.status:<10} {r.text}")
            if r.applies != "every model":
                print(f"  {'':<4} {'':<46} applies to: {r.applies}")
    return 0
