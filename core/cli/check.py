"""``toolpair check``: report every violation of each file, in the provider's words, at
its line; ``--thread`` reads a LangGraph checkpoint file."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

from toolpair import _api
from toolpair._model import InvalidHistory, Violation
from toolpair.cli.reading import (
    ReadError,
    checked_model,
    err,
    install_hint,
    invalid,
    judged,
    location,
    named,
    open_source,
    read_document,
    resolve,
    unit_line,
)
from toolpair.cli.render import group_line, grouped, plural, violation_item, violation_line
from toolpair.cli.sessions import check_file as session_check
from toolpair.cli.sessions import session_format
from toolpair.engine.coverage import NothingJudged


def cmd_check(args: argparse.Namespace) -> int:
    status = 0
    out_json: list[dict[str, Any]] = []
    for name in args.files:
        try:
            n = _check_file(name, args, out_json)
        except ReadError as e:
            err(str(e))
            if args.json:
                # A file that was not checked is in the array too, so that `[]` only ever
                # means "no violations".
                out_json.append({"file": "<stdin>" if name == "-" else name, "error": e.reason})
            status = 2
            continue
        if n and status == 0:
            status = 1
    if args.json:
        json.dump(out_json, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    return status


def _check_file(name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]) -> int:
    if getattr(args, "thread", None) is not None:
        return _check_thread(name, args, out_json)
    fmt = session_format(name, args.format, raw=getattr(args, "raw", False))
    if fmt is not None:
        return session_check(fmt, name, args, out_json)
    stream, args = open_source(name, args)
    shown = "<stdin>" if name == "-" else name
    total = 0
    lines = 0
    units = 0
    described: set[str] = set()
    try:
        doc = read_document(shown, stream, keep_raw=False)
        for unit in doc.units:
            units += 1
            r = resolve(unit.obj, args.format, args.provider, location(shown, unit, None))
            judged(r, args, location(shown, unit, None))
            model = checked_model(r.provider, args.model)
            described.add(named(r, args.provider is not None, model))
            try:
                violations = _api.validate(r.history, r.provider, model=model, format=r.format)
            except NothingJudged as e:
                raise ReadError(
                    location(shown, unit, None), f"nothing judged, not reported valid: {e}"
                ) from None
            except InvalidHistory as e:
                raise invalid(shown, unit, e) from None
            total += len(violations)
            if args.json:
                out_json.extend(
                    violation_item(
                        v,
                        file=shown,
                        line=unit_line(unit, v.index),
                        provider=r.provider,
                        format=r.format_name,
                    )
                    for v in violations
                )
            else:
                lines += print_violations(
                    functools.partial(location, shown, unit), violations, r.provider
                )
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if not args.json:
        what = "; ".join(sorted(described))
        count = "valid" if not total else plural(total, "violation")
        if lines != total:
            count += f" across providers, {plural(lines, 'finding')}"
        per = f" in {units} histories" if doc.kind == "jsonl-requests" else ""
        print(f"{shown}: {count}{per} ({what})")
    return total


def print_violations(loc: Callable[[int], str], violations: list[Violation], provider: str) -> int:
    """One line per violation; for the portable rule set one line per finding, naming
    every provider that refuses it (``--json`` keeps one item per provider). Returns the
    number of lines."""
    if provider != "portable":
        for v in violations:
            print(violation_line(loc(v.index), v))
        return len(violations)
    groups = grouped(violations)
    for v, providers in groups:
        print(group_line(loc(v.index), v, providers))
    return len(groups)


#: Where ``check --thread`` finds LangGraph (imported only when the option is given).
LANGGRAPH = "toolpair.integrations.langgraph"


def _check_thread(name: str, args: argparse.Namespace, out_json: list[dict[str, Any]]) -> int:
    """``check FILE --thread ID``: FILE is a LangGraph SQLite checkpoint file; the
    thread's latest checkpoint is checked (with the results of its unfinished step)."""
    where = f"{name} (thread {args.thread})"
    try:
        module = importlib.import_module(LANGGRAPH)
    except ImportError as e:
        raise ReadError(
            where,
            f"--thread reads LangGraph checkpoints, but {LANGGRAPH} cannot be imported ({e}); "
            "install it from a toolpair checkout with: "
            + install_hint("langgraph", "langgraph-checkpoint-sqlite"),
        ) from None
    provider = args.provider or module.DEFAULT_PROVIDER
    model = checked_model(provider, args.model)
    try:
        messages, codec = module.load_thread(name, args.thread, provider=provider)
    except ImportError as e:
        raise ReadError(where, f"cannot read LangGraph checkpoints ({e})") from None
    except (LookupError, OSError, ValueError) as e:
        raise ReadError(where, str(e)) from None
    except Exception as e:  # sqlite3.DatabaseError and the saver's own errors
        raise ReadError(where, f"not a LangGraph SQLite checkpoint file: {e}") from None
    try:
        violations = _api.validate(messages, provider, model=model, format=codec)
    except InvalidHistory as e:
        raise ReadError(where, f"not a history toolpair can read: {e}") from None
    if args.json:
        out_json.extend(
            violation_item(v, file=name, thread=args.thread, provider=provider, format="langgraph")
            for v in violations
        )
    else:
        lines = print_violations(lambda i: f"{where}: message {i}", violations, provider)
        count = "valid" if not violations else plural(len(violations), "violation")
        if lines != len(violations):
            count += f" across providers, {plural(lines, 'finding')}"
        print(f"{where}: {count} ({len(messages)} messages, {provider} rules)")
    return len(violations)
