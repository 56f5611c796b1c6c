"""Blank text and Anthropic (A10), judged against llama-index's own Anthropic formatter.

``messages_to_anthropic_messages`` drops an empty `TextBlock` and sends a
whitespace-only one as it stands, in user and assistant messages alike; it leaves
system messages out and merges consecutive messages of one role (a tool message
becomes a user message). `LlamaIndexCodec.sends_blank_text` says so, and these tests
hold toolpair's ``anthropic.empty_text`` to the body the REAL formatter builds.

The API's rule: an empty text block anywhere is rejected; a whitespace-only one is
rejected where its message has no non-blank text (beside real text it is accepted:
UNVERIFIED). toolpair judges each ChatMessage: where the formatter merges a
whitespace-only message into one holding real text, toolpair still reports it
(`test_a_blank_message_merged_beside_real_text`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import (
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    ThinkingBlock,
)
from llama_index.llms.anthropic.utils import messages_to_anthropic_messages

import toolpair
from toolpair import Fix
from toolpair.engine.fast import certainly_valid
from toolpair.integrations.llamaindex import LlamaIndexCodec, repair_messages
from toolpair.integrations.llamaindex._codec import call_block_type
from toolpair.providers import Context

from .history import snapshot

ToolCallBlock: Any = call_block_type()

A10 = "messages: text content blocks must be non-empty"
A10_BLANK = "messages: text content blocks must contain non-whitespace text"
CODE = "anthropic.empty_text"
CODEC = LlamaIndexCodec()
CTX = Context(shape="chat", format="llamaindex")

BLANKS = ("", " ", "\n")
PNG = b"\x89PNG\r\n\x1a\n"

#: How a message's text is written: ``content=`` a string, ``content=`` a list of
#: TextBlocks, ``blocks=`` TextBlock objects, ``blocks=`` dicts pydantic validates.
FORMS = ("string", "content", "objects", "dicts")

Found = set[tuple[int, str]]


# -- builders -------------------------------------------------------------------------


def _texts(texts: Sequence[str], form: str) -> list[Any]:
    if form == "dicts":
        return [{"block_type": "text", "text": t} for t in texts]
    return [TextBlock(text=t) for t in texts]


def _message(role: MessageRole, texts: Sequence[str], form: str, **kwargs: Any) -> ChatMessage:
    if form == "string":
        assert len(texts) == 1
        return ChatMessage(role=role, content=texts[0], **kwargs)
    if form == "content":
        return ChatMessage(role=role, content=_texts(texts, form), **kwargs)
    return ChatMessage(role=role, blocks=_texts(texts, form), **kwargs)


def user_msg(texts: Sequence[str], form: str = "objects", image: bool = False) -> ChatMessage:
    msg = _message(MessageRole.USER, texts, form)
    if image:
        img = ImageBlock(image=PNG, image_mimetype="image/png")
        msg = msg.model_copy(update={"blocks": [img, *msg.blocks]})
    return msg


def assistant_msg(
    texts: Sequence[str], form: str = "objects", extra: str | None = None, call_id: str = ""
) -> ChatMessage:
    """``extra``: "call" (a ToolCallBlock after the text), "legacy" (an Anthropic-shaped
    ``additional_kwargs`` call, which the formatter also sends after the text) or
    "thinking" (a signed ThinkingBlock before it)."""
    kwargs: dict[str, Any] = {}
    if extra == "legacy":
        kwargs["additional_kwargs"] = {
            "tool_calls": [{"id": call_id, "name": "add", "input": {"a": 1}}]
        }
    msg = _message(MessageRole.ASSISTANT, texts, form, **kwargs)
    if extra == "call":
        call = ToolCallBlock(tool_call_id=call_id, tool_name="add", tool_kwargs={"a": 1})
        msg = msg.model_copy(update={"blocks": [*msg.blocks, call]})
    elif extra == "thinking":
        thought = ThinkingBlock(content="hm", additional_information={"signature": "sig"})
        msg = msg.model_copy(update={"blocks": [thought, *msg.blocks]})
    return msg


def tool_msg(call_id: str, text: str = "ok") -> ChatMessage:
    return ChatMessage(
        role=MessageRole.TOOL, content=text, additional_kwargs={"tool_call_id": call_id}
    )


def U(*texts: str) -> ChatMessage:
    return user_msg(texts)


def A(*texts: str) -> ChatMessage:
    return assistant_msg(texts)


def system(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.SYSTEM, content=text)


# -- the oracle: the formatter's body -------------------------------------------------


def body(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    messages, _system = messages_to_anthropic_messages(list(history))
    return [dict(m) for m in messages]


def rejects(content: Any) -> str | None:
    """What the API says of one message's content: an empty text block anywhere, or a
    whitespace-only text (block or string content) beside no non-blank text."""
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [b["text"] for b in content if b.get("type") == "text"]
    if "" in texts:
        return A10
    if any(not t.strip() for t in texts) and not any(t.strip() for t in texts):
        return A10_BLANK
    return None


def groups(history: Sequence[ChatMessage]) -> list[list[int]]:
    """The ChatMessage indices behind each message of the formatter's body (system
    messages left out, consecutive messages of one role merged), checked against it."""
    out: list[list[int]] = []
    roles: list[str] = []
    contents: list[list[Any]] = []
    for i, m in enumerate(history):
        alone = body([m])
        if not alone:
            continue
        (one,) = alone
        if roles and roles[-1] == one["role"]:
            out[-1].append(i)
            contents[-1] = contents[-1] + list(one["content"])
        else:
            out.append([i])
            roles.append(one["role"])
            contents.append(list(one["content"]))
    assert [(m["role"], list(m["content"])) for m in body(history)] == list(
        zip(roles, contents, strict=True)
    )
    return out


def per_message(history: Sequence[ChatMessage]) -> Found:
    """The oracle applied to each ChatMessage as the formatter renders it alone."""
    found: Found = set()
    for i, m in enumerate(history):
        for one in body([m]):
            verdict = rejects(one["content"])
            if verdict is not None:
                found.add((i, verdict))
    return found


def reported(history: Sequence[ChatMessage], provider: str = "anthropic") -> Found:
    return {
        (v.index, v.message)
        for v in toolpair.validate(list(history), provider, format=CODEC)
        if v.code == CODE
    }


def has_solid(content: Any) -> bool:
    return any(b.get("type") == "text" and b["text"].strip() for b in content)


def check_against_formatter(history: Sequence[ChatMessage]) -> Found:
    """toolpair's A10 verdict on ``history`` against the formatter's body; the
    violations found, for the caller's own assertions."""
    found = reported(history)
    sent = body(history)
    parts = groups(history)
    # Each ChatMessage: exactly the oracle on what the formatter makes of it.
    assert found == per_message(history)
    # The body: everything it holds that the API rejects is reported, in its words.
    by_message: dict[int, str] = {}
    for k, msg in enumerate(sent):
        verdict = rejects(msg["content"])
        if verdict is not None:
            by_message[k] = verdict
            assert any((i, verdict) in found for i in parts[k]), (k, verdict, found)
    # and nothing else, but a whitespace-only message merged beside real text.
    for i, message in found:
        (k,) = [k for k, part in enumerate(parts) if i in part]
        if k in by_message:
            continue
        assert message == A10_BLANK and len(parts[k]) > 1 and has_solid(sent[k]["content"])
        event("reported: a blank message merged beside real text")
    if [len(p) for p in parts] == [1] * len(parts) and len(parts) == len(history):
        # Indices aligned (no system message, nothing merged): the very same set.
        assert found == set(by_message.items())
    # Portable holds Anthropic's rules, with the same answer from the codec.
    assert reported(history, "portable") == found
    if found:
        # The no-op path never takes a history the API rejects for its text.
        assert certainly_valid(CODEC, "anthropic", list(history), CTX) is not True
    return found


