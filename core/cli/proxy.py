"""``toolpair proxy``: serve the repairing reverse proxy of `toolpair.gateway.proxy`."""

from __future__ import annotations

import argparse
import logging
import sys

from toolpair.cli.reading import err


def cmd_proxy(args: argparse.Namespace) -> int:
    from toolpair.gateway import proxy

    log = logging.getLogger("toolpair")
    log.disabled = False  # main() silences it for the file commands; here it is the report
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    try:
        proxy.serve(
            args.upstream,
            mode=args.mode,
            host=args.host,
            port=args.port,
            provider=args.provider,
            timeout=args.timeout,
        )
    except ValueError as e:
        err(str(e))
        return 2
    except OSError as e:
        err(f"cannot listen on {args.host}:{args.port}: {e}")
        return 2
    return 0
