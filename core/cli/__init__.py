"""The ``toolpair`` command: check and repair transcripts on disk.

    toolpair check FILE... [--provider P] [--format F] [--json]
    toolpair repair FILE [--provider P] [--format F] [-o OUT | --in-place [--allow-partial]]
    toolpair demo [PROVIDER...]
    toolpair scan [DIR] [--agent A] [--json]   (agent sessions that would fail to resume)
    toolpair map FILE [--html OUT]        (every turn, its pairs and breaks)
    toolpair proxy --upstream URL [--mode M] [--host H] [--port P]   (repair on the wire)
    toolpair corpus check DIR... [--json]   (agreement with recorded provider answers)

An agent's session file (a Claude Code transcript, a Gemini CLI session, a Cline task) is
detected and read as its agent reads it on resume (`toolpair.sessions`).

A file is a JSON request body, a JSON message list, or JSONL (one message per line, or
one request body / message list per line); ``-`` reads stdin. Exit status: 0 valid (or
repaired), 1 violations (left), 2 a file could not be read, parsed or written.

Framework dumps (pydantic-ai ``ModelMessagesTypeAdapter`` JSON, LangChain
``messages_to_dict`` output, OpenAI Agents SDK session items as a JSON list with
``--format openai-agents`` or a ``SQLiteSession`` database file with ``--session-id``)
are read through the framework's integration package when that framework is installed:
the integration module exposes ``load_dump(obj) -> (messages, codec) | None`` and
``dump_messages(messages) -> obj``.

One module per command or group of commands: reading documents (`reading`), rendering
turns (`render`), then `check`, `repair`, `sessions` (every session format's check,
repair and scan), `map`, `demo`, `reference` (``rules``) and `proxy`. This module only
wires them into one parser.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence

from toolpair import __version__
from toolpair.cli import corpus as corpus_command
from toolpair.cli import map as map_command
from toolpair.cli import reading
from toolpair.cli import sessions as session_commands
from toolpair.cli.check import cmd_check
from toolpair.cli.demo import cmd_demo
from toolpair.cli.proxy import add_limit_arguments, add_record_arguments, cmd_proxy
from toolpair.cli.reading import FRAMEWORKS, ReadError, err
from toolpair.cli.reference import cmd_rules
from toolpair.cli.repair import cmd_repair
from toolpair.demo import DEMOS
from toolpair.formats import CODECS
from toolpair.providers import PROVIDERS
from toolpair.sessions import names as session_format_names

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    formats = [*CODECS, *FRAMEWORKS, *session_format_names()]
    p = argparse.ArgumentParser(
        prog="toolpair",
        description="Check and repair the tool calls and results of agent transcripts.",
    )
    p.add_argument("--version", action="version", version=f"toolpair {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--provider",
            choices=PROVIDERS,
            help="the provider whose rules apply (default: the one the format implies; "
            "portable for framework dumps)",
        )
        sp.add_argument("--format", choices=formats, help="the message format (default: detected)")
        sp.add_argument(
            "--model",
            metavar="MODEL",
            help="the model id, as you pass it to the provider: its family's own rules "
            "apply (default: the strictest rules of any model behind that API)",
        )
        sp.add_argument(
            "--raw",
            action="store_true",
            help="for a Codex rollout: judge what the file holds, before the healing Codex "
            "applies on resume (default: what Codex sends)",
        )
        sp.add_argument(
            "--session-id",
            metavar="ID",
            help="for an Agents SDK SQLite session file: the session to read "
            "(default: the only one)",
        )

    c = sub.add_parser(
        "check",
        help="report what a provider would reject",
        description="Report every violation, worded as the provider words it. "
        "Exit 0 valid, 1 violations, 2 unreadable file.",
    )
    c.add_argument("files", nargs="+", metavar="FILE", help="JSON or JSONL; - for stdin")
    common(c)
    c.add_argument("--json", action="store_true", help="print a JSON array of violations")
    c.add_argument(
        "--thread",
        metavar="ID",
        help="FILE is a LangGraph SQLite checkpoint file: check this thread's latest "
        'checkpoint (needs the langgraph extra, pip install ".[langgraph]", and '
        "langgraph-checkpoint-sqlite; default "
        "rules: the pairing rules of LangGraph's message list)",
    )
    c.set_defaults(func=cmd_check)

    r = sub.add_parser(
        "repair",
        help="write a repaired copy",
        description="Repair a transcript, writing it in the shape and format it was read "
        "(to stdout by default). Fixes go to stderr. Exit 0 valid after repair, 1 "
        "violations left, 2 unreadable or unwritable file.",
    )
    r.add_argument("file", metavar="FILE", help="JSON or JSONL; - for stdin")
    common(r)
    dest = r.add_mutually_exclusive_group()
    dest.add_argument("-o", "--output", metavar="OUT", help="write here (atomically)")
    dest.add_argument(
        "-i",
        "--in-place",
        action="store_true",
        help="rewrite FILE atomically, keeping the original as FILE.bak",
    )
    r.add_argument(
        "--thread",
        metavar="ID",
        help="not supported: a LangGraph thread is repaired with repair_thread() in Python "
        "(check FILE --thread ID reports it)",
    )
    r.add_argument(
        "--allow-partial",
        action="store_true",
        help="with --in-place on an agent's session: write a repair that leaves "
        "violations (by default such a session is not written, exit 1)",
    )
    r.set_defaults(func=cmd_repair)

    ru = sub.add_parser(
        "rules",
        help="print the rules a provider (and model) holds a history to",
        description="Print every rule toolpair checks for PROVIDER (all of them without "
        "one): its code, status, and the provider's own text. --model applies that model "
        "family's rules; --markdown prints the whole rule reference.",
    )
    ru.add_argument("provider", nargs="?", choices=PROVIDERS, metavar="PROVIDER")
    ru.add_argument("--model", metavar="MODEL", help="the model id, as you pass it")
    ru.add_argument("--markdown", action="store_true", help="the rule reference page")
    ru.set_defaults(func=cmd_rules)

    d = sub.add_parser(
        "demo",
        help="run on the poisoned transcripts shipped with toolpair",
        description="Show violations, repair and re-check on one poisoned history per "
        "provider, shipped inside the package.",
    )
    d.add_argument("providers", nargs="*", metavar="PROVIDER", help=f"any of {', '.join(DEMOS)}")
    d.set_defaults(func=cmd_demo)
    session_commands.add_commands(sub)
    map_command.add_command(sub, common)
    corpus_command.add_command(sub)

    px = sub.add_parser(
        "proxy",
        help="a reverse proxy that repairs (or rejects) every request it forwards",
        description="Forward every request to one Anthropic-, OpenAI- or Gemini-compatible "
        "endpoint, judging the history of each chat completions, messages, responses and "
        "generateContent request by the rules of the API it copies. A valid body is "
        "forwarded byte-identical; responses and event streams pass through untouched. "
        "Point a client at it: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 or "
        "OPENAI_BASE_URL=http://127.0.0.1:8787/v1.",
    )
    px.add_argument("--upstream", required=True, metavar="URL", help="the endpoint to forward to")
    px.add_argument(
        "--mode",
        choices=("repair", "reject", "observe"),
        default="repair",
        help="repair a broken history (default), reject it with the API's own 400, or only log it",
    )
    px.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    px.add_argument("--port", type=int, default=8787, help="port (default 8787; 0 picks one)")
    px.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="judge every request by these rules (e.g. portable) instead of those of the "
        "API each path belongs to",
    )
    px.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long to wait on the upstream (connect and each read; default 600)",
    )
    add_limit_arguments(px)
    add_record_arguments(px)
    px.set_defaults(func=cmd_proxy)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    reading.forget_warnings()
    # The CLI reports fixes itself; the library's summary warning would repeat them.
    log = logging.getLogger("toolpair")
    was_disabled = log.disabled
    log.disabled = True
    try:
        status: int = args.func(args)
        return status
    except ReadError as e:
        err(str(e))
        return 2
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        log.disabled = was_disabled
