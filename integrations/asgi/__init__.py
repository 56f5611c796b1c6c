"""toolpair for any ASGI server: a pure ASGI middleware that repairs (or rejects) the
history of every chat completions, messages, responses and Gemini generateContent (and
token-counting) request before the app sees it, and never touches the response.

    vllm serve MODEL --middleware toolpair.integrations.asgi.ToolpairMiddleware

    app.add_middleware(ToolpairMiddleware)            # Starlette, FastAPI

Configured from the environment, since vLLM adds middleware with no arguments:

- ``TOOLPAIR_MODE``: ``repair`` (default), ``reject`` (a 400 in the API's own error
  envelope; the app is not called) or ``observe`` (log only).
- ``TOOLPAIR_PROVIDER``: the rules to judge by (``portable``, ``deepseek``...); by
  default those of the hosted API whose wire format the path carries.
- ``TOOLPAIR_MAX_BODY`` (bytes, default 64 MiB), ``TOOLPAIR_MAX_BUFFERED`` (bytes held
  by all bodies being judged at once, default 512 MiB), ``TOOLPAIR_BODY_TIMEOUT``
  (seconds per part of a body, default 60).
- ``TOOLPAIR_METRICS``: ``1`` (or a path) serves Prometheus metrics at
  ``/toolpair/metrics`` (or that path), answered here and never passed to the app.

Keyword arguments (``mode``, ``provider``, ``max_body``, ``max_buffered``,
``body_timeout``, ``metrics``, ``source``, ``host``), where a server passes them, win
over the environment. It needs nothing beyond the core; it is the same middleware
``toolpair proxy`` runs.
"""

from __future__ import annotations

from toolpair.gateway.asgi import ToolpairMiddleware

__all__ = ["ToolpairMiddleware"]
