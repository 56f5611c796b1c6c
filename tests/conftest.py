"""Hypothesis runs derandomized by default, so a run of the suite is reproducible (CI
cannot fail on an example no one can replay); `tox -e fuzz` explores at random. And the
fixtures every part of the tree uses."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

import toolpair
from tests.support.upstream import Upstream

# pytester serves the core tests; declared here, the top level, so the whole tree collects.
pytest_plugins = ["pytester"]

settings.register_profile("reproducible", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("TOOLPAIR_HYPOTHESIS", "reproducible"))


@pytest.fixture
def subscribed() -> Iterator[list[toolpair.RepairEvent]]:
    """The repair events published while a test runs (`toolpair.subscribe`)."""
    got: list[toolpair.RepairEvent] = []
    toolpair.subscribe(got.append)
    yield got
    toolpair.unsubscribe(got.append)


@pytest.fixture(scope="module")
def up() -> Iterator[Upstream]:
    """The fake provider upstream (`tests.support.upstream`), one per test module."""
    u = Upstream()
    yield u
    u.close()
