from __future__ import annotations

import pytest
from lc_wire import Wire


@pytest.fixture
def wire() -> Wire:
    return Wire()