# -- every construct, in every position -----------------------------------------------


def _constructs() -> list[tuple[str, Callable[[str], list[ChatMessage]]]]:
    """(name, make(call_id) -> the messages of one construct holding blank text)."""
    out: list[tuple[str, Callable[[str], list[ChatMessage]]]] = []
    for blank, form in itertools.product(BLANKS, FORMS):
        b = repr(blank)
        out.append((f"user {form} {b}", lambda _, b_=blank, f=form: [user_msg([b_], f)]))
        out.append((f"assistant {form} {b}", lambda _, b_=blank, f=form: [assistant_msg([b_], f)]))
        if form == "string":
            continue
        for texts in ([blank, "hi"], ["hi", blank], [blank, blank], [blank, " ", "\n"]):
            t = repr(texts)
            out.append((f"user {form} {t}", lambda _, t_=texts, f=form: [user_msg(t_, f)]))
            out.append(
                (f"assistant {form} {t}", lambda _, t_=texts, f=form: [assistant_msg(t_, f)])
            )
        out.append(
            (f"user {form} {b} + image", lambda _, b_=blank, f=form: [user_msg([b_], f, True)])
        )
    for blank, extra, beside in itertools.product(
        BLANKS, ("call", "legacy", "thinking"), ((), ("hi",))
    ):
        texts = [blank, *beside]
        name = f"assistant {texts!r} + {extra}"

        def make(call_id: str, t: list[str] = texts, e: str = extra) -> list[ChatMessage]:
            msg = assistant_msg(t, "objects", e, call_id)
            return [msg, tool_msg(call_id)] if e in ("call", "legacy") else [msg]

        out.append((name, make))
    for blank in BLANKS:
        out.append(
            (
                f"result {blank!r}",  # nested in a tool_result: not message text
                lambda i, b_=blank: [assistant_msg(["hi"], "objects", "call", i), tool_msg(i, b_)],
            )
        )
    return out


