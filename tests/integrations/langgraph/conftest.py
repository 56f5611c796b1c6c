from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The LangGraph adapter builds on the LangChain one (LangGraph's messages are LangChain's).
sys.path.insert(0, str(Path(__file__).parent.parent / "langchain"))
from lg_graphs import saver


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """Each thread test runs on InMemorySaver and on the SQLite saver (a file)."""
    with saver(request.param, tmp_path) as s:
        yield s
