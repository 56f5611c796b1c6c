"""Repair on the wire, for programs that never import toolpair.

`wire` judges and repairs one HTTP request body by the rules of the API its path
belongs to (what the LiteLLM guardrail and the ASGI middleware call); `asgi` is the
middleware (standard library only); `proxy` is ``toolpair proxy``, that middleware in
front of a forwarding app, served by `server` (uvicorn and httpx, the ``proxy`` extra,
imported only when the proxy runs).
"""
