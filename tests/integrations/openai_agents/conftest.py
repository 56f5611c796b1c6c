from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def anyio_backend() -> str:
    # Coroutine tests run on anyio's pytest plugin (openai depends on anyio).
    return "asyncio"
