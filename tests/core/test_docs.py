"""Every python code block in README.md and docs/*.md compiles, its imports resolve, and
it runs, so the documentation cannot drift from the code.

The blocks of one file run in order in one namespace (a block may use what an earlier
one defined). A block that cannot run offline (it needs an API key, a live model, or
names the reader supplies) is marked with an HTML comment on the line before its fence,
``<!-- not run: the reason -->``; it is still compiled and its imports still run. A
block importing a package this environment does not have is compiled only; the framework
envs run this file too, where their guide's imports resolve. Any new file under docs/ is
picked up.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->\s*$")


@dataclass
class Block:
    line: int
    code: str
    not_run: str | None


def blocks(text: str) -> list[Block]:
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.search(before)
        line = text.count("\n", 0, m.start()) + 2
        found.append(Block(line, m.group(1), marker.group(1) if marker else None))
    return found


def imported(tree: ast.AST) -> list[str]:
    """Every module the block imports, with ``from a import b`` giving ``a`` and
    ``a.b`` (b may be a submodule)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    return names


def missing(modules: list[str]) -> list[str]:
    """The packages among ``modules``' imports that this environment does not have."""
    out = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # not just a name that is no submodule
                out.append(e.name or name)
    return out


WITH_CODE = [f for f in FILES if blocks(f.read_text())]


def test_the_readme_and_the_guides_have_python_blocks() -> None:
    assert ROOT / "README.md" in WITH_CODE
    assert len(WITH_CODE) > len(FILES) // 2


@pytest.mark.parametrize("path", WITH_CODE, ids=[str(f.relative_to(ROOT)) for f in WITH_CODE])
def test_every_python_block_runs(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = blocks(path.read_text())
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    ran, skipped = 0, []
    for b in found:
        where = f"{path.name}:{b.line}"
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST
        tree = compile(b.code, where, "exec", flags=flags)
        absent = sorted(set(missing(imported(tree))))
        if absent:
            skipped.append(f"{where} needs {', '.join(absent)}")
            continue
        imports = ast.Module(
            body=[n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)],
            type_ignores=[],
        )
        try:
            exec(compile(imports, where, "exec"), namespace)
        except ModuleNotFoundError as e:  # a name that imports its package on first use
            skipped.append(f"{where} needs {e.name}")
            continue
        except ImportError as e:  # a name an older release of the package does not have
            skipped.append(f"{where} needs a newer {e.name}: {e}")
            continue
        if b.not_run is None:
            try:
                exec(compile(tree, where, "exec"), namespace)
            except Exception as e:
                raise AssertionError(f"the block at {where} failed: {e!r}") from e
            ran += 1
    if not ran and skipped:
        pytest.skip("; ".join(skipped))


ROW = re.compile(r"^\s*\|")
SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def broken_tables(text: str) -> list[int]:
    """Line numbers of table rows cut off from their table: a row after a blank line (or
    other text) that does not start a new table, which Markdown renders as plain text."""
    lines = text.split("\n")
    out = []
    in_fence = False
    for n, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence or not ROW.match(line):
            continue
        if n > 0 and ROW.match(lines[n - 1]):
            continue  # inside a table
        starts_table = n + 1 < len(lines) and SEPARATOR.match(lines[n + 1])
        if not starts_table:
            out.append(n + 1)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_table_is_in_one_piece(path: Path) -> None:
    assert broken_tables(path.read_text()) == [], f"{path.name}: rows cut off from a table"


def test_a_blank_line_inside_a_table_is_caught() -> None:
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n"
    assert broken_tables(text) == [5]
    assert broken_tables(text.replace("\n\n", "\n")) == []
