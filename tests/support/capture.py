"""What a mock transport received."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Capture:
    """Every request body a mock transport received, in order."""

    bodies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any]:
        assert self.bodies, "no request reached the transport"
        return self.bodies[-1]
