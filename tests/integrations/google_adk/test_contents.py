"""The repair on ``types.Content`` lists as ADK hands them to the callback: each Gemini
rule rejected without toolpair and met with it; the input is never mutated and what
needs no change comes back as the same objects; provider detection."""

from __future__ import annotations

import copy

import pytest
from google.genai import types

import toolpair
from toolpair.integrations.google_adk import AdkCodec, detect, repair_contents

from .harness import Capture, call, gemini, response, text

CODEC = AdkCodec()


def user(*parts):
    return types.Content(role="user", parts=list(parts))


def model(*parts):
    return types.Content(role="model", parts=list(parts))


CASES = {
    "dangling call": (
        [user(text("hi")), model(call("f", "a")), user(text("next"))],
        "gemini.missing_response",
        2,
        ("a",),
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    "count": (
        [
            user(text("hi")),
            model(call("f", "a"), call("g", "b")),
            user(response("f", "a", ok=1)),
        ],
        "gemini.response_count",
        2,
        ("a", "b"),
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
    ),
    "orphan response": (
        [user(text("hi")), model(text("yo")), user(response("f", "z", ok=1))],
        "gemini.unexpected_response",
        2,
        ("z",),
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    "ends with call": (
        [user(text("hi")), model(call("f", "a"))],
        "gemini.ends_with_call",
        1,
        ("a",),
        "Please ensure that multiturn requests ends with a user role or a function response.",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rejected_then_repaired(name):
    contents, code, index, ids, message = CASES[name]
    v = toolpair.validate(contents, "gemini", format=CODEC)
    assert [(x.code, x.index, x.ids, x.message) for x in v] == [(code, index, ids, message)]
    snapshot = copy.deepcopy(contents)
    fixed = repair_contents(contents, "gemini")
    assert contents == snapshot
    assert toolpair.validate(fixed.messages, "gemini", format=CODEC) == []
    assert fixed.messages[0] is contents[0]
    # Idempotent: a repaired list needs nothing more, and comes back as itself.
    again = repair_contents(fixed.messages, "gemini")
    assert again.fixes == []
    assert all(a is b for a, b in zip(again.messages, fixed.messages, strict=True))


def test_real_results_are_kept():
    contents = CASES["count"][0]
    fixed = repair_contents(contents, "gemini")
    parts = [p for c in fixed.messages for p in c.parts if p.function_response]
    assert parts[0] is contents[2].parts[0]
    assert parts[1].function_response.response == {"error": toolpair.Policy().placeholder}


def test_valid_contents_are_the_same_objects():
    contents = [
        user(text("hi")),
        model(call("f", "a")),
        user(response("f", "a", ok=1)),
        model(text("done")),
        user(text("next")),
    ]
    assert toolpair.validate(contents, "gemini", format=CODEC) == []
    fixed = repair_contents(contents, "gemini")
    assert fixed.fixes == []
    assert all(a is b for a, b in zip(fixed.messages, contents, strict=True))


def test_unknown_parts_pass_through():
    code = types.Part(executable_code=types.ExecutableCode(code="1", language="PYTHON"))
    contents = [user(text("hi")), model(code, call("f", "a")), user(text("next"))]
    fixed = repair_contents(contents, "gemini")
    assert fixed.messages[1].parts[0] is code


def test_detect_reads_the_model_class():
    m = gemini(Capture(), "gemini-2.5-flash")
    assert detect(m) == ("gemini", "gemini-2.5-flash")
    assert detect("gemini-2.0-flash") == ("gemini", "gemini-2.0-flash")
    vertex = gemini(Capture(), "gemini-2.5-flash")
    vertex_client = _vertex_client()
    if "client" in type(vertex).model_fields:
        vertex = type(vertex)(model="gemini-2.5-flash", client=vertex_client)
    else:
        vertex.__dict__["api_client"] = vertex_client
    assert detect(vertex) == ("vertex", "gemini-2.5-flash")


def _vertex_client():
    from google.genai import Client

    return Client(vertexai=True, project="p", location="us-central1", api_key=None)
