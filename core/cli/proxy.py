"""``toolpair proxy``: serve the repairing reverse proxy of `toolpair.gateway.proxy`."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from toolpair.cli.reading import err

MiB = 1024 * 1024


def _size(text: str) -> int:
    """A byte count: ``1048576``, ``64M``, ``512MiB``, ``1G``."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1024, "M": MiB, "G": 1024 * MiB}.get(t[-1:], 1)
    try:
        value = int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64M)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def add_limit_arguments(px: argparse.ArgumentParser) -> None:
    """The limits and timeouts of ``toolpair proxy`` (defaults of `Settings`)."""
    g = px.add_argument_group("limits and timeouts")
    g.add_argument(
        "--max-body",
        type=_size,
        default=64 * MiB,
        metavar="SIZE",
        help="largest request body judged or forwarded, decoded or not "
        "(413 beyond, before reading it; default 64M)",
    )
    g.add_argument(
        "--max-buffered",
        type=_size,
        default=512 * MiB,
        metavar="SIZE",
        help="bytes of request bodies held at once for judging (503 beyond; default 512M)",
    )
    g.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        metavar="N",
        help="concurrent connections and requests (503 beyond; default 1000)",
    )
    g.add_argument(
        "--header-timeout",
        type=_positive,
        default=30.0,
        metavar="SECONDS",
        help="time to receive a request's head (default 30)",
    )
    g.add_argument(
        "--body-timeout",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="time to wait for each part of a request body (408; default 60)",
    )
    g.add_argument(
        "--keepalive-timeout",
        type=_positive,
        default=75.0,
        metavar="SECONDS",
        help="an idle client connection is closed after (default 75)",
    )
    g.add_argument(
        "--connect-timeout",
        type=_positive,
        metavar="SECONDS",
        help="time to connect to the upstream (504; default: --timeout)",
    )
    g.add_argument(
        "--read-timeout",
        type=_positive,
        metavar="SECONDS",
        help="time to wait for each read from the upstream (504 before the "
        "response starts; default: --timeout)",
    )
    g.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the port (default 1; one core serves "
        "thousands of requests a second)",
    )
    g.add_argument(
        "--http2",
        action="store_true",
        help="speak HTTP/2 to an https upstream (needs the h2 package)",
    )
    m = px.add_argument_group("metrics")
    m.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics (repairs, fixes, requests, latencies) at "
        "--metrics-path; that path is answered by the proxy, never forwarded",
    )
    m.add_argument(
        "--metrics-path",
        default="/toolpair/metrics",
        metavar="PATH",
        help="where --metrics serves them (default /toolpair/metrics)",
    )


def add_record_arguments(px: argparse.ArgumentParser) -> None:
    """``--record DIR`` and ``--record-per-hour N`` (the corpus, `toolpair.corpus`)."""
    g = px.add_argument_group("learning from the provider's answers")
    g.add_argument(
        "--record",
        metavar="DIR",
        help="record each request where the upstream's answer and toolpair's verdict "
        "disagree (a refusal of a body judged valid, an acceptance of one it would "
        "change) as an anonymised case in DIR; check them with `toolpair corpus check DIR`",
    )
    g.add_argument(
        "--record-per-hour",
        type=int,
        default=60,
        metavar="N",
        help="at most N cases recorded per hour, per worker (default 60)",
    )


def _install_line() -> str:
    from toolpair.gateway.proxy import INSTALL

    # From a checkout (an editable install), the extra is installed from the tree.
    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").is_file() and (here / "core").is_dir():
        return f'pip install "{here}[proxy]"' if Path.cwd() != here else 'pip install ".[proxy]"'
    return INSTALL


def cmd_proxy(args: argparse.Namespace) -> int:
    try:
        import httpx  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        err(f"toolpair proxy needs the proxy extra ({e.name} is not installed): {_install_line()}")
        return 2
    from toolpair.gateway import proxy

    log = logging.getLogger("toolpair")
    log.disabled = False  # main() silences it for the file commands; here it is the report
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    settings = proxy.Settings(
        upstream=args.upstream,
        mode=args.mode,
        provider=args.provider,
        host=args.host,
        port=args.port,
        timeout=args.timeout,
        connect_timeout=args.connect_timeout,
        read_timeout=args.read_timeout,
        max_body=args.max_body,
        max_buffered=args.max_buffered,
        max_connections=args.max_connections,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        keepalive_timeout=args.keepalive_timeout,
        workers=args.workers,
        http2=args.http2,
        record_dir=args.record,
        record_per_hour=args.record_per_hour,
        metrics=args.metrics,
        metrics_path=args.metrics_path,
    )
    if args.record_per_hour < 0:
        err("--record-per-hour must be 0 or more")
        return 2
    try:
        proxy.serve(settings)
    except ValueError as e:
        err(str(e))
        return 2
    except ImportError as e:  # h2 for --http2
        err(f"toolpair proxy: {e.name} is not installed: pip install {e.name}")
        return 2
    except OSError as e:
        err(f"cannot listen on {args.host}:{args.port}: {e}")
        return 2
    except KeyboardInterrupt:
        pass
    return 0
