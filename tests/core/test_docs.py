"""Every python code block in README.md and docs/*.md compiles, its imports resolve, and
it runs, so the documentation cannot drift from the code.

The blocks of one file run in order in one namespace (a block may use what an earlier
one defined). HTML comments on the lines right before a block's fence (invisible on
GitHub) say how it runs:

- ``<!-- env: NAME -->``: the tox env the block belongs to. A guide's blocks belong to the
  env of the extra its first install line names (``pip install ".[langchain]"`` in
  docs/langchain.md: ``langchain``); a block that imports only toolpair belongs to
  ``core``. In its own env a block must run: an import that does not resolve there fails
  the test instead of skipping the block. In every other env it is compiled and its
  imports are tried (outside tox it runs wherever its imports resolve).
- ``<!-- given: CODE -->``: what the reader already has (a model, a history), run before
  the block; offline, with the framework's own test model or a model object that is
  never called (the test sets dummy API keys; nothing leaves the machine).
- ``<!-- not run: the reason -->``: a block that cannot run offline (it calls a model or
  patches a framework for the whole process); it is still compiled and its imports still
  run.

Install lines are checked too: each names an extra pyproject.toml defines, from a checkout
(toolpair is not on PyPI), and in a guide's env the packages the line installs are the
ones that env has. Any new file under docs/ is picked up.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
ANY_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
#: The HTML comments right before a fence: ``<!-- key: value -->`` (value may span lines).
COMMENTS = re.compile(r"(?:<!--\s*[a-z ]+:(?:(?!-->).)*-->[ \t]*\n)+\Z", re.S)
ONE_COMMENT = re.compile(r"<!--\s*([a-z ]+):\s*((?:(?!-->).)*?)\s*-->", re.S)
#: The tox env each extra's guide runs in, where it is not the extra's own name.
EXTRA_ENV = {"litellm-proxy": "litellm", "asgi": "proxy", "all": "core"}
#: Model ids the providers have retired: no example may name them.
RETIRED = {"claude-sonnet-4-5": "2026-11-30", "claude-sonnet-4-0": "2026-06-15"}
#: The tox env this test runs in (tox sets it), or None outside tox.
ENV = os.environ.get("TOX_ENV_NAME")


@dataclass
class Block:
    line: int
    code: str
    not_run: str | None
    env: str | None = None
    given: str = ""


def blocks(text: str, default_env: str | None = None) -> list[Block]:
    found = []
    for m in FENCE.finditer(text):
        head = text[: m.start()]
        marks: dict[str, str] = {}
        comments = COMMENTS.search(head)
        if comments:
            marks = {k.strip(): v for k, v in ONE_COMMENT.findall(comments.group(0))}
        line = text.count("\n", 0, m.start()) + 2
        found.append(
            Block(
                line,
                m.group(1),
                marks.get("not run"),
                marks.get("env", default_env),
                marks.get("given", ""),
            )
        )
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


# -- install lines -----------------------------------------------------------------------

INSTALL = re.compile(r"pip install ([^\n`|#]+)")


def install_lines(text: str) -> list[list[str]]:
    """The arguments of every ``pip install`` in ``text`` (code blocks and inline code)."""
    out = []
    for m in INSTALL.finditer(text):
        try:
            words = shlex.split(m.group(1).split("&&")[0])
        except ValueError:
            continue
        out.append([w for w in words if not w.startswith("-")])
    return out


def extras() -> dict[str, list[str]]:
    """pyproject.toml's extras (read as text: tomllib is not in Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    table = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^([a-z][a-z0-9-]*) = \[(.*?)\]$", table, re.S | re.M):
        body = re.sub(r"#[^\n]*", "", m.group(2))
        out[m.group(1)] = re.findall(r'"([^"]+)"', body)
    return out


def toolpair_extras(words: list[str]) -> list[str] | None:
    """The extras an install line takes from this checkout (``.`` or ``.[a,b]``), or None
    when it installs no toolpair."""
    for w in words:
        m = re.fullmatch(r"\.(?:\[([a-z0-9,-]+)\])?", w)
        if m:
            return m.group(1).split(",") if m.group(1) else []
    return None


def guide_env(text: str, path: Path | None = None) -> str | None:
    """The env of a guide under docs/: that of the extra its first install line names."""
    if path is not None and path.parent.name != "docs":
        return None
    for words in install_lines(text):
        names = toolpair_extras(words)
        if names:
            return EXTRA_ENV.get(names[0], names[0])
    return None


