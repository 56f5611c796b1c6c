"""End-to-end runs of the installed ``toolpair`` console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolpair import validate
from toolpair.cli import main
from toolpair.demo import DEMOS, load_demo
from toolpair.formats import CODECS, LIST_KEYS


def _script() -> list[str]:
    here = Path(sys.executable).parent / ("toolpair.exe" if os.name == "nt" else "toolpair")
    if here.exists():
        return [str(here)]
    found = shutil.which("toolpair")
    return [found] if found else [sys.executable, "-m", "toolpair"]


SCRIPT = _script()


def run(
    *args: str | Path, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SCRIPT, *map(str, args)],
        input=stdin.decode("utf-8") if stdin is not None else None,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=120,
    )


def demo_file(tmp_path: Path, name: str, indent: Any = 2) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(load_demo(name), indent=indent, ensure_ascii=False) + "\n", "utf-8")
    return path


def messages_of(body: Any, fmt: str) -> list[Any]:
    return body[LIST_KEYS.get(fmt, "messages")] if isinstance(body, dict) else body


# -- demo --------------------------------------------------------------------------------


def test_demo_runs_every_provider_and_ends_clean() -> None:
    r = run("demo")
    assert r.returncode == 0, r.stderr
    for name in DEMOS:
        assert f"== {name}:" in r.stdout
        assert f"re-check: valid for {name}" in r.stdout
    assert "violation(s) left" not in r.stdout


def test_python_dash_m_works_and_demo_takes_a_provider() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "toolpair", "demo", "gemini"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "== gemini:" in r.stdout and "== anthropic:" not in r.stdout
    assert "Please ensure that the number of function response parts" in r.stdout


def test_demo_unknown_provider_is_a_usage_error() -> None:
    assert run("demo", "nope").returncode == 2


# -- check -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", DEMOS)
def test_check_reports_in_the_provider_wording_and_exits_1(tmp_path: Path, fmt: str) -> None:
    path = demo_file(tmp_path, fmt)
    r = run("check", path, "--provider", fmt, "--format", fmt)
    assert r.returncode == 1, r.stderr
    expected = validate(load_demo(fmt), fmt, format=fmt)
    assert expected
    for v in expected:
        assert v.message in r.stdout
        assert f"[{v.code}]" in r.stdout
    n = len(expected)
    assert f"{path}: {n} violation{'s' if n > 1 else ''} ({fmt} format, {fmt} rules)" in r.stdout


@pytest.mark.parametrize("fmt", DEMOS)
def test_check_names_the_provider_implied_by_the_format(tmp_path: Path, fmt: str) -> None:
    r = run("check", demo_file(tmp_path, fmt))
    assert r.returncode == 1
    assert f"({fmt} format, {fmt} rules, implied by the format)" in r.stdout


def test_a_mistral_message_list_without_a_provider_reads_as_openai_chat(tmp_path: Path) -> None:
    # The two chat dialects cannot be told apart from the messages alone (a request
    # body names its model, which tells).
    path = tmp_path / "list.json"
    path.write_text(json.dumps(load_demo("mistral")["messages"]), "utf-8")
    r = run("check", path)
    assert r.returncode == 1
    assert "(openai format, openai rules, implied by the format)" in r.stdout
    r = run("check", path, "--provider", "mistral")
    assert "(mistral format, mistral rules)" in r.stdout
    assert "[mistral." in r.stdout


def test_check_a_message_list_and_a_valid_file(tmp_path: Path) -> None:
    body = load_demo("anthropic")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(body["messages"]), "utf-8")
    assert run("check", listed).returncode == 1
    fixed = tmp_path / "fixed.json"
    assert run("repair", listed, "-o", fixed).returncode == 0
    r = run("check", fixed)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{fixed}: valid (anthropic format" in r.stdout


def test_check_json_output(tmp_path: Path) -> None:
    a, b = demo_file(tmp_path, "anthropic"), demo_file(tmp_path, "gemini")
    r = run("check", a, b, "--json")
    assert r.returncode == 1
    items = json.loads(r.stdout)
    assert isinstance(items, list) and items
    for item in items:
        assert {"code", "message", "index", "ids", "path"} <= set(item)
        assert isinstance(item["ids"], list) and isinstance(item["index"], int)
    assert {i["file"] for i in items} == {str(a), str(b)}
    assert {i["provider"] for i in items} == {"anthropic", "gemini"}
    first = next(i for i in items if i["provider"] == "anthropic")
    v = validate(load_demo("anthropic"), "anthropic")[0]
    assert (first["code"], first["message"], first["index"], first["path"]) == (
        v.code,
        v.message,
        v.index,
        v.path,
    )
    assert first["ids"] == list(v.ids)


def test_check_json_is_an_empty_array_when_valid(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), "utf-8")
    r = run("check", "--json", path)
    assert r.returncode == 0
    assert json.loads(r.stdout) == []


def test_check_reads_stdin() -> None:
    data = json.dumps(load_demo("openai-responses")).encode()
    r = run("check", "-", stdin=data)
    assert r.returncode == 1
    assert "<stdin>: 1 violation (openai-responses format" in r.stdout


def test_exit_2_wins_over_1_and_other_files_are_still_checked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", "utf-8")
    good = demo_file(tmp_path, "bedrock")
    r = run("check", bad, good)
    assert r.returncode == 2
    assert "bedrock format" in r.stdout
    assert str(bad) in r.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{\n  "messages": [\n    {"role": "user",\n  ]\n}\n', ":4:"),
        ("", "empty file"),
        ("   \n\n", "empty file"),
        ("this is not JSON\n", "not valid JSON"),
        ('{"model": "x"}', "no 'messages', 'input' or 'contents'"),
        ("42", "must be a list or a request body"),
        ('[{"role": "user", "content": 5}]', "message 0"),
    ],
    ids=["malformed", "empty", "blank", "not-json", "no-messages", "scalar", "bad-message"],
)
def test_unreadable_files_exit_2_naming_the_file(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(content, "utf-8")
    r = run("check", path)
    assert r.returncode == 2
    assert str(path) in r.stderr and expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = run("repair", path, "--in-place")
    assert r.returncode == 2
    assert path.read_text("utf-8") == content
    assert not list(tmp_path.glob("t.json.bak*"))


def test_missing_file_and_non_utf8(tmp_path: Path) -> None:
    r = run("check", tmp_path / "nope.json")
    assert r.returncode == 2 and "nope.json" in r.stderr
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    r = run("check", latin)
    assert r.returncode == 2 and "not UTF-8" in r.stderr


def test_a_malformed_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "a"}\n\n{"role": oops}\n', "utf-8")
    r = run("check", path)
    assert r.returncode == 2
    assert f"{path}:3: not valid JSON" in r.stderr


# -- repair ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", DEMOS)
def test_repair_writes_a_valid_history_in_the_same_format(tmp_path: Path, fmt: str) -> None:
    src = demo_file(tmp_path, fmt)
    out = tmp_path / "out.json"
    r = run("repair", src, "--provider", fmt, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "synthetic_result" in r.stderr
    assert r.stdout == ""
    repaired = json.loads(out.read_text("utf-8"))
    original = load_demo(fmt)
    assert set(repaired) == set(original)
    assert {k: v for k, v in repaired.items() if k != LIST_KEYS.get(fmt, "messages")} == {
        k: v for k, v in original.items() if k != LIST_KEYS.get(fmt, "messages")
    }
    assert validate(repaired, fmt, format=fmt) == []
    r = run("check", out, "--provider", fmt)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("indent", [None, 2, 4, "\t"], ids=["compact", "2", "4", "tab"])
def test_repair_keeps_the_indentation_style(tmp_path: Path, indent: Any) -> None:
    src = tmp_path / "a.json"
    body = load_demo("anthropic")
    src.write_text(json.dumps(body, indent=indent, ensure_ascii=False), "utf-8")
    out = tmp_path / "b.json"
    assert run("repair", src, "-o", out).returncode == 0
    text = out.read_text("utf-8")
    repaired = json.loads(text)
    assert text == json.dumps(repaired, indent=indent, ensure_ascii=False)
    assert "°C" in text  # non-ASCII stays as it was written


def test_repair_keeps_minified_separators_and_escapes(tmp_path: Path) -> None:
    src = tmp_path / "a.json"
    src.write_text(json.dumps(load_demo("openai"), separators=(",", ":")) + "\n", "utf-8")
    out = tmp_path / "b.json"
    assert run("repair", src, "-o", out).returncode == 0
    text = out.read_text("utf-8")
    assert text == json.dumps(json.loads(text), separators=(",", ":")) + "\n"
    assert "\\u00b0C" in text


def test_repair_keeps_crlf_and_bom(tmp_path: Path) -> None:
    src = tmp_path / "a.json"
    text = json.dumps(load_demo("gemini"), indent=2).replace("\n", "\r\n") + "\r\n"
    src.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert run("repair", src, "--in-place").returncode == 0
    data = src.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == data.count(b"\n")
    assert validate(json.loads(data[3:]), "gemini") == []


def test_repair_in_place_keeps_a_backup_and_writes_atomically(tmp_path: Path) -> None:
    src = demo_file(tmp_path, "bedrock")
    original = src.read_bytes()
    src.chmod(0o640)
    r = run("repair", src, "--in-place")
    assert r.returncode == 0, r.stderr
    backup = tmp_path / "bedrock.json.bak"
    assert backup.read_bytes() == original
    assert "original kept as" in r.stderr and str(backup) in r.stderr
    assert validate(json.loads(src.read_text("utf-8")), "bedrock") == []
    assert src.stat().st_mode & 0o777 == 0o640
    # no temp file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bedrock.json", "bedrock.json.bak"]
    # a second run has nothing to do: nothing written, no second backup
    before = src.stat()
    r = run("repair", src, "--in-place")
    assert r.returncode == 0
    assert "nothing to repair" in r.stderr
    after = src.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bedrock.json", "bedrock.json.bak"]


def test_an_existing_backup_is_never_overwritten(tmp_path: Path) -> None:
    src = demo_file(tmp_path, "openai")
    (tmp_path / "openai.json.bak").write_text("older", "utf-8")
    assert run("repair", src, "-i").returncode == 0
    assert (tmp_path / "openai.json.bak").read_text("utf-8") == "older"
    assert json.loads((tmp_path / "openai.json.bak.1").read_text("utf-8")) == load_demo("openai")


def test_nothing_written_when_nothing_changed(tmp_path: Path) -> None:
    src = tmp_path / "ok.json"
    src.write_text(json.dumps([{"role": "user", "content": "hi"}]), "utf-8")
    out = tmp_path / "out.json"
    r = run("repair", src, "-o", out)
    assert r.returncode == 0
    assert not out.exists()
    assert "not written" in r.stderr
    # to stdout, the input comes back unchanged so that a pipe still gets a transcript
    r = run("repair", src)
    assert r.stdout == src.read_text("utf-8")


def test_repair_stdin_to_stdout() -> None:
    data = json.dumps(load_demo("anthropic"), indent=2).encode()
    r = run("repair", "-", stdin=data)
    assert r.returncode == 0, r.stderr
    assert validate(json.loads(r.stdout), "anthropic") == []
    assert "results_first" in r.stderr
    assert run("repair", "-", "--in-place", stdin=data).returncode == 2


def test_repair_and_in_place_are_exclusive(tmp_path: Path) -> None:
    src = demo_file(tmp_path, "openai")
    assert run("repair", src, "-o", tmp_path / "x.json", "--in-place").returncode == 2


# -- JSONL -------------------------------------------------------------------------------


def _jsonl(path: Path, items: Sequence[Any]) -> None:
    path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in items), "utf-8")


@pytest.mark.parametrize("fmt", ["anthropic", "bedrock", "openai", "openai-responses", "gemini"])
def test_jsonl_one_message_per_line(tmp_path: Path, fmt: str) -> None:
    messages = messages_of(load_demo(fmt), fmt)
    path = tmp_path / "t.jsonl"
    _jsonl(path, messages)
    r = run("check", path, "--json")
    assert r.returncode == 1
    items = json.loads(r.stdout)
    assert all(i["line"] == i["index"] + 1 for i in items)
    r = run("check", path)
    assert f"{path}:{items[0]['line']}: [{items[0]['code']}]" in r.stdout
    r = run("repair", path, "--in-place")
    assert r.returncode == 0, r.stderr
    lines = path.read_text("utf-8").splitlines()
    repaired = [json.loads(line) for line in lines]
    assert validate(repaired, fmt, format=fmt) == []
    # lines repair did not touch are byte-identical
    original = (tmp_path / "t.jsonl.bak").read_text("utf-8").splitlines()
    assert original[0] == lines[0]
    assert lines[-1] == original[-1]


def test_jsonl_one_request_per_line(tmp_path: Path) -> None:
    ok = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    path = tmp_path / "requests.jsonl"
    _jsonl(path, [ok, load_demo("openai"), ok, load_demo("anthropic")])
    r = run("check", path)
    assert r.returncode == 1
    assert f"{path}:2: [openai.missing_result]" in r.stdout
    assert f"{path}:4: [anthropic.missing_result]" in r.stdout
    assert "in 4 histories" in r.stdout
    r = run("repair", path, "-o", tmp_path / "out.jsonl")
    assert r.returncode == 0, r.stderr
    out = (tmp_path / "out.jsonl").read_text("utf-8").splitlines()
    before = path.read_text("utf-8").splitlines()
    assert len(out) == 4
    assert out[0] == before[0] and out[2] == before[2]
    assert validate(json.loads(out[1]), "openai") == []
    assert validate(json.loads(out[3]), "anthropic") == []


def test_huge_jsonl_is_streamed_once(tmp_path: Path) -> None:
    """~24 MB, one message per line, one broken pair in the middle: checked and repaired
    with memory within a small multiple of the file size."""
    pad = "lorem ipsum " * 800
    path = tmp_path / "huge.jsonl"
    n = 0
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"role": "system", "content": "sys"}) + "\n")
        for i in range(800):
            msgs: list[dict[str, Any]] = [
                {"role": "user", "content": f"q{i} {pad}"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": f"call_{i}", "content": f"r{i} {pad}"},
                {"role": "assistant", "content": f"a{i} {pad}"},
            ]
            if i == 300:
                del msgs[2]  # the call at line 1 + 300 * 4 + 2 has no result
            for m in msgs:
                f.write(json.dumps(m) + "\n")
                n += 1
    size = path.stat().st_size
    assert size > 20_000_000

    probe = (
        "import resource, subprocess, sys;"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr);"
        "sys.exit(p.returncode)"
    )
    if sys.platform == "win32":  # pragma: no cover
        pytest.skip("ru_maxrss is POSIX only")
    r = subprocess.run(
        [sys.executable, "-c", probe, *SCRIPT, "check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert f"{path}:{1 + 300 * 4 + 2}: [openai.missing_result]" in r.stdout
    assert "1 violation (openai format" in r.stdout
    maxrss_kb = int(r.stderr.strip().splitlines()[-1])
    assert maxrss_kb * 1024 < 3 * size + 100_000_000, maxrss_kb

    out = tmp_path / "out.jsonl"
    r = subprocess.run(
        [sys.executable, "-c", probe, *SCRIPT, "repair", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    maxrss_kb = int(r.stderr.strip().splitlines()[-1])
    assert maxrss_kb * 1024 < 5 * size + 100_000_000, maxrss_kb
    before = path.read_text("utf-8").splitlines()
    after = out.read_text("utf-8").splitlines()
    assert len(before) == n + 1 and len(after) == n + 2
    k = next(i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y)
    assert k == 1 + 300 * 4 + 2  # the synthetic result, right after its call
    assert after[:k] == before[:k] and after[k + 1 :] == before[k:]
    assert json.loads(after[k])["tool_call_id"] == "call_300"


# -- framework dumps ---------------------------------------------------------------------


def test_a_framework_dump_without_the_framework_is_a_clear_error(tmp_path: Path) -> None:
    if _importable("pydantic_ai"):
        pytest.skip("pydantic-ai is installed here")
    path = tmp_path / "pai.json"
    path.write_text(
        json.dumps([{"parts": [{"part_kind": "user-prompt", "content": "hi"}], "kind": "request"}]),
        "utf-8",
    )
    r = run("check", path)
    assert r.returncode == 2
    assert "pydantic-ai dump" in r.stderr and 'pip install ".[pydantic-ai]"' in r.stderr


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@pytest.fixture
def fake_langchain(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in integration exposing the CLI's hook: ``{"type": ..., "data": ...}``
    records wrapping OpenAI chat messages, read with the OpenAI codec."""
    mod = types.ModuleType("toolpair.integrations.langchain")

    def load_dump(obj: Any) -> Any:
        if not all(isinstance(m, dict) and m.get("type") == "chat" for m in obj):
            return None
        return [m["data"] for m in obj], CODECS["openai"]

    def dump_messages(messages: Sequence[Any]) -> Any:
        return [{"type": "chat", "data": m} for m in messages]

    mod.load_dump = load_dump  # type: ignore[attr-defined]
    mod.dump_messages = dump_messages  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toolpair.integrations.langchain", mod)
    return mod


