"""The one registry of framework integrations: what each is called, where it lives, and
the oldest framework release it supports.

A table of module-name strings, so the layers below the integrations (the command line,
the testing kit) can list them without importing any framework, and the import layers
stay as they are: a module here is imported only when its framework is wanted. The
``requires`` column is the one home of each minimum version: the extras in
``pyproject.toml`` and the ``-oldest`` tox envs' pins are checked against it by a test,
and an integration's `Integration` spec reads it from here. Adding a framework is one
package under ``toolpair.integrations`` plus one line here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INTEGRATIONS", "Framework"]


@dataclass(frozen=True, slots=True)
class Framework:
    """One framework integration."""

    #: The package under ``toolpair.integrations`` (also the id of the fixture param and
    #: the event ``source`` of its repairs).
    name: str
    #: The pip extra, the tox env and the command line's ``--format`` name.
    extra: str
    #: The distribution and the oldest release supported, as a requirement
    #: (``"agno>=2.3.8"``).
    requires: str
    #: The module has ``load_dump`` / ``dump_messages``: the command line reads its dumps.
    dumps: bool = False
    #: The module has ``poisoned_history()`` for ``poisoned_framework_history``.
    poisoned: bool = False

    @property
    def module(self) -> str:
        return f"toolpair.integrations.{self.name}"

    @property
    def minimum(self) -> tuple[str, str]:
        """``(distribution, oldest version)`` of `requires`."""
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)", self.requires)
        if m is None:  # pragma: no cover - the table below is the only input
            raise ValueError(f"not a minimum requirement: {self.requires!r}")
        return m.group(1), m.group(2)


INTEGRATIONS: dict[str, Framework] = {
    f.name: f
    for f in (
        Framework(
            "pydantic_ai", "pydantic-ai", "pydantic-ai-slim>=1.107", dumps=True, poisoned=True
        ),
        Framework("langchain", "langchain", "langchain-core>=0.3.48", dumps=True, poisoned=True),
        Framework("agno", "agno", "agno>=2.3.8", poisoned=True),
        Framework("llamaindex", "llamaindex", "llama-index-core>=0.14.5", poisoned=True),
        Framework("langgraph", "langgraph", "langgraph>=0.3.24"),
        Framework(
            "openai_agents", "openai-agents", "openai-agents>=0.2.8", dumps=True, poisoned=True
        ),
        Framework("google_adk", "google-adk", "google-adk>=1.7.0"),
        Framework("strands", "strands", "strands-agents>=1.0.0"),
    )
}
