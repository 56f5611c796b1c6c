"""What the real Gemini model class sends, captured at the httpx transport: broken
sessions go out repaired by the plugin, valid ones unchanged, and the session is never
written."""

from __future__ import annotations

import copy

import pytest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions import InMemorySessionService

import toolpair
from toolpair.integrations.google_adk import (
    ToolpairPlugin,
    before_model_callback,
    check_session,
    install,
)

from .harness import (
    ADK,
    PLACEHOLDER,
    Capture,
    agent,
    gemini,
    half_answered,
    interrupted,
    run,
    runner,
    seed,
    valid,
    wire_calls,
    wire_responses,
)

pytestmark = pytest.mark.anyio


async def _send(events, plugins=None, model="gemini-2.0-flash", **agent_kw):
    cap = Capture()
    service = InMemorySessionService()
    await seed(service, events)
    r = runner(agent(gemini(cap, model), **agent_kw), service, plugins)
    await run(r)
    return cap.bodies[0], service


async def test_interrupted_call_is_answered_on_the_wire():
    bare, _ = await _send(interrupted())
    if ADK >= (2, 10):
        # ADK drops the unanswered call: the request is valid but the model never
        # learns the call was attempted.
        assert wire_calls(bare) == []
    else:
        v = toolpair.validate(bare, "gemini")
        assert [x.code for x in v] == ["gemini.missing_response"]
        assert v[0].index == 2
        assert v[0].message.startswith("Please ensure that function response turn")
    body, service = await _send(interrupted(), [ToolpairPlugin()])
    assert toolpair.validate(body, "gemini") == []
    assert wire_calls(body) == ["get_weather"]
    assert wire_responses(body) == [{"name": "get_weather", "response": {"error": PLACEHOLDER}}]
    # The neutral result and the new message share the last user turn (Gemini wants
    # turns to alternate).
    assert body["contents"][-1]["parts"][-1] == {"text": "and now?"}
    # The repair wrote nothing: the stored session still has the unanswered call.
    left = await check_session(service, "app", "u1", "s1")
    assert [(x.code, x.index, x.ids) for x in left] == [("google_adk.unanswered_call", 1, ("c1",))]


async def test_keep_unanswered_off_leaves_adk_dropping():
    body, _ = await _send(interrupted(), [ToolpairPlugin(keep_unanswered=False)])
    assert toolpair.validate(body, "gemini") == []
    if ADK >= (2, 10):
        assert wire_calls(body) == []
    else:  # nothing dropped before 2.10: the repair answers it
        assert wire_responses(body)[0]["response"] == {"error": PLACEHOLDER}


async def test_half_answered_parallel_calls():
    ToolpairPlugin()  # its wrapper of ADK's drop is installed, but this runner has no plugin
    bare, _ = await _send(half_answered())
    if ADK >= (2, 10):
        assert wire_calls(bare) == ["get_weather"]
    else:
        v = toolpair.validate(bare, "gemini")
        assert [x.code for x in v] == ["gemini.response_count"]
        assert v[0].index == 2
    body, _ = await _send(half_answered(), [ToolpairPlugin()])
    assert toolpair.validate(body, "gemini") == []
    assert wire_calls(body) == ["get_weather", "get_time"]
    got = {r["name"]: r["response"] for r in wire_responses(body)}
    assert got == {"get_weather": {"weather": "sunny"}, "get_time": {"error": PLACEHOLDER}}


async def test_per_agent_callback_repairs_too():
    if ADK >= (2, 10):
        events = half_answered()  # ADK leaves none unanswered; an agent callback sees none
        body, _ = await _send(events, before_model_callback=before_model_callback())
        assert toolpair.validate(body, "gemini") == []
        assert wire_calls(body) == ["get_weather"]
    else:
        body, _ = await _send(half_answered(), before_model_callback=before_model_callback())
        assert toolpair.validate(body, "gemini") == []
        assert len(wire_responses(body)) == 2


