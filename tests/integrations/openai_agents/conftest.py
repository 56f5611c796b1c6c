from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # Coroutine tests run on anyio's pytest plugin (openai depends on anyio).
    return "asyncio"
