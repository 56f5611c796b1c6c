from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .graphs import saver


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """Each thread test runs on InMemorySaver and on the SQLite saver (a file)."""
    with saver(request.param, tmp_path) as s:
        yield s
