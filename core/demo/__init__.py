"""The poisoned demo histories shipped in the package: one request body per wire format,
each with an unanswered call and a result behind a text block. ``toolpair demo`` and the
testing kit's ``poisoned_*`` fixtures read them from here."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: The demo transcripts shipped in the package, in the order `toolpair demo` shows them.
DEMOS = ("anthropic", "bedrock", "openai", "openai-responses", "gemini", "mistral")


def load_demo(name: str) -> Any:
    """The poisoned demo transcript for ``name`` (a provider and wire format)."""
    if name not in DEMOS:
        raise ValueError(f"no demo for {name!r}; known: {', '.join(DEMOS)}")
    text = resources.files(__name__).joinpath(f"{name}.json").read_text("utf-8")
    return json.loads(text)
