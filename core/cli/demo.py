"""``toolpair demo``: violations, repair and re-check on the shipped poisoned histories."""

from __future__ import annotations

import argparse

from toolpair import _api
from toolpair.cli.reading import err
from toolpair.cli.render import plural, render_turns, violation_line
from toolpair.demo import DEMOS, load_demo


def cmd_demo(args: argparse.Namespace) -> int:
    names = args.providers or list(DEMOS)
    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        err(f"no demo for {', '.join(unknown)}; known: {', '.join(DEMOS)}")
        return 2
    status = 0
    for name in names:
        body = load_demo(name)
        parsed = _api.parse(body, name, name, {})
        violations = parsed.profile.rules(parsed.messages, parsed.ctx)
        print(f"== {name}: a poisoned {name} request (demo/{name}.json)")
        for line in render_turns(parsed.messages, {v.index for v in violations}):
            print(f"  {line}")
        print(f"-- toolpair check: {plural(len(violations), 'violation')}, as {name} words them")
        for v in violations:
            print(f"  {violation_line(f'messages.{v.index}', v)}")
        rep = _api.repair(body, name, format=name)
        print(f"-- toolpair repair: {plural(len(rep.fixes), 'fix', 'fixes')}")
        for f in rep.fixes:
            print(f"  {f}")
        fixed = _api.parse(rep.messages, name, name, {})
        before = {id(m) for m in parsed.raw}
        touched = {m.index for m in fixed.messages if id(m.native) not in before}
        for line in render_turns(fixed.messages, touched):
            print(f"  {line}")
        after = _api.validate(rep.messages, name, format=name)
        if after:
            status = 1
            print(f"-- re-check: {plural(len(after), 'violation')} left")
            for v in after:
                print(f"  {violation_line(f'messages.{v.index}', v)}")
        else:
            print(f"-- re-check: valid for {name}")
        print()
    print("Try it on your own transcripts: toolpair check FILE; toolpair repair FILE -o OUT")
    return status
