"""The tests are laid out like the code: one package tree, collectable in one pytest
session in any env (the folders of frameworks not installed are left out, and say so)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: Folders of data and scripts, not test code.
NOT_PACKAGES = {"data", "regressions", "recorded", "__pycache__"}


def test_every_folder_of_test_code_is_a_package() -> None:
    folders = {
        p.parent
        for p in TESTS.rglob("*.py")
        if not NOT_PACKAGES.intersection(p.relative_to(TESTS).parts)
    }
    assert TESTS in folders
    assert sorted(str(f) for f in folders if not (f / "__init__.py").exists()) == []


def test_the_whole_tree_collects_in_one_session() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for trouble in ("ERROR", "import file mismatch"):
        assert trouble not in run.stdout, run.stdout[-3000:]
    assert " tests collected" in run.stdout
    # This very test is among them: the core is always collected.
    assert "tests/core/test_layout.py::test_the_whole_tree_collects_in_one_session" in run.stdout