CONSTRUCTS = _constructs()


def _assistant(m: ChatMessage) -> bool:
    return m.role == MessageRole.ASSISTANT


def _before(x: list[ChatMessage]) -> list[ChatMessage]:
    return [U("q")] if _assistant(x[0]) else [U("q"), A("a")]


def _after(x: list[ChatMessage]) -> list[ChatMessage]:
    return [U("b"), A("c")] if _assistant(x[-1]) else [A("b"), U("c")]


#: Where a construct goes: first, middle, last; roles alternate around it, so indices
#: stay aligned unless the construct merges itself (a tool message then a user one).
POSITIONS: dict[str, Callable[[list[ChatMessage]], list[ChatMessage]]] = {
    "first": lambda x: [*x, *_after(x)],
    "middle": lambda x: [*_before(x), *x, *_after(x)],
    "last": lambda x: [*_before(x), *x],
}


@pytest.mark.parametrize("position", POSITIONS)
def test_every_construct_agrees_with_the_formatter(position: str) -> None:
    seen = {A10_BLANK: 0, "clean": 0}
    for n, (name, make) in enumerate(CONSTRUCTS):
        history = POSITIONS[position](make(f"toolu_{n:02d}"))
        assert groups(history) == [[i] for i in range(len(history))], name
        try:
            found = check_against_formatter(history)
        except AssertionError as e:
            raise AssertionError(f"{name} ({position}): {e}") from e
        for _, message in found:
            seen[message] += 1
        seen["clean"] += not found
    # The grid holds both sides of the rule (the formatter never sends an empty block).
    assert seen[A10_BLANK] > 0
    assert seen["clean"] > 0


# -- random histories -----------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> list[ChatMessage]:
    """1-6 messages of any construct above (or plain text, or a system message), in
    any order: neighbours of one role merge, system messages fall out."""
    out: list[ChatMessage] = []
    n = draw(st.integers(1, 6))
    for k in range(n):
        kind = draw(st.sampled_from(("construct", "construct", "user", "assistant", "system")))
        if kind == "construct":
            _, make = draw(st.sampled_from(CONSTRUCTS))
            out += make(f"toolu_{k:02d}")
        elif kind == "user":
            out.append(U(draw(st.sampled_from(("hi", " ", "")))))
        elif kind == "assistant":
            out.append(A(draw(st.sampled_from(("ok", "\n", "")))))
        else:
            out.append(system(draw(st.sampled_from(("sys", " ")))))
    return out


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(history=histories())
def test_random_histories_agree_with_the_formatter(history: list[ChatMessage]) -> None:
    found = check_against_formatter(history)
    event("rejected" if found else "accepted")


