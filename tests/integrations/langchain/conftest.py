from __future__ import annotations

import pytest

from .wire import Wire


@pytest.fixture
def wire() -> Wire:
    return Wire()
