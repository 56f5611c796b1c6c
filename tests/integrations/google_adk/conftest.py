from __future__ import annotations

import pytest
from google.adk.sessions import DatabaseSessionService, InMemorySessionService

from .harness import ADK


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


# check_session and repair_session through the in-memory and the SQLite-backed services.
@pytest.fixture(params=["memory", "sqlite"])
async def service(request, tmp_path):
    if request.param == "memory":
        yield InMemorySessionService()
        return
    driver = "sqlite+aiosqlite" if ADK >= (1, 19) else "sqlite"
    svc = DatabaseSessionService(f"{driver}:///{tmp_path / 'sessions.db'}")
    yield svc
    close = getattr(svc, "close", None)
    if close is not None and ADK >= (1, 19):
        await close()