def test_every_install_line_names_an_extra_of_this_checkout() -> None:
    known = extras()
    seen = 0
    for path in FILES:
        for words in install_lines(path.read_text()):
            where = f"{path.name}: pip install {' '.join(words)}"
            assert not any(re.match(r"toolpair(\[|$)", w) for w in words), (
                f"{where}: toolpair is not on PyPI; install it from a checkout: .[extra]"
            )
            names = toolpair_extras(words)
            if names is None:
                continue
            seen += 1
            for name in names:
                assert name in known, f"{where}: no extra {name!r} in pyproject.toml"
    assert seen >= 10


def test_the_cli_hints_install_from_a_checkout() -> None:
    for path in (ROOT / "core" / "cli").glob("*.py"):
        text = path.read_text()
        assert "toolpair[" not in text, f"{path.name} names a PyPI install"


def _satisfied(requirement: str, where: str) -> None:
    """Whether this environment holds ``requirement`` (and its extras' dependencies)."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    if req.marker is not None and not req.marker.evaluate():
        return
    if req.name == "toolpair":  # an extra naming others: each of those
        known = extras()
        for extra in req.extras:
            for sub in known[extra]:
                _satisfied(sub, where)
        return
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        raise AssertionError(f"{where}: {req.name} is not installed in this env") from None
    assert req.specifier.contains(version, prereleases=True), (
        f"{where}: {req.name} {version} here, the line asks {req.specifier}"
    )
    for extra in req.extras:
        for dep in metadata.requires(req.name) or []:
            sub = Requirement(dep)
            marker = sub.marker
            if marker is not None and marker.evaluate({"extra": extra}):
                if marker.evaluate({"extra": ""}):
                    continue  # not the extra's own: a base dependency
                sub.marker = None
                _satisfied(str(sub), f"{where} ({req.name}[{extra}])")


GUIDES = [f for f in FILES if f.parent.name == "docs" and guide_env(f.read_text(), f)]


@pytest.mark.parametrize("path", GUIDES, ids=lambda p: p.name)
def test_the_guide_install_line_is_what_its_env_installs(path: Path) -> None:
    text = path.read_text()
    env = guide_env(text)
    if env != ENV:
        pytest.skip(f"checked in the {env} env")
    words = next(w for w in install_lines(text) if toolpair_extras(w))
    for name in toolpair_extras(words) or []:
        for requirement in extras()[name]:
            _satisfied(requirement, f"{path.name}: extra {name}")
    for word in words:
        if toolpair_extras([word]) is None:
            _satisfied(word, f"{path.name}: {word}")


def test_no_example_names_a_retired_model() -> None:
    for path in FILES:
        for m in ANY_FENCE.finditer(path.read_text()):
            for model, when in RETIRED.items():
                assert not re.search(rf"{re.escape(model)}(?![-\d])", m.group(1)), (
                    f"{path.name}: {model} was retired on {when}"
                )


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"&& (python3 -m tox[^\n]*)\n", readme)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == command.group(1)


def test_every_documented_command_line_parses() -> None:
    """Each ``toolpair ...`` line in a shell block names a real command and real options
    (``<placeholders>`` stand for a file; a synopsis with ``[...]`` is left out)."""
    from toolpair.cli import _parser

    parser = _parser()
    checked = 0
    for path in FILES:
        for m in ANY_FENCE.finditer(path.read_text()):
            for line in m.group(1).splitlines():
                if not line.startswith("toolpair "):
                    continue
                line = re.sub(r"<[^>]*>", "FILE", line.split(" #", 1)[0])
                words = shlex.split(line)[1:]
                if any("[" in w or "|" in w for w in words):
                    continue
                try:
                    parser.parse_args(words)
                except SystemExit:
                    raise AssertionError(f"{path.name}: `{line.strip()}` does not parse") from None
                checked += 1
    assert checked >= 20


YAML = re.compile(r"^```yaml[^\n]*\n(.*?)^```", re.S | re.M)


def test_every_litellm_config_loads_its_guardrail() -> None:
    """The LiteLLM config blocks parse, and each guardrail they name is a class LiteLLM
    can import (in the litellm env, which has LiteLLM's YAML loader)."""
    yaml = pytest.importorskip("yaml")
    found = 0
    for path in FILES:
        for m in YAML.finditer(path.read_text()):
            config = yaml.safe_load(m.group(1))
            for entry in config.get("guardrails", []):
                dotted = entry["litellm_params"]["guardrail"]
                found += 1
                if ENV != "litellm":
                    continue
                module, _, name = dotted.rpartition(".")
                assert isinstance(getattr(importlib.import_module(module), name), type), dotted
    assert found >= 2


# -- code blocks -------------------------------------------------------------------------

WITH_CODE = [f for f in FILES if blocks(f.read_text())]

#: Dummy keys, so that a block may build a provider's model object; nothing is sent.
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-docs-test",
    "OPENAI_API_KEY": "sk-docs-test",
    "GOOGLE_API_KEY": "docs-test",
    "GEMINI_API_KEY": "docs-test",
    "AWS_ACCESS_KEY_ID": "docs-test",
    "AWS_SECRET_ACCESS_KEY": "docs-test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def test_the_readme_and_the_guides_have_python_blocks() -> None:
    assert ROOT / "README.md" in WITH_CODE
    assert len(WITH_CODE) > len(FILES) // 2


def test_every_block_says_where_it_runs() -> None:
    """A block of a framework (its imports reach beyond toolpair) names its env, itself
    or through its guide's install line."""
    for path in WITH_CODE:
        text = path.read_text()
        for b in blocks(text, guide_env(text, path)):
            tree = ast.parse(b.code + "\n" + b.given)
            mods = {m.split(".")[0] for m in imported(tree)} - {"toolpair"}
            mods -= set(sys.stdlib_module_names)
            if mods:
                assert b.env, f"{path.name}:{b.line} imports {sorted(mods)} but names no env"


@pytest.mark.parametrize("path", WITH_CODE, ids=[str(f.relative_to(ROOT)) for f in WITH_CODE])
def test_every_python_block_runs(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = path.read_text()
    found = blocks(text, guide_env(text, path))
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    ran, skipped = 0, []
    for b in found:
        where = f"{path.name}:{b.line}"
        mine = ENV is not None and (b.env or "core") == ENV
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST
        tree = compile(b.code, where, "exec", flags=flags)
        given = compile(b.given, f"{where} (given)", "exec", flags=flags)
        absent = sorted(set(missing(imported(tree) + imported(given))))
        if absent:
            assert not mine, f"{where} runs in {ENV}, which lacks {', '.join(absent)}"
            skipped.append(f"{where} needs {', '.join(absent)}")
            continue
        imports = ast.Module(
            body=[n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)],
            type_ignores=[],
        )
        try:
            exec(compile(imports, where, "exec"), namespace)
        except ImportError as e:  # a name an older release (or none) of the package has
            assert not mine, f"{where} runs in {ENV}, which cannot import it: {e!r}"
            skipped.append(f"{where} needs {e.name}: {e}")
            continue
        # A framework's block runs in its own env (outside tox: wherever it imports);
        # elsewhere its imports are enough, since another release may differ.
        runs = b.env in (None, "core", ENV) or ENV is None
        if b.not_run is None and runs:
            try:
                _run(given, namespace)
                _run(tree, namespace)
            except Exception as e:
                raise AssertionError(f"the block at {where} failed: {e!r}") from e
            ran += 1
    if not ran and skipped:
        pytest.skip("; ".join(skipped))


def _run(tree: ast.Module, namespace: dict[str, object]) -> None:
    """Run a block's code; one with a top-level ``await`` runs in an event loop."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = compile(tree, "<block>", "exec", flags=flags)
    if code.co_flags & 0x80:  # CO_COROUTINE: it awaits at the top level
        import asyncio

        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


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


def test_the_markers_are_read() -> None:
    text = (
        'pip install ".[langchain]"\n\n'
        "<!-- env: agno -->\n<!-- given:\nx = 1\n-->\n```python\nprint(x)\n```\n\n"
        "<!-- not run: calls a model -->\n```python\nmodel.invoke('hi')\n```\n\n"
        "```python\nimport toolpair\n```\n"
    )
    found = blocks(text, guide_env(text))
    assert [(b.env, b.given.strip(), b.not_run) for b in found] == [
        ("agno", "x = 1", None),
        ("langchain", "", "calls a model"),
        ("langchain", "", None),
    ]
