"""``toolpair check FILE --thread ID`` on a LangGraph SQLite checkpoint file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from toolpair.cli import main
from toolpair.integrations.langgraph import repair_thread

from .graphs import INVALID_CHAT_HISTORY, Ledger, ai_calls, call, cfg, model, react_agent


def test_check_a_stuck_thread_in_a_checkpoint_file(tmp_path: Any, capsys: Any) -> None:
    """The stuck thread is reported (exit 1) with the call that has no result; after
    repair_thread the same file checks valid (exit 0); other threads are untouched."""
    path = str(tmp_path / "checkpoints.sqlite")
    llm = model(ai_calls(call("a", "approve", action="deploy"), call("w")), "ok")
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = react_agent(llm, Ledger().tools(), SqliteSaver(conn), version="v2")
        graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, cfg("t1"))
        with pytest.raises(ValueError, match=INVALID_CHAT_HISTORY):
            graph.invoke({"messages": [HumanMessage("never mind")]}, cfg("t1"))
        conn.commit()

        assert main(["check", path, "--thread", "t1"]) == 1
        out = capsys.readouterr().out
        assert "openai.missing_result" in out and "a, w" in out
        assert main(["check", path, "--thread", "t1", "--json"]) == 1
        (item,) = json.loads(capsys.readouterr().out)
        assert item["ids"] == ["a", "w"] and item["thread"] == "t1"

        repair_thread(graph, cfg("t1"))
        conn.commit()
    assert main(["check", path, "--thread", "t1", "--provider", "anthropic"]) == 0
    assert "valid" in capsys.readouterr().out
    assert main(["check", path, "--thread", "nobody"]) == 2
    assert "has no checkpoint" in capsys.readouterr().err


def test_the_command_line_does_not_import_langgraph() -> None:
    """The CLI module loads LangGraph only when --thread is given."""
    code = "import sys, toolpair.cli; print('langgraph' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