def test_framework_dumps_go_through_the_integration_hook(
    tmp_path: Path, fake_langchain: types.ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = [{"type": "chat", "data": m} for m in load_demo("openai")["messages"]]
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(dump, indent=2), "utf-8")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "(langchain format, portable rules, implied by the format)" in out
    assert main(["check", str(path), "--provider", "openai", "--json"]) == 1
    items = json.loads(capsys.readouterr().out)
    assert {i["format"] for i in items} == {"langchain"}
    assert main(["repair", str(path), "--provider", "openai", "--in-place"]) == 0
    capsys.readouterr()
    repaired = json.loads(path.read_text("utf-8"))
    assert all(set(m) == {"type", "data"} for m in repaired)
    assert validate([m["data"] for m in repaired], "openai") == []
    assert main(["check", str(path), "--provider", "openai"]) == 0


def test_proxy_without_its_extra_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The core installs no HTTP server: `toolpair proxy` says what to install.
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["proxy", "--upstream", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "needs the proxy extra" in err and "[proxy]" in err and "pip install" in err


def test_proxy_limit_flags_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["proxy", "--upstream", "http://127.0.0.1:9", "--max-body", "lots"])
    assert e.value.code == 2
    assert "not a size: 'lots'" in capsys.readouterr().err


# -- issue 37: every line says what happened ---------------------------------------------


