"""One contract every integration holds: a framework (or an application with its own
message types) supplies an `Adapter`, subclasses `Conformance` in a test module, and
pytest runs every property below against its own message types and, where it has one,
its real provider formatter::

    from toolpair.conformance import Adapter, Conformance

    class MyAdapter(Adapter):
        name = "mine"                      # a label for ids and messages
        wire_providers = ("openai",)       # what send() can put on the wire

        def codec(self, provider): return MyCodec()
        def build(self, history): ...      # abstract history -> my message list
        def send(self, messages, provider): ...  # my formatter's captured request body

    class TestMine(Conformance):
        adapter = MyAdapter()

The properties, for every provider profile the adapter lists:

- repair's output is valid, the input is never mutated, untouched messages come back
  as the same objects, repair is idempotent, every pair fix names its call ids, no real
  result or text is lost (``test_repair_properties``);
- the verdict on the framework history equals the verdict on the body the formatter
  sends (``test_verdict_matches_the_wire``);
- repair's output, sent through the real formatter, is valid on the wire
  (``test_repaired_history_is_valid_on_the_wire``), and a history the formatter sent
  validly comes back from repair with the same provider and model unchanged: the same
  objects, no fixes (``test_a_history_sent_validly_is_left_alone``);
- do no harm, through the framework's own entry points: a history its validate accepts
  comes back from its repair untouched (``test_repair_leaves_what_validate_accepts``),
  and a history whose body the provider accepts is still accepted with toolpair in the
  path (``test_repair_never_breaks_an_accepted_body``);
- trimming and the other compaction entry points never split a pair
  (``test_compaction_never_splits_a_pair``);
- the codec's fast path never says "valid" where the full rules find a violation
  (``test_fast_path_never_hides_a_violation``);
- the integration's ``poisoned_history()`` (the pytest plugin's
  ``poisoned_framework_history`` fixture) and its dump readers (the ``toolpair``
  command's ``load_dump`` / ``dump_messages``) round-trip.

A property whose part the adapter does not supply (no formatter, no fast path, no
integration module) is skipped, saying why.

The histories are hypothesis-generated abstract histories (`toolpair.testing.generate`: every
defect repair handles) that `Adapter.build` renders in the framework's types. Importing
this module imports neither pytest, hypothesis nor any framework; the tests import them
when they run. ``TOOLPAIR_FUZZ`` sets the example count.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from toolpair import _api
from toolpair._model import Codec, Violation
from toolpair.providers import PROVIDERS

__all__ = [
    "Adapter",
    "Compactor",
    "Conformance",
    "Unsendable",
    "anthropic_reply",
    "changes",
    "chat_reply",
    "responses_reply",
    "sdk_http",
    "without_images",
]

#: (messages, provider, adapter) -> the compacted messages.
Compactor = Callable[[Sequence[Any], str, "Adapter"], Sequence[Any]]

#: Rules about the request rather than its messages: a wire body can break them while
#: no message history can show them (Bedrock wants a toolConfig whenever tool blocks
#: are sent; the suite's requests carry no tools).
_F = TypeVar("_F", bound=Callable[..., Any])

REQUEST_RULES = frozenset({"bedrock.missing_tool_config"})


class Unsendable(Exception):
    """Raised by `Adapter.send` when the framework's formatter refuses to build a
    request for a history at all (its SDK's own client-side validation): that history
    has no wire body to compare."""


class _MemoryStore:
    """An offload store kept in a dict (the compaction property needs no files)."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def put(self, key: str, text: str) -> str:
        self.items[key] = text
        return key

    def get(self, locator: str) -> str:
        return self.items[locator]


def _trim(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    return _compact("trim", messages, provider, a, max_tokens=60)


def _trim_first(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    return _compact("trim", messages, provider, a, max_tokens=60, strategy="first")


def _prune(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    return _compact("prune", messages, provider, a, tool_calls="before-last-message")


def _clear(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    return _compact("clear_tool_results", messages, provider, a, keep=1)


def _offload(messages: Sequence[Any], provider: str, a: Adapter) -> Sequence[Any]:
    return _compact("offload", messages, provider, a, store=_MemoryStore(), threshold_bytes=4)


def _compact(
    name: str, messages: Sequence[Any], provider: str, a: Adapter, **options: Any
) -> Sequence[Any]:
    import toolpair

    op = getattr(toolpair, name)
    store = options.pop("store", None)
    args = (messages, store) if store is not None else (messages,)
    out = op(*args, provider=provider, model=a.model(provider), format=a.codec(provider), **options)
    return list(out.messages)


#: The core's compaction entry points, each run on the framework's own types.
CORE_COMPACTORS: dict[str, Compactor] = {
    "trim": _trim,
    "trim_first": _trim_first,
    "prune": _prune,
    "clear_tool_results": _clear,
    "offload": _offload,
}


class Adapter:
    """What a framework supplies to the conformance suite. Only `codec` and `build` are
    required; every other part has a default that leaves its property out (or, for the
    compaction entry points, runs the core's on the framework's types)."""

    #: A label for test ids and messages.
    name: str = "framework"
    #: The integration module whose hooks (``poisoned_history``, ``load_dump``,
    #: ``dump_messages``) the suite checks; None leaves those properties out.
    integration: str | None = None
    #: Provider -> the model id the formatter targets (see `model`).
    models: Mapping[str, str] = {}
    #: The provider profiles the repair and compaction properties run on.
    providers: Sequence[str] = PROVIDERS
    #: The provider profiles the compaction properties run on (compaction splits or
    #: keeps units the same way for every provider; the profile only decides the final
    #: repair, so a few profiles of different shapes stand for all).
    compaction_providers: Sequence[str] = ("anthropic", "openai", "gemini", "portable")
    #: The providers `send` can put on the wire.
    wire_providers: Sequence[str] = ()
    #: Providers whose wire carries less than the history (Gemini without ids pairs by
    #: count): there only "valid in the framework implies valid on the wire" holds.
    one_way_verdict: Sequence[str] = ()
    #: The providers the fast path answers for (the codec's ``certainly_valid``, or the
    #: core's checker for a wire format).
    fast_providers: Sequence[str] = ()
    #: Whether the framework stores an empty call id as it comes (so one is generated).
    blank_ids: bool = True
    #: JSON the integration's ``load_dump`` must decline besides the suite's own (other
    #: frameworks' dumps, near misses of its own shape).
    foreign_dumps: Sequence[Any] = ()
    #: A list of plain role/content messages is a dump of this integration (the OpenAI
    #: Agents SDK's easy input messages are session items).
    plain_messages_are_dumps: bool = False
    #: Rule codes the wire may break that no message history can show.
    request_rules: frozenset[str] = REQUEST_RULES

    def codec(self, provider: str) -> Codec:
        """The codec that reads this framework's messages for ``provider``."""
        raise NotImplementedError

    def build(self, history: list[Any]) -> list[Any]:
        """The framework's native history for an abstract one (a list of
        `toolpair.testing.generate.Abs`: role and parts ``("text", s)``, ``("image", url)``,
        ``("thinking", signature)``, ``("call", id, name)``,
        ``("result", id, name, content, is_error)``)."""
        raise NotImplementedError

    def model(self, provider: str) -> str | None:
        """The model id the formatter for ``provider`` targets, as the user writes it
        (passed as ``model=`` to validate and repair); by default from `models`."""
        return self.models.get(provider)

    def send(self, messages: Sequence[Any], provider: str) -> Any:
        """Hand ``messages`` to the framework's real formatter for ``provider`` (its
        model class over a mock transport) and return the request body it sent; raise
        `Unsendable` where the formatter refuses to build one."""
        raise NotImplementedError

    def repair(self, messages: Sequence[Any], provider: str) -> Sequence[Any]:
        """The framework's own repair entry point, whose output is sent to the wire;
        by default the core's `toolpair.repair` through the codec."""
        fixed = _api.repair(
            messages, provider, model=self.model(provider), format=self.codec(provider)
        )
        return list(fixed.messages)

    def send_repaired(self, messages: Sequence[Any], provider: str) -> Any:
        """The request body the framework sends for ``messages`` with toolpair in the
        path, as an application installs it; by default `repair`'s output through
        `send`. A framework whose integration also corrects its formatter's own
        mangling (a patch around the formatter) sends through that instead."""
        return self.send(self.repair(messages, provider), provider)

    def dump(self, messages: Sequence[Any]) -> Any:
        """The messages as JSON-able data, so the texts and results can be found."""
        return list(messages)

    def images(self, messages: Sequence[Any]) -> list[Any]:
        """Every image reference in the messages, in order."""
        return []

    def independent_problems(self, messages: Sequence[Any], provider: str) -> list[str] | None:
        """Pairing problems found without the codec (a second opinion on repair's
        output), or None where the adapter has no such checker."""
        return None

    def wire_histories(self) -> Any:
        """A hypothesis strategy of native histories for the wire properties; by default
        the built defective abstract histories. A framework may add shapes of its own."""
        from toolpair.testing import generate

        return generate.defective().map(lambda d: self.build(without_images(d[0])))

    def valid_histories(self) -> Any:
        """A strategy of native histories that are mostly valid, for do-no-harm."""
        from toolpair.testing import generate

        return generate.abstract_history().map(lambda h: self.build(without_images(h)))

    def comparable(self, messages: Sequence[Any], provider: str) -> bool:
        """Whether this history's wire can be held to the wire properties: False where
        the formatter is known to drop what toolpair reads (the history is then left
        out of the verdict, repaired-wire and do-no-harm properties alike)."""
        return True

    def perturb(self, draw: Any, messages: list[Any]) -> list[Any]:
        """Framework shapes the abstract generator does not make, drawn with hypothesis's
        ``draw``, for the fast path property."""
        return messages

    def check_repair(self, history: list[Any], provider: str) -> Any:
        """The repair properties for one native history (`toolpair.testing.generate`'s
        ``check_repair_properties`` with this adapter's parts); returns the repair."""
        from toolpair.testing import generate

        def simple(out: list[Any]) -> list[str]:
            return self.independent_problems(out, provider) or []

        return generate.check_repair_properties(
            history,
            provider,
            self.codec(provider),
            simple=simple,
            dump=self.dump,
            images=self.images,
            model=self.model(provider),
        )

    def compactors(self) -> Mapping[str, Compactor]:
        """Compaction entry points that must never split a pair: the core's on the
        framework's types, plus any the framework has of its own."""
        return CORE_COMPACTORS

    def harm_histories(self) -> Any:
        """Native histories for the do-no-harm properties: by default the mostly-valid
        and the defective ones; a framework adds shapes of its own (histories whose every
        call is answered, so that accepted bodies are common)."""
        from hypothesis import strategies as st

        return st.one_of(self.valid_histories(), self.wire_histories())

    def changes(self, messages: Sequence[Any], provider: str) -> list[str]:
        """What the framework's own repair entry point changed in ``messages`` (empty:
        it left them alone, no fixes and the same objects back); by default the core's
        `toolpair.repair` through the codec."""
        fixed = _api.repair(
            messages, provider, model=self.model(provider), format=self.codec(provider)
        )
        return changes(fixed.fixes, fixed.messages, messages)

    def wire_format(self, provider: str) -> str | None:
        """The format a body `send` returns is read as (None: detected). A formatter that
        passes foreign blocks through (a ``tool_result`` part in an OpenAI body) names
        its provider's own."""
        return None


def changes(fixes: Sequence[Any], out: Sequence[Any], history: Sequence[Any]) -> list[str]:
    """A repair's fixes, and whether it gave back other objects than ``history``."""
    same = _same_objects(out, history)
    return [str(f) for f in fixes] + ([] if same else ["other objects came back"])


def without_images(history: list[Any]) -> list[Any]:
    """The abstract history with its images left out, for the wire properties: no
    pairing rule reads an image, and a formatter may fetch one (or reject a made-up URL)
    before sending."""
    return [type(m)(m.role, [p for p in m.parts if p[0] != "image"]) for m in history]


def _examples(default: int = 40) -> int:
    return int(os.environ.get("TOOLPAIR_FUZZ", str(default)))


def _settings(max_examples: int) -> Callable[[_F], _F]:
    from hypothesis import HealthCheck, settings

    chosen: Callable[[_F], _F] = settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
            # comparable() may leave out most of what an old formatter cannot send.
            HealthCheck.filter_too_much,
        ],
    )
    return chosen


def _skip(reason: str) -> None:
    pytest: Any = importlib.import_module("pytest")
    pytest.skip(reason)


def _wire_violations(
    a: Adapter, messages: Sequence[Any], provider: str, *, repaired: bool = False
) -> list[Violation]:
    body = a.send_repaired(messages, provider) if repaired else a.send(messages, provider)
    return [
        v
        for v in _api.validate(body, provider, model=a.model(provider))
        if v.code not in a.request_rules
    ]


def _same_objects(out: Sequence[Any], history: Sequence[Any]) -> bool:
    return len(out) == len(history) and all(x is y for x, y in zip(out, history, strict=True))


class Conformance:
    """The suite. Subclass it in a test module (its name starting with ``Test``) and set
    ``adapter``; pytest collects every property as a test of that class."""

    adapter: Adapter
    #: Examples per property and provider (``TOOLPAIR_FUZZ`` overrides the default).
    examples: int = _examples()
    #: Examples for the properties that go through the real formatter.
    wire_examples: int = _examples(60)

    # pytest calls this for each test of the class: the provider arguments come from
    # the adapter, so a property with nothing to run on is reported as skipped.
    def pytest_generate_tests(self, metafunc: Any) -> None:
        a = self.adapter
        lists = {
            "provider": list(a.providers),
            "wire_provider": list(a.wire_providers),
            "fast_provider": _reaching(a.fast_providers, a.providers),
        }
        for arg, values in lists.items():
            if arg in metafunc.fixturenames:
                metafunc.parametrize(arg, values)
        if "compactor" in metafunc.fixturenames:
            metafunc.parametrize("compaction_provider", list(a.compaction_providers))
            metafunc.parametrize("compactor", sorted(a.compactors()))

    # -- repair on the framework's types ---------------------------------------------

    def test_repair_properties(self, provider: str) -> None:
        from hypothesis import given
        from hypothesis import strategies as st

        from toolpair.testing import generate

        a = self.adapter

        @st.composite
        def histories(draw: Any) -> list[Any]:
            abstract, _ = draw(generate.defective())
            if a.blank_ids and draw(st.booleans()) and draw(st.booleans()):
                generate.blank_one_id(draw, abstract)
            return a.build(abstract)

        @_settings(self.examples)
        @given(history=histories())
        def check(history: list[Any]) -> None:
            a.check_repair(history, provider)

        check()

    # -- through the real formatter --------------------------------------------------

    def test_verdict_matches_the_wire(self, wire_provider: str) -> None:
        from hypothesis import assume, given

        a, provider = self.adapter, wire_provider

        @_settings(self.wire_examples)
        @given(history=a.wire_histories())
        def check(history: list[Any]) -> None:
            assume(a.comparable(history, provider))
            framework = _api.validate(
                history, provider, model=a.model(provider), format=a.codec(provider)
            )
            try:
                wire = _wire_violations(a, history, provider)
            except Unsendable:
                assume(False)
            if provider in a.one_way_verdict:
                assert framework or not wire, [str(v) for v in wire]
                return
            assert bool(framework) == bool(wire), (
                [str(v) for v in framework],
                [str(v) for v in wire],
            )

        check()

    def test_repaired_history_is_valid_on_the_wire(self, wire_provider: str) -> None:
        from hypothesis import assume, given

        a, provider = self.adapter, wire_provider

        @_settings(self.wire_examples)
        @given(history=a.wire_histories())
        def check(history: list[Any]) -> None:
            assume(a.comparable(history, provider))
            before = copy.deepcopy(history)
            fixed = list(a.repair(history, provider))
            codec, model = a.codec(provider), a.model(provider)
            assert _api.validate(fixed, provider, model=model, format=codec) == []
            wire = _wire_violations(a, history, provider, repaired=True)
            assert wire == [], [str(v) for v in wire]
            assert history == before, "repairing on the way to the wire changed the history"

        check()

    def test_a_history_sent_validly_is_left_alone(self, wire_provider: str) -> None:
        from hypothesis import given
        from hypothesis import strategies as st

        a, provider = self.adapter, wire_provider
        # Mostly-valid histories, and repaired broken ones: the likeliest valid inputs.
        repaired = a.wire_histories().map(lambda h: list(a.repair(h, provider)))

        @_settings(self.wire_examples)
        @given(history=st.one_of(a.valid_histories(), repaired))
        def check(history: list[Any]) -> None:
            if not a.comparable(history, provider):
                return
            try:
                if _wire_violations(a, history, provider):
                    return
            except Unsendable:
                return
            r = _api.repair(history, provider, model=a.model(provider), format=a.codec(provider))
            assert r.fixes == [], [str(f) for f in r.fixes]
            assert _same_objects(r.messages, history)

        check()

    # -- do no harm, through the framework's entry points ---------------------------

    def test_repair_leaves_what_validate_accepts(self, wire_provider: str) -> None:
        from hypothesis import given

        a, provider = self.adapter, wire_provider

        @_settings(self.wire_examples)
        @given(history=a.harm_histories())
        def check(history: list[Any]) -> None:
            codec, model = a.codec(provider), a.model(provider)
            if _api.validate(history, provider, model=model, format=codec):
                return
            assert a.changes(history, provider) == []

        check()

    def test_repair_never_breaks_an_accepted_body(self, wire_provider: str) -> None:
        from hypothesis import assume, given

        a, provider = self.adapter, wire_provider

        def verdict(body: Any) -> list[Violation]:
            found = _api.validate(
                body, provider, model=a.model(provider), format=a.wire_format(provider)
            )
            return [v for v in found if v.code not in a.request_rules]

        @_settings(self.wire_examples)
        @given(history=a.harm_histories())
        def check(history: list[Any]) -> None:
            try:
                before = a.send(history, provider)
            except Exception:
                assume(False)  # the framework refuses to build this request: nothing sent
            assume(verdict(before) == [])
            after = verdict(a.send_repaired(history, provider))
            assert after == [], [str(v) for v in after]

        check()

    # -- compaction and the fast path ------------------------------------------------

    def test_compaction_never_splits_a_pair(self, compaction_provider: str, compactor: str) -> None:
        from hypothesis import given
        from hypothesis import strategies as st

        from toolpair.testing import generate

        a, provider = self.adapter, compaction_provider
        compact = a.compactors()[compactor]

        @_settings(max(10, self.examples // 2))
        @given(abstract=generate.defective(), repaired_first=st.booleans())
        def check(abstract: tuple[list[Any], list[str]], repaired_first: bool) -> None:
            history = a.build(abstract[0])
            if repaired_first:
                history = list(a.repair(history, provider))
            before = copy.deepcopy(history)
            out = list(compact(history, provider, a))
            assert history == before, "compaction changed its input"
            codec, model = a.codec(provider), a.model(provider)
            left = _api.validate(out, provider, model=model, format=codec)
            assert left == [], [str(v) for v in left]

        check()

    def test_fast_path_never_hides_a_violation(self, fast_provider: str) -> None:
        from hypothesis import given
        from hypothesis import strategies as st

        from toolpair.engine import fast
        from toolpair.testing import generate

        a, provider = self.adapter, fast_provider
        codec = a.codec(provider)

        @st.composite
        def cases(draw: Any) -> list[Any]:
            abstract, _ = draw(generate.defective())
            if a.blank_ids and draw(st.booleans()) and draw(st.booleans()):
                generate.blank_one_id(draw, abstract)
            history = a.build(abstract)
            if draw(st.booleans()):
                target = draw(st.sampled_from(a.providers))
                history = list(_api.repair(history, target, format=a.codec(target)).messages)
            return a.perturb(draw, history)

        @_settings(max(self.examples, 150))
        @given(history=cases())
        def check(history: list[Any]) -> None:
            # The verdict repair acts on: the codec's checker the profile names (its
            # API's by default), an exception meaning the full path.
            p = _api.parse(history, provider, codec, {})
            if p.profile.fast_path and fast.certainly_valid(
                p.codec, p.profile.checker, p.raw, p.ctx
            ):
                assert p.profile.rules(p.messages, p.ctx) == []

        check()

    def test_the_skeleton_agrees_with_decode(self, provider: str) -> None:
        """Where the codec reads a skeleton (`Codec.skeleton`), it is what its decode
        makes of the same messages: tests/core holds every skeleton checker to the full
        rules over decoded histories, and this carries that to the framework's own
        objects, for every provider's rules at once."""
        from hypothesis import given
        from hypothesis import strategies as st

        from toolpair.engine import fast, skeleton
        from toolpair.testing import generate

        a = self.adapter
        codec = a.codec(provider)
        if not fast.reads_skeleton(codec):
            _skip(f"{type(codec).__name__} reads no skeleton")

        @st.composite
        def cases(draw: Any) -> list[Any]:
            abstract, _ = draw(generate.defective())
            history = a.build(abstract)
            if draw(st.booleans()):
                history = list(_api.repair(history, provider, format=codec).messages)
            return a.perturb(draw, history)

        @_settings(max(self.examples, 100))
        @given(history=cases())
        def check(history: list[Any]) -> None:
            sk = codec.skeleton(history)
            if sk is not None:
                assert sk == skeleton.from_view(codec.decode(history))

        check()

    # -- the hooks the plugin and the command line call ------------------------------

    def _integration(self) -> Any:
        name = self.adapter.integration
        if name is None:
            _skip("the adapter names no integration module")
        return importlib.import_module(str(name))

    def test_poisoned_history_is_fresh_and_rejected(self) -> None:
        module = self._integration()
        history, codec = module.poisoned_history()
        again, _ = module.poisoned_history()
        assert history and not any(x is y for x, y in zip(history, again, strict=True))
        found = [v.code for v in _api.validate(history, "anthropic", format=codec)]
        assert found == ["anthropic.missing_result"]
        assert _api.validate(history, "portable", format=codec)
        for provider in self.adapter.providers:
            fixed = _api.repair(history, provider, format=codec).messages
            assert _api.validate(fixed, provider, format=codec) == [], provider

    def test_the_guard_reports_one_event_per_repaired_request(self) -> None:
        """Through the integration's one `Guard`: a repaired request is exactly one
        `RepairEvent` (to subscribers and to ``on_repair`` alike, with the integration's
        name as its source); a valid one is none."""
        from toolpair import events
        from toolpair.integrations import Guard, Integration

        module = self._integration()
        history, _ = module.poisoned_history()
        package = str(self.adapter.integration).rpartition(".")[2]
        specs = [c for c in _subclasses(Integration) if getattr(c, "name", None) == package]
        if not specs:
            _skip(f"{module.__name__} declares no Integration spec")
        seen: list[events.RepairEvent] = []
        told: list[object] = []
        guard = Guard(specs[0](), provider="anthropic", on_repair=told.append)
        events.subscribe(seen.append)
        try:
            fixed = guard.repair(history)
            assert fixed is not None and fixed.changed
            assert len(seen) == 1, seen
            assert told == seen
            event = seen[0]
            assert event.source == package and event.provider == "anthropic"
            assert event.fix_count == len(fixed.fixes) and event.ids_total >= 1
            again = guard.repair(fixed.messages)
            assert again is not None and not again.changed
            assert len(seen) == 1 and len(told) == 1
        finally:
            events.unsubscribe(seen.append)

    def _dumps(self) -> Any:
        module = self._integration()
        if not callable(getattr(module, "load_dump", None)):
            _skip(f"{module.__name__} reads no dumps")
        return module

    def test_dump_round_trips(self) -> None:
        module = self._dumps()
        history, _ = module.poisoned_history()
        obj = json.loads(json.dumps(module.dump_messages(history)))
        loaded = module.load_dump(obj)
        assert loaded is not None
        messages, codec = loaded
        assert type(codec) is type(module.poisoned_history()[1])
        assert list(messages) == list(history)
        assert module.dump_messages(messages) == obj
        assert module.load_dump([]) is not None

    def test_dump_reader_declines_other_json(self) -> None:
        module = self._dumps()
        from toolpair.demo import DEMOS, load_demo

        others: list[Any] = [None, "text", {"messages": []}]
        if not self.adapter.plain_messages_are_dumps:
            others.append([{"role": "user", "content": "x"}])
        others += [load_demo(fmt) for fmt in DEMOS]
        others += self.adapter.foreign_dumps
        for obj in others:
            assert module.load_dump(obj) is None, obj

    def test_the_command_line_checks_and_repairs_a_dump(self) -> None:
        module = self._dumps()
        history, codec = module.poisoned_history()
        # The rules a dump is held to unless told: the integration's own default (the
        # provider its framework talks to by default), else portable.
        implied = getattr(module, "DEFAULT_PROVIDER", "portable")
        with tempfile.TemporaryDirectory() as tmp:
            path, out = Path(tmp) / "history.json", Path(tmp) / "out.json"
            path.write_text(json.dumps(module.dump_messages(history)))
            r = _cli("check", path)
            assert r.returncode == 1, r.stderr
            # The portable rules name the providers refusing each finding, once per finding.
            lines = r.stdout.splitlines()[:-1]
            head = f"{path}: refused by " if implied == "portable" else f"{path}: ["
            assert lines and all(line.startswith(head) for line in lines), r.stdout
            assert len(lines) == len(set(lines)), r.stdout
            assert f"({codec.name} format, {implied} rules, implied by the format)" in r.stdout
            r = _cli("check", "--json", path)
            assert r.returncode == 1, r.stderr
            found = json.loads(r.stdout)
            assert found
            assert {(v["provider"], v["format"]) for v in found} == {(implied, codec.name)}
            r = _cli("check", path, "--provider", "anthropic")
            assert r.returncode == 1, r.stderr
            assert r.stdout.count("[anthropic.missing_result]") == 1
            assert f"1 violation ({codec.name} format, anthropic rules)" in r.stdout
            before = path.read_bytes()
            r = _cli("repair", path, "-o", out)
            assert r.returncode == 0, r.stderr
            assert path.read_bytes() == before
            loaded = module.load_dump(json.loads(out.read_text()))
            assert loaded is not None
            # A portable repair holds on every provider; another on its own.
            for provider in (implied, "anthropic") if implied == "portable" else (implied,):
                assert _api.validate(loaded[0], provider, format=loaded[1]) == []

    def test_the_plugin_fixture_yields_the_poisoned_history(self) -> None:
        from toolpair.testing import FRAMEWORK_MODULES

        module = self._integration()
        key = next((k for k, v in FRAMEWORK_MODULES.items() if v == module.__name__), None)
        if key is None:
            _skip(f"{module.__name__} is not among toolpair.testing.FRAMEWORK_MODULES")
        codec_type = type(module.poisoned_history()[1])
        test = PLUGIN_TEST.format(module=codec_type.__module__, codec=codec_type.__name__)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "test_plugin.py").write_text(test)
            r = subprocess.run(
                [*PYTEST, f"test_plugin.py::test_framework[{key}]"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 passed" in r.stdout


PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")

PLUGIN_TEST = """
import toolpair
from {module} import {codec}
from toolpair.testing import assert_valid

def test_framework(poisoned_framework_history):
    p = poisoned_framework_history
    assert p.provider == "portable"
    assert isinstance(p.format, {codec})
    assert toolpair.validate(p.history, "anthropic", format=p.format)
    repaired = toolpair.repair(p.history, "anthropic", format=p.format)
    assert_valid(repaired.messages, "anthropic", format=p.format)
"""


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolpair", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- canned provider replies, for mock transports --------------------------------------
# A formatter is only exercised end to end when its SDK gets a well-formed answer; these
# are the smallest each API accepts.


def sdk_http(sdk: str) -> Any:
    """The HTTP package (httpx2 or httpx) the ``sdk`` package's client is built on, so a
    mock transport passes its type checks on every pinned version."""
    base = importlib.import_module(f"{sdk}._base_client")
    return getattr(base, "httpx2", None) or base.httpx


def anthropic_reply(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Messages API answer to ``body``."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def chat_reply(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions answer to ``body``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def responses_reply(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API answer to ``body``."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": body["model"],
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
        # openai 3.x's Response has no such field but pydantic-ai 2.x reads it.
        "prompt_cache_diagnostics": None,
    }


def _reaching(fast: Sequence[str], providers: Sequence[str]) -> list[str]:
    """The providers with a fast path, and every other one whose profile reaches one of
    their checkers (`Profile.checker`: a host such as DeepSeek takes its API's)."""
    from toolpair.providers import get_profile

    names = {get_profile(p).checker for p in fast}
    out = list(fast)
    for p in providers:
        profile = get_profile(p)
        if p not in out and profile.fast_path and profile.checker in names:
            out.append(p)
    return out


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    """Every subclass of ``cls``, however deep."""
    out: list[type[Any]] = []
    subs: list[type[Any]] = cls.__subclasses__()
    for sub in subs:
        out += [sub, *_subclasses(sub)]
    return out
