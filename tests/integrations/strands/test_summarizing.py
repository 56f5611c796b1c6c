"""PairSafeSummarizingConversationManager beside Strands' own SummarizingConversationManager:
a real Agent over a BedrockModel whose mocked Converse endpoint first refuses the request
as too long (so Strands itself runs its overflow recovery, `reduce_context`), with a real
summarisation Agent over a second mocked BedrockModel, on the same histories."""

from __future__ import annotations

import copy
import json
import tempfile
from typing import Any

import pytest
from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session.file_session_manager import FileSessionManager

import toolpair
from tests.support.replies import CONVERSE_REPLY, RawBody
from toolpair.integrations.strands import PairSafeSummarizingConversationManager

from . import harness as h


def late_result() -> list[dict[str, Any]]:
    """A result that came in after the user spoke again (a tool answered late, a resumed
    interrupt): the call's next message is the user's text, not its result."""
    return [
        h.user("q0"), h.said("a0"), h.user("weather?"), h.calls("t1"),
        h.user("still there?"), h.results("t1"), h.said("sunny"),
        h.user("q2"), h.said("a2"), h.user("q3"), h.said("a3"),
    ]  # fmt: skip


def split_results() -> list[dict[str, Any]]:
    """Two parallel calls answered in two user turns, the user's text between them."""
    return [
        h.user("q0"), h.calls("t1", "t2"), h.results("t1"), h.user("and Lyon?"),
        h.results("t2"), h.said("both sunny"), h.user("q2"), h.said("a2"),
        h.user("q3"), h.said("a3"),
    ]  # fmt: skip


HISTORIES = {"late_result": late_result, "split_results": split_results}
# summary_ratio, Strands' split, ours (the overflow comes with the user's "next" appended),
# and the call whose result Strands' split keeps apart from it.
SPLITS = {"late_result": (0.4, 4, 6, "t1"), "split_results": (0.3, 3, 5, "t2")}

_TOO_LONG = {"message": "Input is too long for requested model"}


def overflowing_bedrock(capture: h.Capture, refusals: int = 1) -> Any:
    """BedrockModel whose endpoint refuses the first ``refusals`` requests as too long
    (Bedrock's own ValidationException), then answers."""
    from botocore.awsrequest import AWSResponse

    def before_send(request: Any, **_: Any) -> Any:
        capture.bodies.append(json.loads(request.body))
        if len(capture.bodies) <= refusals:
            headers = {
                "content-type": "application/json",
                "x-amzn-ErrorType": "ValidationException",
            }
            data = json.dumps(_TOO_LONG).encode()
            return AWSResponse(request.url, 400, headers, RawBody(data))
        data = json.dumps(CONVERSE_REPLY).encode()
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, RawBody(data))

    return h.bedrock_answering(before_send)


def plain(messages: list[Any]) -> list[Any]:
    return [{k: v for k, v in m.items() if k != "tracking_id"} for m in messages]


def codes(messages: list[Any]) -> list[str]:
    """Bedrock's verdict on the pairing (both histories already have two user turns in a
    row, which Bedrock refuses too and a request repair merges: not the cut's doing)."""
    found = toolpair.validate(plain(messages), "bedrock", format="bedrock")
    return [v.code for v in found if v.code != "bedrock.roles_not_alternating"]


def answered(messages: list[Any]) -> set[str]:
    """The ids of the real (successful) results in a Converse request."""
    return {
        b["toolResult"]["toolUseId"]
        for m in messages
        for b in m["content"]
        if "toolResult" in b and b["toolResult"].get("status") == "success"
    }


