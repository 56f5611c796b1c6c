"""Hypothesis runs derandomized by default, so a run of the suite is reproducible (CI
cannot fail on an example no one can replay); `tox -e fuzz` explores at random."""

from __future__ import annotations

import os

from hypothesis import settings

# pytester serves the core tests; declared here, the top level, so the whole tree collects.
pytest_plugins = ["pytester"]

settings.register_profile("reproducible", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("TOOLPAIR_HYPOTHESIS", "reproducible"))
