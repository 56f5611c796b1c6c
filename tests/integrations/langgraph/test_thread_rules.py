"""Which rules a thread is written with, and a thread that is not there.

- A thread id with no checkpoint raises `LookupError` (as ADK's and Strands' session
  helpers do), sync and async, check and repair: "nothing wrong" would hide a typo.
- A chat model toolpair does not recognise (the fake chat model, ChatOllama) must not
  lead `repair_thread` to write the "portable" repair (Mistral-shaped call ids, bridge
  turns) into the checkpoint: the thread is held to LangGraph's own pairing rules, with
  a warning asking for ``provider=``.
- ``init_chat_model`` strings (``"anthropic:claude-sonnet-4-6"``), as LangGraph takes a
  model, name the provider's rules and the model id.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from toolpair.integrations.langgraph import (
    acheck_thread,
    arepair_thread,
    check_thread,
    model_id,
    repair_thread,
    rules_for,
)

from . import graphs as g


def _stuck(llm: Any, checkpointer: Any = None) -> tuple[Any, dict[str, Any]]:
    """A react agent thread whose call lost its result to new input: every run fails."""
    graph = g.react_agent(llm, g.Ledger().tools(), checkpointer or InMemorySaver(), version="v2")
    config = g.cfg()
    graph.invoke({"messages": [HumanMessage("deploy, and the weather?")]}, config)
    with pytest.raises(ValueError, match=g.INVALID_CHAT_HISTORY):
        graph.invoke({"messages": [HumanMessage("never mind, just answer")]}, config)
    return graph, config


def _scripted() -> Any:
    return g.model(
        g.ai_calls(g.call("call_approve_1", "approve", action="deploy"), g.call("call_w_2")), "ok"
    )


# -- no checkpoint ------------------------------------------------------------------


def test_a_thread_with_no_checkpoint_is_a_lookup_error() -> None:
    graph, _ = _stuck(_scripted())
    for fn in (check_thread, repair_thread):
        with pytest.raises(LookupError, match="'nobody' has no checkpoint"):
            fn(graph, g.cfg("nobody"))
    with pytest.raises(LookupError, match="no checkpoint"):
        repair_thread(graph, g.cfg("nobody"), dry_run=True)

    async def both() -> None:
        for afn in (acheck_thread, arepair_thread):
            with pytest.raises(LookupError, match="'nobody' has no checkpoint"):
                await afn(graph, g.cfg("nobody"))

    asyncio.run(both())
    # The thread that exists is read as before.
    assert check_thread(graph, g.cfg())


# -- a model toolpair does not recognise ----------------------------------------------


def _unplaced_models() -> list[Any]:
    found: list[Any] = [_scripted()]
    try:
        from langchain_ollama import ChatOllama
    except ImportError:  # the oldest env installs no langchain-ollama
        return found
    return [*found, ChatOllama(model="llama3.1", base_url="http://127.0.0.1:9")]


@pytest.mark.parametrize("which", range(2))
def test_an_unplaced_model_writes_only_the_pairing_every_api_needs(
    which: int, caplog: pytest.LogCaptureFixture
) -> None:
    models = _unplaced_models()
    if which >= len(models):
        pytest.skip("langchain-ollama is not installed here")
    llm = _scripted()
    graph, config = _stuck(llm)
    named = models[which] if which else llm
    stored = g.messages_of(graph, config)
    ids = [c["id"] for m in stored if isinstance(m, AIMessage) for c in m.tool_calls]

    with caplog.at_level(logging.WARNING, logger="toolpair"):
        report = repair_thread(graph, config, named)

    assert "cannot tell which API" in caplog.text and type(named).__name__ in caplog.text
    assert report.changed and report.provider == "openai"
    after = g.messages_of(graph, config)
    # The call ids are the thread's own (no 9-character Mistral ids), no bridge turn
    # went in: the stored messages plus one error result for each unanswered call.
    assert [c["id"] for m in after if isinstance(m, AIMessage) for c in m.tool_calls] == ids
    assert [m.type for m in after] == ["human", "ai", "tool", "tool", "human"]
    assert {m.tool_call_id for m in after if isinstance(m, ToolMessage)} == set(ids)
    assert not any(f.kind.startswith("bridge") or "id" in f.kind for f in report.fixes)
    # The thread runs, and a finished thread is no violation (the portable rules called
    # every finished thread "mistral.bad_last_role").
    graph.invoke(None, config)
    assert g.messages_of(graph, config)[-1].type == "ai"
    assert check_thread(graph, config, named) == []
    assert not repair_thread(graph, config, named).changed


# -- init_chat_model strings ---------------------------------------------------------


def test_init_chat_model_strings_name_the_provider_and_the_model() -> None:
    assert rules_for("anthropic:claude-sonnet-4-6") == "anthropic"
    assert model_id("anthropic:claude-sonnet-4-6") == "claude-sonnet-4-6"
    assert rules_for("google_vertexai:gemini-2.5-pro") == "vertex"
    assert rules_for("google_genai:gemini-2.5-flash") == "gemini"
    assert rules_for("bedrock_converse:us.anthropic.claude-sonnet-4-6") == "bedrock"
    assert rules_for("mistralai:mistral-large-latest") == "mistral"
    assert rules_for("openai:gpt-5") == "openai"
    # A provider toolpair has no rules for is unplaced, as its chat model class is.
    assert rules_for("ollama:llama3.1") == "portable"
    with pytest.raises(ValueError, match="'provider:model' string"):
        rules_for("claude-sonnet-4-6")

    graph, config = _stuck(_scripted())
    codes = {v.code for v in check_thread(graph, config, "anthropic:claude-sonnet-4-6")}
    assert codes == {"anthropic.missing_result"}
    report = repair_thread(graph, config, "anthropic:claude-sonnet-4-6", dry_run=True)
    assert (report.provider, report.model) == ("anthropic", "claude-sonnet-4-6")
    report = repair_thread(graph, config, "anthropic:claude-sonnet-4-6")
    assert report.changed
    assert check_thread(graph, config, "anthropic:claude-sonnet-4-6") == []


def test_an_unplaced_model_string_is_held_to_the_pairing_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    graph, config = _stuck(_scripted())
    with caplog.at_level(logging.WARNING, logger="toolpair"):
        report = repair_thread(graph, config, "ollama:llama3.1")
    assert "'ollama:llama3.1'" in caplog.text
    assert report.provider == "openai" and report.changed
    assert check_thread(graph, config, "ollama:llama3.1") == []