def run(
    cls: type, history: list[dict[str, Any]], session: Any = None, ratio: float = 0.4
) -> dict[str, Any]:
    main, summariser = h.Capture(), h.Capture()
    manager = cls(
        summary_ratio=ratio,
        preserve_recent_messages=2,
        summarization_agent=Agent(model=h.bedrock_model(summariser), callback_handler=None),
    )
    kwargs = {"session_manager": session} if session is not None else {}
    agent = Agent(
        model=overflowing_bedrock(main),
        messages=copy.deepcopy(history),
        conversation_manager=manager,
        callback_handler=None,
        **kwargs,
    )
    agent("next")
    return {"agent": agent, "manager": manager, "main": main, "summariser": summariser}


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_strands_split_parts_a_pair_ours_does_not(name: str) -> None:
    history = HISTORIES[name]()
    ratio, theirs_at, ours_at, parted = SPLITS[name]
    theirs = run(SummarizingConversationManager, history, ratio=ratio)
    ours = run(PairSafeSummarizingConversationManager, history, ratio=ratio)

    # Strands' cut: the kept part holds a result whose call went into the summary, and
    # that is what the retried request carries to Bedrock.
    assert theirs["manager"].removed_message_count == theirs_at
    assert "bedrock.too_many_results" in codes(theirs["main"].last["messages"])
    # The summariser was handed the call without its real result (1.62 answers it with
    # an error result of its own before sending, 1.0 sends it unanswered).
    assert parted not in answered(theirs["summariser"].last["messages"])

    # The summary: the summariser's assistant reply as it came before 1.62 (the history
    # then opens on an assistant turn), a user turn from 1.62; ours a user turn on both.
    import strands.agent.conversation_manager.summarizing_conversation_manager as scm

    strands_role = "user" if hasattr(scm, "as_user_summary") else "assistant"
    assert theirs["agent"].messages[0]["role"] == strands_role
    assert ours["agent"].messages[0]["role"] == "user"

    # Ours: the cut at the next whole-unit boundary; every request valid.
    assert ours["manager"].removed_message_count == ours_at
    assert codes(ours["main"].last["messages"]) == []
    # The summariser gets the call with its real result (the late result's own shape, a
    # result not in the very next turn, is the history's and the request repair's matter).
    assert parted in answered(ours["summariser"].last["messages"])
    # Only a prefix went: the kept messages are the log's tail, as they were.
    kept = plain(ours["agent"].messages)[1:]
    assert kept[: len(history) - ours_at] == history[ours_at:]


def test_same_split_as_strands_where_strands_keeps_pairs() -> None:
    m: list[dict[str, Any]] = []
    for i in range(4):
        m += [h.user(f"q{i}"), h.calls(f"t{i}"), h.results(f"t{i}"), h.said(f"a{i}")]
    theirs = run(SummarizingConversationManager, m)
    ours = run(PairSafeSummarizingConversationManager, m)
    count = ours["manager"].removed_message_count
    assert count == theirs["manager"].removed_message_count == 7
    assert plain(ours["agent"].messages)[1 : 1 + len(m) - count] == m[count:]
    assert plain(theirs["agent"].messages)[1 : 1 + len(m) - count] == m[count:]


def test_restore_from_session_continues_from_the_cut() -> None:
    history = late_result()
    storage = tempfile.mkdtemp()
    ours = run(
        PairSafeSummarizingConversationManager,
        history,
        FileSessionManager("s", storage_dir=storage),
    )
    restored = Agent(
        model=h.bedrock_model(h.Capture()),
        conversation_manager=PairSafeSummarizingConversationManager(),
        session_manager=FileSessionManager("s", storage_dir=storage),
        callback_handler=None,
    )
    assert restored.conversation_manager.removed_message_count == 6
    assert plain(restored.messages) == plain(ours["agent"].messages)
    assert codes(restored.messages) == []


def test_pin_first_is_refused() -> None:
    with pytest.raises(ValueError, match="pin_first"):
        PairSafeSummarizingConversationManager(pin_first=2)


def test_no_boundary_left_raises_strands_overflow() -> None:
    from strands.types.exceptions import ContextWindowOverflowException

    from toolpair.integrations.strands._manager import summary_cut

    loop = [h.user("go"), h.calls("t1"), h.user("wait"), h.results("t1")]
    with pytest.raises(ContextWindowOverflowException):
        summary_cut(loop, 2)
