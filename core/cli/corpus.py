"""``toolpair corpus check DIR...``: hold toolpair to folders of recorded cases (those a
deployment's `toolpair.corpus.Recorder` writes, or the project's ``tests/recorded``) and
print the agreement per provider."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolpair import corpus
from toolpair.cli.reading import err


def add_command(sub: Any) -> None:
    c = sub.add_parser(
        "corpus",
        help="hold toolpair to folders of recorded provider answers",
        description="Work with folders of recorded cases: the disagreements a deployment "
        "records (see toolpair.corpus.Recorder) and the project's own tests/recorded.",
    )
    csub = c.add_subparsers(dest="corpus_command", required=True, metavar="COMMAND")
    ch = csub.add_parser(
        "check",
        help="print how often toolpair agrees with the recorded answers, per provider",
        description="Judge every case under each DIR (<provider>/<name>.json) with "
        "toolpair and print, per provider: agreement (validate matches the provider's "
        "answer), changed-accepted (repair would change a body the provider took), "
        "missed refusals (a refused body toolpair finds nothing in) and location "
        "(the refusal found at the message index the error names). Exit 0 every case "
        "agrees, 1 some disagree, 2 a folder or case could not be read.",
    )
    ch.add_argument("dirs", nargs="+", metavar="DIR", help="a folder of cases")
    ch.add_argument("--json", action="store_true", help="print the table as JSON")
    ch.set_defaults(func=cmd_corpus_check)


def _what(v: corpus.Verdict) -> str:
    if v.error:
        return f"toolpair could not read it ({v.error.split(':', 1)[0]})"
    if v.accepted and v.codes:
        return "accepted, but toolpair reports " + ", ".join(sorted({c for c, _, _ in v.codes}))
    if v.accepted:
        return "accepted, but repair would change it"
    if not v.codes:
        return f"refused ({v.case['status']}), but toolpair finds it valid"
    return f"refused ({v.case['status']}), toolpair reports another rule or message: " + ", ".join(
        f"{c} at {i}" for c, i, _ in v.codes
    )


def cmd_corpus_check(args: argparse.Namespace) -> int:
    status = 0
    named: list[tuple[str, dict[str, Any]]] = []
    for d in args.dirs:
        unread: list[str] = []
        try:
            found = corpus.read_cases(d, errors=unread)
        except corpus.CaseError as e:
            unread, found = [str(e)], []
        for message in unread:
            err(message)
            status = 2
        prefix = d.rstrip("/\\") + "/" if len(args.dirs) > 1 else ""
        named += [(prefix + name, case) for name, case in found]
    vs = corpus.judge_all(named)
    rows = corpus.table(vs)
    total = corpus.figures(vs)
    wrong = [v for v in vs if corpus.disagrees(v)]
    if args.json:
        out = {
            "providers": {p: f.as_dict() for p, f in rows.items()},
            "all": total.as_dict(),
            "disagreements": [
                {
                    "case": v.name,
                    "provider": v.provider,
                    "status": v.case["status"],
                    "what": _what(v),
                    "violations": [{"code": c, "index": i} for c, i, _ in v.codes],
                }
                for v in wrong
            ],
        }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(rows, total)
        if wrong:
            print(f"\n{len(wrong)} disagreement(s):")
            for v in wrong:
                print(f"  {v.name}: {_what(v)}")
    if not vs and status == 0:
        err("no cases found in " + ", ".join(args.dirs))
    if wrong and status == 0:
        status = 1
    return status


def _print_table(rows: dict[str, corpus.Figures], total: corpus.Figures) -> None:
    head = ("provider", "cases", "agreement", "changed-accepted", "missed refusals", "located")
    lines = [head]
    for name, f in [*rows.items(), ("all", total)]:
        lines.append(
            (
                name,
                f"{f.total} ({f.accepted} accepted, {f.refused} refused)",
                f"{f.agree}/{f.decidable} ({100 * f.share:.1f}%)",
                str(f.changed_accepted),
                str(f.missed_refusals),
                f"{f.located}/{f.locatable}",
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    for k, row in enumerate(lines):
        if k == len(lines) - 1 and len(lines) > 2:
            print("  ".join("-" * w for w in widths))
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=False)
        ]
        print("  ".join(cells).rstrip())