# -- rejected examples and their accepted twins ---------------------------------------

R = tool_msg

#: (name, rejected history, its violation (index, message), the accepted twin).
EXAMPLES: list[tuple[str, list[ChatMessage], tuple[int, str], list[ChatMessage]]] = [
    ("user string", [U(" "), A("ok")], (0, A10_BLANK), [U(" hi"), A("ok")]),
    (
        "user whitespace beside an empty block",
        [U("q"), A("a"), user_msg(["", "\n"])],
        (2, A10_BLANK),
        [U("q"), A("a"), user_msg(["", "\n", "more"])],
    ),
    (
        "user dicts, middle",
        [U("q"), A("a"), user_msg([" "], "dicts"), A("b")],
        (2, A10_BLANK),
        [U("q"), A("a"), user_msg([" ", "hi"], "dicts"), A("b")],
    ),
    (
        "user image beside whitespace",
        [user_msg(["\n"], "content", image=True), A("ok")],
        (0, A10_BLANK),
        [user_msg([""], "content", image=True), A("ok")],
    ),
    (
        "assistant whitespace, middle",
        [U("q"), A("\n"), U("again")],
        (1, A10_BLANK),
        [U("q"), A("", "ok"), U("again")],
    ),
    (
        "assistant whitespace beside a call",
        [U("q"), assistant_msg([" "], extra="call", call_id="toolu_1"), R("toolu_1"), A("done")],
        (1, A10_BLANK),
        [U("q"), assistant_msg([""], extra="call", call_id="toolu_1"), R("toolu_1"), A("done")],
    ),
    (
        "assistant whitespace beside a legacy call",
        [U("q"), assistant_msg(["\n"], extra="legacy", call_id="toolu_1"), R("toolu_1"), A("ok")],
        (1, A10_BLANK),
        [U("q"), assistant_msg([], extra="legacy", call_id="toolu_1"), R("toolu_1"), A("ok")],
    ),
    (
        "assistant whitespace beside thinking",
        [U("q"), assistant_msg([" "], extra="thinking"), U("and?")],
        (1, A10_BLANK),
        [U("q"), assistant_msg(["", "so"], extra="thinking"), U("and?")],
    ),
]


@pytest.mark.parametrize(
    ("rejected", "where", "twin"),
    [pytest.param(r, w, t, id=name) for name, r, w, t in EXAMPLES],
)
def test_rejected_and_its_accepted_twin(
    rejected: list[ChatMessage], where: tuple[int, str], twin: list[ChatMessage]
) -> None:
    index, message = where
    found = toolpair.validate(rejected, "anthropic", format=CODEC)
    assert [(v.code, v.index, v.message) for v in found] == [(CODE, index, message)]
    assert toolpair.validate(twin, "anthropic", format=CODEC) == []
    # The formatter's body agrees, at the same index (these keep indices aligned).
    assert [(k, rejects(m["content"])) for k, m in enumerate(body(rejected))] == [
        (k, message if k == index else None) for k in range(len(rejected))
    ]
    assert all(rejects(m["content"]) is None for m in body(twin))


def test_an_empty_block_is_never_reported() -> None:
    """The formatter drops every empty TextBlock, so A10's "must be non-empty" never
    applies to a ChatMessage history."""
    history = [U(""), A("", "ok"), user_msg(["", "hi", ""], "dicts"), A("ok")]
    assert all(rejects(m["content"]) is None for m in body(history))
    assert reported(history) == set()
    assert reported(history, "portable") == set()


def test_system_text_is_never_reported() -> None:
    """System messages become the ``system`` parameter, not message text."""
    history = [system(" "), U("q"), system(""), A("ok")]
    assert body(history) == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert reported(history) == set()


def test_a_blank_result_is_not_message_text() -> None:
    """A tool message's blank text goes inside its tool_result, which is not judged as
    message text (A10 is about a message's own text blocks)."""
    history = [U("q"), assistant_msg(["hi"], extra="call", call_id="toolu_1"), R("toolu_1", " ")]
    (_, _, result) = body(history)
    assert result["content"][0]["content"] == [{"type": "text", "text": " "}]
    assert reported(history) == set()