class _Seen(BasePlugin):
    """Records the request contents the model callback chain holds at its place."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name)
        self.contents: list = []

    async def before_model_callback(self, *, callback_context, llm_request):
        self.contents.append((llm_request.contents, list(llm_request.contents)))
        return None


async def test_valid_session_goes_out_unchanged_as_the_same_objects():
    bare, _ = await _send(valid())
    before, after = _Seen("before"), _Seen("after")
    body, _ = await _send(valid(), [before, ToolpairPlugin(), after])
    assert body == bare
    assert toolpair.validate(body, "gemini") == []
    (lst0, items0), (lst1, items1) = before.contents[0], after.contents[0]
    assert lst1 is lst0
    assert all(a is b for a, b in zip(items0, items1, strict=True))


async def test_repair_never_edits_the_session_objects():
    cap = Capture()
    service = InMemorySessionService()
    session = await seed(service, half_answered())
    stored = await service.get_session(app_name="app", user_id="u1", session_id=session.id)
    snapshot = [copy.deepcopy(e.content) for e in stored.events]
    plugin = ToolpairPlugin()
    await run(runner(agent(gemini(cap)), service, [plugin]))
    again = await service.get_session(app_name="app", user_id="u1", session_id=session.id)
    assert [e.content for e in again.events[: len(snapshot)]] == snapshot
    assert plugin.last is not None and plugin.last.changed
    assert toolpair.validate(cap.bodies[0], "gemini") == []


async def test_missing_thought_signature_on_gemini_3_gets_the_bypass():
    # The model answers with a call carrying no signature (as a proxy or a replayed
    # history can); the next request of the same turn must sign it on Gemini 3.
    def answers(cap):
        cap.answers = [
            [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
            [{"text": "sunny"}],
        ]
        return cap

    model = "gemini-3-pro-preview"
    cap = answers(Capture())
    service = InMemorySessionService()
    await seed(service, [])
    await run(runner(agent(gemini(cap, model)), service))
    bare = cap.bodies[1]
    v = toolpair.validate(bare, "gemini", model=model)
    assert [x.code for x in v] == ["gemini.missing_thought_signature"]
    assert v[0].index == 1
    assert "missing a thought_signature" in v[0].message
    cap = answers(Capture())
    plugin = ToolpairPlugin()
    service = InMemorySessionService()
    await seed(service, [])
    await run(runner(agent(gemini(cap, model)), service, [plugin]))
    body = cap.bodies[1]
    assert toolpair.validate(body, "gemini", model=model) == []
    sig = body["contents"][1]["parts"][0]["thoughtSignature"]
    assert sig == "skip_thought_signature_validator"
    assert [f.kind for f in plugin.last.fixes] == ["signature_bypassed"]


async def test_signed_call_is_left_alone():
    model = "gemini-3-pro-preview"
    cap = Capture()
    cap.answers = [
        [
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                "thoughtSignature": "c2lnbmVk",
            }
        ],
        [{"text": "sunny"}],
    ]
    plugin = ToolpairPlugin()
    service = InMemorySessionService()
    await seed(service, [])
    await run(runner(agent(gemini(cap, model)), service, [plugin]))
    body = cap.bodies[1]
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnbmVk"
    assert toolpair.validate(body, "gemini", model=model) == []
    assert plugin.last is None


async def test_install_is_idempotent():
    cap = Capture()
    service = InMemorySessionService()
    await seed(service, half_answered())
    r = runner(agent(gemini(cap)), service)
    first = install(r)
    assert install(r) is first
    assert [p.name for p in r.plugin_manager.plugins] == ["toolpair"]
    given = ToolpairPlugin()
    r2 = runner(agent(gemini(cap)), service, [given])
    assert install(r2) is given
    await run(r)
    assert [f.kind for f in first.last.fixes] == ["synthetic_result", "turns_merged"]
    # A second repair of a repaired request changes nothing.
    from toolpair.integrations.google_adk import repair_contents

    assert plugin_noop(repair_contents, first)


def plugin_noop(repair_contents, plugin) -> bool:
    again = repair_contents(plugin.last.messages, "gemini")
    return not again.fixes and all(
        a is b for a, b in zip(again.messages, plugin.last.messages, strict=True)
    )


async def test_install_on_an_app():
    apps = pytest.importorskip("google.adk.apps", reason="App arrived in ADK 1.1x")
    from google.adk.runners import Runner

    cap = Capture()
    service = InMemorySessionService()
    await seed(service, half_answered())
    app = apps.App(name="app", root_agent=agent(gemini(cap)))
    plugin = install(app)
    assert install(app) is plugin and len(app.plugins) == 1
    await run(Runner(app=app, session_service=service))
    assert toolpair.validate(cap.bodies[0], "gemini") == []
    assert plugin.last.fixes[0].kind == "synthetic_result"