def _main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("content", [None, "", "  \n"], ids=["missing", "empty", "blank"])
def test_check_json_of_an_unreadable_file_is_not_an_empty_array(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    path = tmp_path / "t.json"
    if content is not None:
        path.write_text(content, "utf-8")
    code, out, err = _main(capsys, "check", path, "--json")
    assert code == 2
    items = json.loads(out)
    # `[]` means "no violations" and nothing else: the file that was not read is an item
    assert items == [{"file": str(path), "error": items[0]["error"]}]
    assert items[0]["error"] in err and str(path) in err
    # the files that were read are still reported beside it
    code, out, _ = _main(capsys, "check", path, demo_file(tmp_path, "openai"), "--json")
    assert code == 2
    items = json.loads(out)
    assert "error" in items[0] and all("code" in i for i in items[1:]) and len(items) > 1


def test_check_of_a_directory_points_at_scan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _main(capsys, "check", tmp_path)
    assert code == 2 and out == ""
    assert f"{tmp_path}: is a directory" in err and "toolpair scan DIR" in err


@pytest.mark.parametrize("where", ["missing-folder", "directory"])
def test_map_html_to_a_place_it_cannot_write_is_a_clear_error(tmp_path: Path, where: str) -> None:
    target = tmp_path / "nope" / "x.html" if where == "missing-folder" else tmp_path
    r = run("map", demo_file(tmp_path, "anthropic"), "--html", target)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(f"toolpair: {target}: "), r.stderr
    expected = "No such file or directory" if where == "missing-folder" else "is a directory"
    assert expected in r.stderr


def test_an_unknown_model_is_named_and_a_known_one_echoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = demo_file(tmp_path, "anthropic")
    code, out, err = _main(capsys, "check", path, "--model", "totally-made-up")
    assert code == 1
    assert err.count("warning: --model totally-made-up") == 1
    assert "the strictest anthropic rules apply" in err
    assert "for model" not in out
    code, out, err = _main(capsys, "check", path, "--model", "claude-sonnet-4-6")
    assert code == 1 and err == ""
    assert "anthropic rules for model claude-sonnet-4-6" in out
    code, _, err = _main(capsys, "repair", path, "--model", "gpt-4o", "-o", tmp_path / "o.json")
    assert code == 0 and "--model gpt-4o is not a model toolpair knows for anthropic" in err
    code, _, err = _main(capsys, "map", path, "--model", "gpt-4o")
    assert code == 1 and "--model gpt-4o" in err


def test_rules_for_a_model_of_another_provider_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _main(capsys, "rules", "anthropic", "--model", "gpt-4o")
    assert code == 0
    head = out.splitlines()[0]
    assert head.startswith("anthropic (--model gpt-4o ignored, not one of its models")
    assert not head.endswith(": -")
    assert "--model gpt-4o is not a model toolpair knows for anthropic" in err
    code, out, err = _main(capsys, "rules", "bedrock", "--model", "us.anthropic.claude-sonnet-4-6")
    assert err == "" and out.startswith("bedrock, model us.anthropic.claude-sonnet-4-6: ")


def test_rule_a8_shows_the_pattern_as_the_api_writes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = _main(capsys, "rules", "anthropic")
    assert "'^[a-zA-Z0-9_-]{1,64}$'" in out and "{{" not in out


def test_portable_findings_are_one_line_each_with_their_providers(
    tmp_path: Path, fake_langchain: types.ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = [{"type": "chat", "data": m} for m in load_demo("openai")["messages"]]
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(dump), "utf-8")
    code, out, _ = _main(capsys, "check", path)
    assert code == 1
    lines = out.splitlines()[:-1]
    assert len(lines) == len(set(lines)), "a finding printed twice"
    assert all(": refused by " in line for line in lines)
    # one line names every provider that refuses the same call ids at the same message
    assert any(
        "refused by anthropic, openai, deepseek, moonshot, zhipu [missing_result]" in ln
        for ln in lines
    )
    assert f"violations across providers, {len(lines)} findings (langchain format" in out
    _, out, _ = _main(capsys, "check", path, "--json")
    items = json.loads(out)
    assert len(items) > len(lines)  # the JSON keeps each provider's own item
    assert {i["code"].split(".")[0] for i in items} >= {"anthropic", "bedrock", "gemini"}


def test_repair_thread_says_where_a_thread_is_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _main(capsys, "repair", tmp_path / "cp.sqlite", "--thread", "42")
    assert code == 2 and out == ""
    assert "repair_thread(graph, config, model)" in err
    assert f"toolpair check {tmp_path / 'cp.sqlite'} --thread 42" in err


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    src = demo_file(tmp_path, "anthropic")
    out, page = tmp_path / "out.json", tmp_path / "map.html"
    mask = os.umask(0o022)
    try:
        assert run("repair", src, "-o", out).returncode == 0
        assert run("map", src, "--html", page).returncode == 1
    finally:
        os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o644
    assert page.stat().st_mode & 0o777 == 0o644
    src.chmod(0o660)
    assert run("repair", src, "--in-place").returncode == 0
    assert src.stat().st_mode & 0o777 == 0o660


def test_wording_plurals_articles_and_one_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import toolpair

    r = run("demo", "anthropic")
    assert "1 violation, as anthropic" in r.stdout and "2 fixes" in r.stdout
    assert "(s)" not in r.stdout and "(es)" not in r.stdout
    assert "messages.1: [anthropic.missing_result] `tool_use` ids" in r.stdout
    assert "messages.1: [anthropic.missing_result] messages.1:" not in r.stdout
    r = run("map", demo_file(tmp_path, "anthropic"), "--html", tmp_path / "m.html")
    assert "<h2>1 break</h2>" in (tmp_path / "m.html").read_text("utf-8")
    with caplog.at_level(logging.WARNING, logger="toolpair"):
        toolpair.repair(load_demo("anthropic"), "anthropic")
    assert "toolpair repaired a history (anthropic format) for anthropic" in caplog.text
    from tests.support.mutations import claude_code as cc_mutations

    folder = tmp_path / "projects" / "-home-u-p"
    folder.mkdir(parents=True)
    session = folder / "3f0c2d4e-1111-4222-8333-444455556666.jsonl"
    session.write_bytes(cc_mutations.m_delete_result())
    code, out, _ = _main(capsys, "scan", tmp_path / "projects")
    assert code == 1 and ": 1 session (" in out
    code, _, err = _main(capsys, "repair", session, "--in-place")
    assert code == 0
    assert "may still be open; if it is, quit Claude Code" in err
    assert "run this again" not in err and "from a shell" not in err
    assert "check it again before you resume" in err
