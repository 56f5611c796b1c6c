"""ToolpairMiddleware configured from the environment (``TOOLPAIR_RECORD_DIR``), in a
vLLM-like app served by a real uvicorn process: the disagreements between the app's
answer and toolpair's verdict are recorded as anonymised cases, and the answer reaches
the client unchanged."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

import toolpair
from toolpair.corpus import judge_all, read_cases

from .test_asgi_server import BROKEN, Served

VALID: list[dict[str, Any]] = [
    {"role": "user", "content": "weather in Lisbon?"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {}}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "rain"}],
    },
]


def _cases(folder: Path, count: int) -> list[tuple[Path, dict[str, Any]]]:
    deadline = time.monotonic() + 10
    while len(files := sorted(folder.rglob("*.json"))) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return [(f, json.loads(f.read_text())) for f in files]


def test_the_middleware_records_from_the_environment(tmp_path: Path) -> None:
    served = Served(
        TOOLPAIR_MODE="observe", TOOLPAIR_RECORD_DIR=str(tmp_path), TOOLPAIR_RECORD_PER_HOUR="5"
    )
    try:
        valid = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": VALID})
        broken = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": BROKEN})
        # Refused although valid: a case, and the client gets the app's own bytes.
        status, data = served.post("/refuse/v1/messages", valid.encode(), authorization="k")
        assert status == 400
        assert json.loads(gzip.decompress(data))["error"]["message"] == "messages.1: refused here"
        # Broken, observed, and taken (this app checks no pairing): a case.
        status, _ = served.post("/v1/messages", broken.encode())
        assert status == 200
        # Valid and taken; broken and refused: agreements, nothing recorded.
        assert served.post("/v1/messages", valid.encode())[0] == 200
        assert served.post("/refuse/v1/messages", broken.encode())[0] == 400
        cases = _cases(tmp_path, 2)
        time.sleep(0.3)
        assert len(list(tmp_path.rglob("*.json"))) == 2
    finally:
        served.stop()
    by = {c["disagreement"]: (p, c) for p, c in cases}
    path, refused = by["refused"]
    assert refused["status"] == 400 and refused["source"]["via"] == "asgi"
    # The gzip-encoded error is read in the provider's words.
    assert refused["error"] == "messages.1: refused here"
    assert "Lisbon" not in path.read_text() and "rain" not in path.read_text()
    assert toolpair.validate(refused["body"], "anthropic") == []
    _, accepted = by["accepted"]
    assert accepted["status"] == 200 and "error" not in accepted
    assert toolpair.validate(accepted["body"], "anthropic") != []
    verdicts = judge_all(read_cases(tmp_path))
    assert sorted(v.agrees for v in verdicts) == [False, False]


def test_a_long_error_reaches_the_client_whole_and_the_case_keeps_a_bounded_part(
    tmp_path: Path,
) -> None:
    served = Served(TOOLPAIR_RECORD_DIR=str(tmp_path))
    try:
        valid = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": VALID})
        status, data = served.post("/long/v1/messages", valid.encode())
        [(_, case)] = _cases(tmp_path, 1)
    finally:
        served.stop()
    assert status == 422
    assert len(json.loads(data)["error"]["message"]) == 200 * 1024  # not cut for the client
    assert case["status"] == 422 and case["disagreement"] == "refused"
    assert 0 < len(case["error"]) <= 4000
