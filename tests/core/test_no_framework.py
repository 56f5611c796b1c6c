"""The core is stdlib-only: importing it pulls in no framework, and the core tox env
has none installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

FRAMEWORKS = ("langchain_core", "pydantic_ai", "agno", "llama_index", "anthropic", "openai")


def test_core_imports_no_framework() -> None:
    code = (
        "import sys, toolpair, toolpair.formats, toolpair.providers; "
        f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_framework_installed_in_this_env() -> None:
    installed = [m for m in FRAMEWORKS if importlib.util.find_spec(m) is not None]
    assert installed == []
