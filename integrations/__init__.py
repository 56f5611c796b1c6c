"""Framework integrations: one subpackage per framework, each an optional extra.

`Integration` is the spec each one declares and `Guard` the per-request step they all
share (detect, repair, report once, never fail the request); a new framework subclasses
`Integration` and calls a `Guard` from its hook."""

from toolpair.integrations._base import Guard as Guard
from toolpair.integrations._base import Integration as Integration
from toolpair.integrations._base import Target as Target

__all__ = ["Guard", "Integration", "Target"]
