from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # Coroutine tests run on anyio's pytest plugin (google-genai depends on anyio).
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    # ADK 2.x prefers App(plugins=...); Runner(plugins=...) is what 1.7 has.
    config.addinivalue_line(
        "filterwarnings", "ignore:The `plugins` argument is deprecated:DeprecationWarning"
    )
    # Event compaction is marked experimental in ADK 2.x; the compaction tests use it on purpose.
    config.addinivalue_line("filterwarnings", r"ignore:\[EXPERIMENTAL\]:UserWarning")