def test_a_blank_message_merged_beside_real_text() -> None:
    """The one place toolpair is stricter than the body: a whitespace-only ChatMessage
    the formatter merges into a message holding real text. The API accepts a blank block
    beside real text (UNVERIFIED), but toolpair judges each ChatMessage on its own."""
    history = [U("hi"), U(" "), A("ok")]
    assert body(history)[0]["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "text", "text": " "},
    ]
    assert rejects(body(history)[0]["content"]) is None
    assert reported(history) == {(1, A10_BLANK)}
    # Two blank ones merge into one rejected message: both are reported.
    both = [U(" "), system("s"), U("\n"), A("ok")]
    assert [rejects(m["content"]) for m in body(both)] == [A10_BLANK, None]
    assert reported(both) == {(0, A10_BLANK), (2, A10_BLANK)}


# -- repair ---------------------------------------------------------------------------


def _unrepaired(index: int) -> Fix:
    return Fix("unrepaired", index, (), f"[{CODE}] {A10_BLANK}")


@pytest.mark.parametrize("name", [name for name, *_ in EXAMPLES])
def test_repair_reports_the_blank_text_and_changes_nothing(name: str) -> None:
    """Repair has no truthful fix for blank text (what would the user have said?), so it
    leaves it and reports it ``unrepaired``; every message comes back as it was."""
    (_, history, (index, _), _) = next(e for e in EXAMPLES if e[0] == name)
    before = snapshot(history)
    for repaired in (
        toolpair.repair(history, "anthropic", format=CODEC),
        repair_messages(history, "anthropic"),
    ):
        assert repaired.fixes == [_unrepaired(index)]
        assert all(a is b for a, b in zip(repaired.messages, history, strict=True))
    assert snapshot(history) == before
    assert certainly_valid(CODEC, "anthropic", history, CTX) is not True


def test_repair_fixes_the_rest_and_leaves_the_blank_text() -> None:
    history = [
        U("q"),
        assistant_msg([" "], extra="call", call_id="toolu_1"),  # its result is missing
        U("next"),
        A("ok"),
    ]
    repaired = repair_messages(history, "anthropic")
    assert [(f.kind, f.index) for f in repaired.fixes] == [
        ("synthetic_result", 1),
        ("unrepaired", 1),
    ]
    assert repaired.fixes[1] == _unrepaired(1)
    out = repaired.messages
    assert len(out) == 5 and out[2].role == MessageRole.TOOL
    # Only the missing result was added: the blank text's message is the same object.
    assert all(a is b for a, b in zip([*out[:2], *out[3:]], history, strict=True))
    assert reported(out) == {(1, A10_BLANK)}
    # Repairing again adds nothing and still reports it.
    again = repair_messages(out, "anthropic")
    assert again.fixes == [_unrepaired(1)]
    assert all(a is b for a, b in zip(again.messages, out, strict=True))


def test_a_long_history_does_not_hide_blank_text() -> None:
    """A long history is repaired piece by piece behind the no-op checker; the piece
    holding the blank text takes the full path and reports it where it is."""
    history: list[ChatMessage] = []
    for k in range(150):
        call_id = f"toolu_{k:04d}"
        history += [
            U(f"question {k}"),
            assistant_msg([f"checking {k}"], extra="call", call_id=call_id),
            R(call_id, f"found {k}"),
            A(f"answer {k}"),
        ]
    assert certainly_valid(CODEC, "anthropic", history, CTX) is True
    at = 4 * 97
    history[at] = U("\n")
    assert certainly_valid(CODEC, "anthropic", history, CTX) is not True
    for repaired in (
        toolpair.repair(history, "anthropic", format=CODEC),
        repair_messages(history, "anthropic"),
    ):
        assert repaired.fixes == [_unrepaired(at)]
        assert all(a is b for a, b in zip(repaired.messages, history, strict=True))
    assert reported(history) == {(at, A10_BLANK)}
