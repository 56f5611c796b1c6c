"""PairSafeConversationManager on a real Agent, beside Strands' own sliding window on the
same histories."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from strands import Agent
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.session.file_session_manager import FileSessionManager
from strands.types.exceptions import ContextWindowOverflowException

import toolpair
from toolpair.integrations.strands import PairSafeConversationManager

from . import harness as h

STRICT = ("bedrock", "anthropic", "gemini")


def tool_heavy(loops: int = 6) -> list[dict[str, Any]]:
    """One prompt, then a long tool loop: no user text turn to cut at (#1749, #2173)."""
    m = [h.user("go")]
    for i in range(loops):
        m += [h.calls(f"l{i}"), h.results(f"l{i}")]
    return [*m, h.said("done")]


def chatty(turns: int = 6) -> list[dict[str, Any]]:
    m: list[dict[str, Any]] = []
    for i in range(turns):
        m += [h.user(f"q{i}"), h.calls(f"t{i}"), h.results(f"t{i}"), h.said(f"a{i}")]
    return m


def managed(manager: Any, history: list[dict[str, Any]]) -> Agent:
    agent = Agent(
        model=h.bedrock_model(h.Capture()),
        messages=history,
        conversation_manager=manager,
        callback_handler=None,
    )
    manager.apply_management(agent)
    return agent


def plain(messages: list[Any]) -> list[Any]:
    return [{k: v for k, v in m.items() if k != "tracking_id"} for m in messages]


def verdicts(messages: list[Any]) -> dict[str, list[str]]:
    return {
        p: [v.code for v in toolpair.validate(plain(messages), p, format="bedrock")] for p in STRICT
    }


def test_strands_window_on_a_tool_loop_opens_badly_or_not_at_all() -> None:
    history = tool_heavy()
    agent = managed(SlidingWindowConversationManager(window_size=6), copy.deepcopy(history))
    if len(agent.messages) == len(history):
        # 1.0: no user text turn to start at, so nothing is trimmed at all.
        assert agent.conversation_manager.removed_message_count == 0
    else:
        # 1.62: it falls back to opening on the assistant's toolUse (#1749).
        assert agent.messages[0]["role"] == "assistant"
        found = verdicts(agent.messages)
        assert found["gemini"] == ["gemini.call_turn_position"]
        assert found["bedrock"] == ["bedrock.first_not_user"]


def test_pair_safe_window_trims_a_tool_loop_to_whole_units() -> None:
    history = tool_heavy()
    manager = PairSafeConversationManager(window_size=6)
    agent = managed(manager, copy.deepcopy(history))
    cut = manager.removed_message_count
    assert cut > 0 and len(history) - cut <= 6
    # Only a prefix went: the rest is the log from the cut on, behind an opening turn.
    assert plain(agent.messages[1:]) == history[cut:]
    assert agent.messages[0] == {"role": "user", "content": [{"text": "(conversation continues)"}]}
    assert verdicts(agent.messages) == {p: [] for p in STRICT}


def test_pair_safe_window_cuts_at_a_user_turn_when_there_is_one() -> None:
    history = chatty()
    manager = PairSafeConversationManager(window_size=10)
    agent = managed(manager, copy.deepcopy(history))
    assert plain(agent.messages) == history[manager.removed_message_count :]
    assert agent.messages[0]["role"] == "user" and "text" in agent.messages[0]["content"][0]
    assert verdicts(agent.messages) == {p: [] for p in STRICT}


@pytest.mark.parametrize("window", range(1, 14))
def test_no_window_size_splits_a_pair(window: int) -> None:
    history = chatty(3) + tool_heavy(3)
    manager = PairSafeConversationManager(window_size=window)
    agent = managed(manager, copy.deepcopy(history))
    cut = manager.removed_message_count
    log = plain(agent.messages)
    if manager.get_state()["opening_message"] is not None:
        log = log[1:]
    assert log == history[cut:]
    assert verdicts(agent.messages) == {p: [] for p in STRICT}
    assert cut == toolpair.safe_cut(history, cut, "tail", format="bedrock")


def test_overflow_without_a_cut_raises() -> None:
    manager = PairSafeConversationManager(window_size=40)
    agent = managed(manager, [h.user("only")])
    with pytest.raises(ContextWindowOverflowException):
        manager.reduce_context(agent, e=RuntimeError("too long"))


def test_opening_turn_survives_a_session_restore(tmp_path: Any) -> None:
    history = tool_heavy()
    sm = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    manager = PairSafeConversationManager(window_size=6)
    agent = Agent(
        model=h.bedrock_model(h.Capture()),
        messages=copy.deepcopy(history),
        conversation_manager=manager,
        session_manager=sm,
        callback_handler=None,
    )
    manager.apply_management(agent)
    sm.sync_agent(agent)
    again = Agent(
        model=h.bedrock_model(h.Capture()),
        conversation_manager=PairSafeConversationManager(window_size=6),
        session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
        callback_handler=None,
    )
    assert plain(again.messages) == plain(agent.messages)


def test_window_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window_size"):
        PairSafeConversationManager(window_size=0)
