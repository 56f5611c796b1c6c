"""Repair on the wire, for programs that never import toolpair.

`wire` judges and repairs one HTTP request body by the rules of the API its path
belongs to (what the LiteLLM guardrail and the ASGI middleware call); `proxy` is
``toolpair proxy``, a reverse proxy that does so for every request it forwards.
"""
