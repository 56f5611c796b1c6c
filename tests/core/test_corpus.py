"""toolpair.corpus: recording the disagreements between toolpair and a provider as
anonymised cases, and ``toolpair corpus check`` judging folders of them (the same
judging the recorded corpus test uses)."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

import toolpair
from tests.support.histories import DANGLING_CHAT, VALID_CHAT
from tests.support.recorded import CORPUS, figures, verdicts
from toolpair import corpus
from toolpair.corpus import Recorder

from .clirun import Capsys, run

SECRET = "s3cr3t-marker"

#: One body per wire format, every text, argument and output holding the marker.
ANTHROPIC: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": f"You are {SECRET} assistant",
    "metadata": {"user_id": f"{SECRET}-user"},
    "tools": [
        {
            "name": "lookup",
            "description": f"looks up {SECRET}",
            "input_schema": {
                "type": "object",
                "properties": {"q": {"type": "string", "description": f"the {SECRET}"}},
                "required": ["q"],
            },
        }
    ],
    "messages": [
        {"role": "user", "content": f"find {SECRET} please"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"think {SECRET}", "signature": f"sig{SECRET}"},
                {"type": "text", "text": f"on it {SECRET}"},
                {"type": "tool_use", "id": "toolu_01A", "name": "lookup", "input": {"q": SECRET}},
                {"type": "tool_use", "id": "toolu_01B", "name": "lookup", "input": {"n": 4242}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": f"{SECRET} found"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": [
                        {"type": "text", "text": f"also {SECRET}"},
                        {
                            "type": "image",
                            "source": {
                                "type": "url",
                                "url": f"https://files.example.com/{SECRET}.png?sig={SECRET}",
                            },
                        },
                    ],
                },
            ],
        },
    ],
}
OPENAI: dict[str, Any] = {
    "model": "gpt-4.1",
    "user": f"{SECRET}@example.com",
    "api_key": f"sk-{SECRET}",
    "messages": [
        {"role": "system", "content": f"system {SECRET}"},
        {"role": "user", "name": f"{SECRET}-person", "content": f"hi {SECRET}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"q": SECRET})},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": f"not json {SECRET}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"out {SECRET}"},
        {"role": "tool", "tool_call_id": "call_2", "content": f"out {SECRET}"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"see {SECRET}"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{SECRET}"}},
            ],
        },
    ],
}
RESPONSES: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": f"be {SECRET}",
    "input": [
        {"role": "user", "content": f"hi {SECRET}"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": f"enc{SECRET}"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": json.dumps({"q": SECRET, "deep": {"k": [SECRET, 7]}}),
        },
        {"type": "function_call_output", "call_id": "call_1", "output": f"{SECRET} result"},
    ],
}
GEMINI: dict[str, Any] = {
    "contents": [
        {"role": "user", "parts": [{"text": f"hi {SECRET}"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"id": "c1", "name": "lookup", "args": {"q": SECRET}},
                    "thoughtSignature": f"sig{SECRET}",
                },
                {
                    "functionCall": {"id": "c2", "name": "lookup", "args": {"q": SECRET}},
                    "thoughtSignature": "skip_thought_signature_validator",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": "c1", "name": "lookup", "response": {"r": SECRET}}},
                {"functionResponse": {"id": "c2", "name": "lookup", "response": {"r": SECRET}}},
            ],
        },
    ],
    "systemInstruction": {"parts": [{"text": f"sys {SECRET}"}]},
}
BEDROCK: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": [{"text": f"hi {SECRET}"}]},
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "lookup", "input": {"q": SECRET}}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"json": {"r": SECRET}}, {"text": SECRET}],
                        "status": "success",
                    }
                }
            ],
        },
    ],
    "system": [{"text": f"sys {SECRET}"}],
    "toolConfig": {
        "tools": [
            {
                "toolSpec": {
                    "name": "lookup",
                    "description": SECRET,
                    "inputSchema": {"json": {"type": "object", "description": SECRET}},
                }
            }
        ]
    },
}
BODIES = {
    "anthropic": ANTHROPIC,
    "openai": OPENAI,
    "openai-responses": RESPONSES,
    "gemini": GEMINI,
    "bedrock": BEDROCK,
}
ERROR = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": f"messages.1: bad block near 'find {SECRET} please' "
        f"(see https://docs.example.com/errors?key={SECRET})",
    },
}


def skeleton(value: Any) -> Any:
    """What pairing reads: roles, types, ids, names, order (every other value blanked)."""
    kept = {"role", "type", "id", "call_id", "tool_call_id", "tool_use_id", "toolUseId", "name"}
    if isinstance(value, dict):
        person = value.get("role") in ("user", "system", "developer", "assistant")
        return {
            k: (v if k in kept and isinstance(v, str) and not person else skeleton(v))
            for k, v in value.items()
            if k not in ("input", "args", "arguments", "response", "json")
        }
    if isinstance(value, list):
        return [skeleton(v) for v in value]
    return type(value).__name__


def written(path: Path | None) -> tuple[str, dict[str, Any]]:
    assert path is not None
    text = path.read_text(encoding="utf-8")
    return text, json.loads(text)


@pytest.mark.parametrize("provider", sorted(BODIES))
def test_no_text_argument_or_output_survives_and_the_skeleton_does(
    tmp_path: Path, provider: str
) -> None:
    body = BODIES[provider]
    rec = Recorder(tmp_path)
    path = rec.observe(
        body,
        provider=provider,
        host=f"https://user:sk-{SECRET}@api.example.com/v1/messages?key={SECRET}",
        valid=True,
        status=400,
        error=ERROR,
    )
    text, case = written(path)
    assert SECRET not in text
    assert "sk-" not in text
    assert skeleton(case["body"]) == skeleton(body)
    assert case["host"] == "api.example.com"
    assert case["status"] == 400 and case["provider"] == provider
    assert case["disagreement"] == "refused"
    assert case["source"]["kind"] == "deployment" and case["source"]["via"] == "library"
    # The error is the provider's verbatim text, with the body's texts and URL queries out.
    assert case["error"].startswith("messages.1: bad block near '")
    assert case["error"].endswith("(see https://docs.example.com/errors)")
    # toolpair reads the anonymised body as it reads the original.
    assert [v.code for v in toolpair.validate(case["body"], provider)] == [
        v.code for v in toolpair.validate(body, provider)
    ]


def test_what_is_kept_and_what_is_replaced(tmp_path: Path) -> None:
    _, case = written(
        Recorder(tmp_path).observe(ANTHROPIC, provider="anthropic", valid=True, status=400)
    )
    msgs = case["body"]["messages"]
    # Same length, neutral words; numbers in arguments zeroed; config numbers kept.
    assert msgs[0]["content"] == "lorem ipsum dolor sit ame"
    assert len(msgs[0]["content"]) == len(ANTHROPIC["messages"][0]["content"])
    assert msgs[1]["content"][3]["input"] == {"n": 0}
    assert case["body"]["max_tokens"] == 1024
    assert case["model"] == "claude-sonnet-4-5"
    # A signature is a digest (equal stays equal, present stays present).
    assert msgs[1]["content"][0]["signature"].startswith("redacted-")
    # A link keeps its scheme only; a schema keeps its keys, types and required names.
    image = msgs[2]["content"][1]["content"][1]["source"]
    assert image == {"type": "url", "url": "https://redacted.invalid/"}
    schema = case["body"]["tools"][0]["input_schema"]
    assert schema["properties"]["q"]["type"] == "string" and schema["required"] == ["q"]
    # The documented signature stand-in is kept: rules read it.
    _, g = written(Recorder(tmp_path).observe(GEMINI, provider="gemini", valid=True, status=400))
    parts = g["body"]["contents"][1]["parts"]
    assert parts[1]["thoughtSignature"] == "skip_thought_signature_validator"
    assert parts[0]["thoughtSignature"].startswith("redacted-")
    # An OpenAI participant's name is a person: replaced; a tool's name is kept.
    _, o = written(Recorder(tmp_path).observe(OPENAI, provider="openai", valid=True, status=422))
    assert o["body"]["messages"][1]["name"] != OPENAI["messages"][1]["name"]
    assert o["body"]["messages"][2]["tool_calls"][0]["function"]["name"] == "lookup"
    assert o["body"]["messages"][5]["content"][1]["image_url"]["url"] == (
        "data:image/png;base64,AAAA"
    )


def test_a_case_carries_no_header_and_no_field_beyond_the_format(tmp_path: Path) -> None:
    _, case = written(
        Recorder(tmp_path).observe(
            OPENAI, provider="openai", model="gpt-4.1", valid=True, status=400, error="bad"
        )
    )
    assert set(case) == {
        "source",
        "provider",
        "host",
        "model",
        "date",
        "status",
        "error",
        "disagreement",
        "body",
    }
    assert set(case["body"]) == set(OPENAI)  # the body's own fields, nothing added
    assert "headers" not in json.dumps(case).lower()


DANGLING: dict[str, Any] = {"model": "gpt-4.1", "messages": DANGLING_CHAT}
VALID: dict[str, Any] = {"model": "gpt-4.1", "messages": VALID_CHAT}


@pytest.mark.parametrize(
    ("valid", "status", "recorded"),
    [
        (True, 400, "refused"),
        (True, 422, "refused"),
        (False, 200, "accepted"),
        (False, 201, "accepted"),
        (True, 200, None),  # both say valid
        (False, 400, None),  # both say invalid
        (True, 401, None),  # auth says nothing about the body
        (True, 403, None),
        (True, 404, None),
        (True, 429, None),  # nor does a rate limit
        (True, 500, None),  # nor the server's own failure
        (True, 503, None),
        (False, 500, None),
    ],
)
def test_only_disagreements_are_recorded(
    tmp_path: Path, valid: bool, status: int, recorded: str | None
) -> None:
    body = VALID if valid else DANGLING
    path = Recorder(tmp_path).observe(
        body, provider="openai", valid=valid, status=status, error="nope"
    )
    if recorded is None:
        assert path is None
        assert not list(tmp_path.rglob("*"))
    else:
        _, case = written(path)
        assert case["disagreement"] == recorded
        assert path.parent == tmp_path / "openai"
        assert ("error" in case) == (recorded == "refused")


def test_the_hourly_cap_drops_with_one_warning_and_rolls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [1000.0]
    rec = Recorder(tmp_path, per_hour=2, clock=lambda: now[0])

    def observe(n: int) -> Path | None:
        body = {**VALID, "messages": [*VALID["messages"], {"role": "user", "content": "x" * n}]}
        return rec.observe(body, provider="openai", valid=True, status=400, error="e")

    with caplog.at_level(logging.WARNING, logger="toolpair.corpus"):
        assert observe(1) is not None
        now[0] += 600
        assert observe(2) is not None
        assert observe(3) is None
        assert observe(4) is None
        assert observe(1) is not None  # a case already written costs nothing
    assert rec.written == 2 and rec.dropped == 2
    warnings = [r for r in caplog.records if "cap" in r.getMessage()]
    assert len(warnings) == 1
    assert "2 per hour" in warnings[0].getMessage()
    # The first case leaves the rolling hour: one more fits, the next is dropped again,
    # and the warning comes back only an hour after the first.
    now[0] = 1000.0 + 3600
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolpair.corpus"):
        assert observe(5) is not None
        assert observe(6) is None
    assert rec.dropped == 3
    assert not [r for r in caplog.records if "cap" in r.getMessage()]
    now[0] += 700
    with caplog.at_level(logging.WARNING, logger="toolpair.corpus"):
        assert observe(7) is not None  # the 600 s case has left the hour
        assert observe(8) is None
    assert len([r for r in caplog.records if "cap" in r.getMessage()]) == 1
    assert len(list(tmp_path.rglob("*.json"))) == 4


def test_the_cap_holds_across_threads_and_every_file_is_whole(tmp_path: Path) -> None:
    rec = Recorder(tmp_path, per_hour=7)
    paths: list[Path | None] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        body = {**VALID, "messages": [*VALID["messages"], {"role": "user", "content": "y" * n}]}
        p = rec.observe(body, provider="openai", valid=True, status=400, error="e")
        with lock:
            paths.append(p)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 31)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    files = sorted(tmp_path.rglob("*"))
    cases = [f for f in files if f.is_file()]
    assert len(cases) == 7 == rec.written and rec.dropped == 23
    assert sum(p is not None for p in paths) == 7
    for f in cases:
        assert not f.name.startswith(".")  # no temporary file left behind
        json.loads(f.read_text())


def test_a_failure_to_write_never_reaches_the_caller_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the folder should be")
    rec = Recorder(blocker)
    with caplog.at_level(logging.WARNING, logger="toolpair.corpus"):
        assert rec.observe(VALID, provider="openai", valid=True, status=400) is None
        assert rec.observe(DANGLING, provider="openai", valid=False, status=200) is None
    failures = [r for r in caplog.records if "could not record" in r.getMessage()]
    assert len(failures) == 1
    # Odd answers are not errors of the caller either.
    rec2 = Recorder(tmp_path / "ok")
    assert rec2.observe([], provider="openai", valid=True, status=400) is None  # type: ignore[arg-type]
    p = rec2.observe(VALID, provider="../../etc", valid=True, status=400, error=object())
    assert p is not None and p.parent == tmp_path / "ok" / "etc"


def test_a_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A write interrupted before its rename leaves no case and no temporary file.
    rec = Recorder(tmp_path)

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(corpus.os, "replace", boom)
    assert rec.observe(VALID, provider="openai", valid=True, status=400) is None
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    monkeypatch.undo()
    path = rec.observe(VALID, provider="openai", valid=True, status=400)
    assert path is not None and json.loads(path.read_text())["status"] == 400


def test_observe_bytes_reads_the_raw_body(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    raw = json.dumps(DANGLING).encode()
    path = rec.observe_bytes(raw, provider="openai", valid=False, status=200, source="proxy")
    _, case = written(path)
    assert case["source"]["via"] == "proxy" and case["disagreement"] == "accepted"
    assert rec.observe_bytes(b"not json", provider="openai", valid=True, status=400) is None
    assert rec.observe_bytes(b"[1]", provider="openai", valid=True, status=400) is None


# -- corpus check ------------------------------------------------------------------------


def test_corpus_check_on_the_recorded_corpus_is_the_corpus_tests_table(
    capsys: Capsys,
) -> None:
    code, out, _err = run(capsys, "corpus", "check", CORPUS, "--json")
    got = json.loads(out)
    vs = verdicts()
    assert got["all"] == figures().as_dict()
    assert got["providers"] == {p: f.as_dict() for p, f in corpus.table(vs).items()}
    assert sum(f["cases"] for f in got["providers"].values()) == len(vs) >= 150
    wrong = sorted(v.name for v in vs if corpus.disagrees(v))
    assert sorted(d["case"] for d in got["disagreements"]) == wrong
    assert code == (1 if wrong else 0)
    # The table prints the same figures.
    code2, text, _ = run(capsys, "corpus", "check", CORPUS)
    f = figures()
    last = next(line for line in text.splitlines() if line.startswith("all "))
    assert f"{f.agree}/{f.decidable}" in last and f"{f.located}/{f.locatable}" in last
    assert code2 == code


def test_corpus_check_on_recorded_disagreements(tmp_path: Path, capsys: Capsys) -> None:
    rec = Recorder(tmp_path)
    anthropic_valid = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hello"}],
    }
    refused = rec.observe(
        anthropic_valid, provider="anthropic", valid=True, status=400, error=ERROR
    )
    accepted = rec.observe(DANGLING, provider="openai", valid=False, status=200)
    accepted2 = rec.observe(
        {**DANGLING, "model": "gpt-4o"}, provider="openai", valid=False, status=200
    )
    assert refused and accepted and accepted2
    code, out, _ = run(capsys, "corpus", "check", tmp_path, "--json")
    got = json.loads(out)
    assert code == 1
    a, o = got["providers"]["anthropic"], got["providers"]["openai"]
    assert (a["cases"], a["refused"], a["agree"], a["missed_refusals"]) == (1, 1, 0, 1)
    assert (o["cases"], o["accepted"], o["agree"], o["changed_accepted"]) == (2, 2, 0, 2)
    assert got["all"]["agreement"] == 0.0
    assert {d["case"] for d in got["disagreements"]} == {
        f"anthropic/{refused.name}",
        f"openai/{accepted.name}",
        f"openai/{accepted2.name}",
    }
    dangling = next(d for d in got["disagreements"] if d["provider"] == "openai")
    assert dangling["violations"] and dangling["violations"][0]["index"] == 1
    code, text, _ = run(capsys, "corpus", "check", tmp_path)
    assert "refused (400), but toolpair finds it valid" in text
    assert "accepted, but toolpair reports openai." in text


def test_corpus_check_exit_codes(tmp_path: Path, capsys: Capsys) -> None:
    # Every case agrees: 0 (a folder holding one agreeing case of the recorded corpus).
    agreeing = next(v for v in verdicts() if v.accepted and v.agrees and not v.changed)
    good = tmp_path / "good" / agreeing.name
    good.parent.mkdir(parents=True)
    good.write_text(json.dumps(agreeing.case))
    code, out, _ = run(capsys, "corpus", "check", tmp_path / "good")
    assert code == 0 and "100.0%" in out
    # A missing folder or a file that is not a case: 2, the others still judged.
    bad = tmp_path / "bad" / "openai" / "x.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"provider": "openai"}')
    code, out, err = run(capsys, "corpus", "check", tmp_path / "good", tmp_path / "bad")
    assert code == 2 and "not a case (no status, body)" in err and "100.0%" in out
    # ... also beside a readable case in the same folder.
    (tmp_path / "bad" / agreeing.name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "bad" / agreeing.name).write_text(json.dumps(agreeing.case))
    (tmp_path / "bad" / "openai" / "y.json").write_text("{not json")
    code, out, err = run(capsys, "corpus", "check", tmp_path / "bad")
    assert code == 2 and "100.0%" in out and "x.json" in err and "y.json" in err
    code, _, err = run(capsys, "corpus", "check", tmp_path / "nowhere")
    assert code == 2 and "not a directory" in err
    # An empty folder has nothing to disagree with: 0, and says so.
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "corpus", "check", tmp_path / "empty")
    assert code == 0 and "no cases" in err


def test_anonymising_a_recorded_body_keeps_toolpairs_verdict_on_it() -> None:
    # Every real body of the recorded corpus, anonymised as a deployment would record it,
    # is judged exactly as it was: same violations at the same messages, same fixes.
    differ = []
    for v in verdicts():
        if v.error:
            continue
        case = {**v.case, "body": corpus.anonymise(v.case["body"])}
        w = corpus.judge_all([(v.name, case)])[0]
        same = [(c, i) for c, i, _ in w.codes] == [(c, i) for c, i, _ in v.codes]
        if not same or w.changed != v.changed or w.agrees != v.agrees:
            differ.append((v.name, v.codes[:2], w.codes[:2]))
    assert not differ, f"{len(differ)} differ; first: {differ[:3]}"
