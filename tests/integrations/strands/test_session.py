"""check_session / repair_session against a real FileSessionManager in a temporary
directory, beside what Strands' own restore makes of the same stored histories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from strands import Agent
from strands.session.file_session_manager import FileSessionManager

import toolpair
from toolpair.integrations.strands import check_session, repair_session, stored_messages

from . import harness as h

#: What Bedrock (strictest rules: no model named) rejects in each stored history:
#: (code, message index, ids).
STORED = {
    "dangling": ("bedrock.missing_result", 2, ("t1",)),
    "orphan": ("bedrock.too_many_results", 0, ("t0",)),
    "interrupted_loop": ("bedrock.missing_result", 2, ("t2",)),
}


def store(tmp: Path, name: str, history: list[Any]) -> None:
    sm = FileSessionManager(session_id=name, storage_dir=str(tmp))
    Agent(
        model=h.bedrock_model(h.Capture()),
        messages=history,
        session_manager=sm,
        callback_handler=None,
    )


def snapshot(tmp: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tmp)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(tmp.rglob("*"))
        if p.is_file()
    }


def plain(messages: list[Any]) -> list[Any]:
    return [{k: v for k, v in m.items() if k != "tracking_id"} for m in messages]


@pytest.mark.parametrize("case", sorted(h.BROKEN))
def test_check_session_names_the_break(tmp_path: Path, case: str) -> None:
    store(tmp_path, case, h.BROKEN[case]())
    sm = FileSessionManager(session_id=case, storage_dir=str(tmp_path))
    found = check_session(sm)
    code, index, ids = STORED[case]
    assert [(v.code, v.index, v.ids) for v in found][:1] == [(code, index, ids)]
    assert found[0].message


@pytest.mark.parametrize("case", sorted(h.BROKEN))
def test_repair_session_dry_run_repairs_and_writes_nothing(tmp_path: Path, case: str) -> None:
    store(tmp_path, case, h.BROKEN[case]())
    before = snapshot(tmp_path)
    sm = FileSessionManager(session_id=case, storage_dir=str(tmp_path))
    result = repair_session(sm, dry_run=True)
    assert result.fixes
    assert set(STORED[case][2]) <= {i for f in result.fixes for i in f.ids}
    assert toolpair.validate(result.messages, "bedrock", format="bedrock") == []
    assert snapshot(tmp_path) == before
    # Idempotent: the repaired history needs nothing more.
    assert toolpair.repair(result.messages, "bedrock", format="bedrock").fixes == []


@pytest.mark.parametrize("case", sorted(h.BROKEN))
def test_repair_session_writes_the_repair_through_the_session_manager(
    tmp_path: Path, case: str
) -> None:
    """The bricked session (#3651) is fixed in storage: a later restore, with no toolpair
    at all, hands the agent the repaired history and Bedrock gets a valid request; the
    records already there are updated or kept, never deleted; a second repair writes
    nothing."""
    store(tmp_path, case, h.BROKEN[case]())
    sm = FileSessionManager(session_id=case, storage_dir=str(tmp_path))
    result = repair_session(sm)
    assert result.fixes
    fresh = FileSessionManager(session_id=case, storage_dir=str(tmp_path))
    assert check_session(fresh) == []
    assert plain(stored_messages(fresh)) == plain(result.messages)

    capture = h.Capture()
    restored = Agent(
        model=h.bedrock_model(capture),
        session_manager=FileSessionManager(session_id=case, storage_dir=str(tmp_path)),
        callback_handler=None,
    )
    assert plain(restored.messages) == plain(result.messages)
    restored("go on")
    assert toolpair.validate(capture.last["messages"], "bedrock", format="bedrock") == []

    settled = snapshot(tmp_path)
    again = repair_session(FileSessionManager(session_id=case, storage_dir=str(tmp_path)))
    assert not again.changed and snapshot(tmp_path) == settled


def test_a_repair_that_only_adds_updates_in_place_and_appends(tmp_path: Path) -> None:
    """An interrupted call answered (for Bedrock: its result in a turn of its own, then
    a bridge before the user's text): the records from the first changed one on are
    updated, the rest appended; the records before it, the agent and its restore offset
    are untouched."""
    store(tmp_path, "d", h.dangling())
    before = snapshot(tmp_path)
    result = repair_session(FileSessionManager(session_id="d", storage_dir=str(tmp_path)))
    assert len(result.messages) == 6
    after = snapshot(tmp_path)
    changed = {k for k in after if before.get(k) != after[k]}
    where = "session_d/agents/agent_default/messages/message_{}.json"
    assert changed == {where.format(n) for n in (2, 3, 4, 5)}


def test_a_repair_that_drops_a_message_moves_the_restore_past_the_old_log(
    tmp_path: Path,
) -> None:
    """#3651's shape: more toolResult blocks than toolUse blocks (the interrupted turn's
    result stored twice). The duplicate goes, and with it a message; records cannot be
    deleted, so the repaired history is appended and the restore starts at it, the old
    records staying behind it."""
    bricked = [h.user("q"), h.calls("t1"), h.results("t1"), h.results("t1"), h.said("x")]
    store(tmp_path, "o", bricked)
    found = check_session(FileSessionManager(session_id="o", storage_dir=str(tmp_path)))
    assert "bedrock.too_many_results" in [v.code for v in found]
    result = repair_session(FileSessionManager(session_id="o", storage_dir=str(tmp_path)))
    assert len(result.messages) == len(bricked) - 1
    messages = sorted((tmp_path / "session_o/agents/agent_default/messages").iterdir())
    assert len(messages) == len(bricked) + len(result.messages)
    agent_file = tmp_path / "session_o/agents/agent_default/agent.json"
    state = json.loads(agent_file.read_text())["conversation_manager_state"]
    assert state["removed_message_count"] == len(bricked)
    fresh = FileSessionManager(session_id="o", storage_dir=str(tmp_path))
    assert check_session(fresh) == []
    assert plain(stored_messages(fresh)) == plain(result.messages)


def test_repair_session_refuses_a_live_agents_session_manager(tmp_path: Path) -> None:
    from toolpair.integrations.strands import SessionInUse

    store(tmp_path, "live", h.dangling())
    sm = FileSessionManager(session_id="live", storage_dir=str(tmp_path))
    Agent(model=h.bedrock_model(h.Capture()), session_manager=sm, callback_handler=None)
    before = snapshot(tmp_path)
    with pytest.raises(SessionInUse, match="nothing was written"):
        repair_session(sm)
    assert snapshot(tmp_path) == before
    assert repair_session(sm, dry_run=True).fixes


def test_valid_session_is_clean(tmp_path: Path) -> None:
    store(tmp_path, "ok", h.valid())
    sm = FileSessionManager(session_id="ok", storage_dir=str(tmp_path))
    assert check_session(sm) == []
    result = repair_session(sm)
    assert result.fixes == [] and plain(result.messages) == h.valid()


#: What Bedrock rejects in what Strands' own restore hands the agent, first violation.
#: 1.0 restores the stored log as it is; from the release with ``_fix_broken_tool_use``
#: the interrupted call is answered in a turn of its own before the user's text (two
#: user turns in a row), and an orphaned result is dropped without the history then
#: opening on a user turn.
THEIRS = {
    False: {"dangling": "bedrock.missing_result", "orphan": "bedrock.too_many_results"},
    True: {"dangling": "bedrock.roles_not_alternating", "orphan": "bedrock.first_not_user"},
}


@pytest.mark.parametrize("case", ["dangling", "orphan"])
def test_strands_restore_beside_repair_session(tmp_path: Path, case: str) -> None:
    from strands.session.repository_session_manager import RepositorySessionManager

    fixes_itself = hasattr(RepositorySessionManager, "_fix_broken_tool_use")
    store(tmp_path, case, h.BROKEN[case]())
    sm = FileSessionManager(session_id=case, storage_dir=str(tmp_path))
    restored = Agent(model=h.bedrock_model(h.Capture()), session_manager=sm, callback_handler=None)
    theirs = toolpair.validate(plain(restored.messages), "bedrock", format="bedrock")
    assert [v.code for v in theirs][:1] == [THEIRS[fixes_itself][case]]
    ours = repair_session(
        FileSessionManager(session_id=case, storage_dir=str(tmp_path)), dry_run=True
    )
    assert toolpair.validate(ours.messages, "bedrock", format="bedrock") == []
    # Every text of the stored log is still there, and every result whose call is
    # (an orphan's content is kept as text with orphans="text").
    for text in ("still there?", "yes", "ok", "and now?", "fine", "weather?"):
        assert (text in str(h.BROKEN[case]())) <= (text in str(ours.messages))
    kept = repair_session(sm, policy=toolpair.Policy(orphans="text"), dry_run=True)
    assert "sunny" in str(kept.messages) or case != "orphan"


def test_agent_names_the_provider_and_agent_id(tmp_path: Path) -> None:
    store(tmp_path, "s", h.interrupted_loop())
    sm = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    agent = Agent(model=h.openai_model(h.Capture()), callback_handler=None)
    found = check_session(sm, agent=agent)
    assert [v.code for v in found] == ["openai.missing_result"]
    assert repair_session(sm, agent=agent).provider == "openai"


def test_stored_messages_follow_the_removed_count(tmp_path: Path) -> None:
    from toolpair.integrations.strands import PairSafeConversationManager

    history = [h.user("a"), h.said("b"), *h.valid()]
    sm = FileSessionManager(session_id="w", storage_dir=str(tmp_path))
    manager = PairSafeConversationManager(window_size=4)
    agent = Agent(
        model=h.bedrock_model(h.Capture()),
        messages=history,
        conversation_manager=manager,
        session_manager=sm,
        callback_handler=None,
    )
    manager.apply_management(agent)
    sm.sync_agent(agent)
    again = FileSessionManager(session_id="w", storage_dir=str(tmp_path))
    assert plain(stored_messages(again)) == h.valid()


def test_unknown_agent_is_a_clear_error(tmp_path: Path) -> None:
    store(tmp_path, "s", h.valid())
    sm = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    with pytest.raises(LookupError, match="no agent 'nobody'"):
        check_session(sm, "nobody")
