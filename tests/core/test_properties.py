"""Property tests over generated histories in every wire format, for every provider.

The default run keeps the example count modest; `tox -e fuzz` sets TOOLPAIR_FUZZ to the
number of examples per provider and TOOLPAIR_FUZZ_SAVE to a folder where the shrunk
failing example of each failure is written, to be replayed by `test_saved_regressions`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context

import toolpair
from tests.support.pieces import pieces
from toolpair._api import parse
from toolpair.engine import skeleton
from toolpair.formats import CODECS
from toolpair.formats import _checks as fast
from toolpair.testing.generate import (
    FORMATS,
    PROVIDERS,
    check_repair_properties,
    defective,
    render,
    simple_problems,
)

EXAMPLES = int(os.environ.get("TOOLPAIR_FUZZ", "60"))
SAVE = os.environ.get("TOOLPAIR_FUZZ_SAVE")
REGRESSIONS = Path(__file__).parent / "regressions"
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def check_properties(history: list[Any], fmt: str, provider: str) -> None:
    check_repair_properties(
        history, provider, fmt, simple=lambda out: simple_problems(out, fmt, provider)
    )


#: Generated histories in every wire format, as they come or once repaired (`rendered`).
REPAIRED_OR_NOT = {
    "case": defective(),
    "fmt": st.sampled_from(FORMATS),
    "repaired": st.booleans(),
    "gemini_ids": st.booleans(),
}


def fuzzed(names: Any, values: Any, **strategies: Any) -> Any:
    """A property over generated defective histories in every wire format, for each of
    ``values`` (pytest's parametrize), with the rest drawn from ``strategies``."""

    def wrap(test: Any) -> Any:
        drawn = given(case=defective(), fmt=st.sampled_from(FORMATS), **strategies)
        return pytest.mark.parametrize(names, values)(FUZZ(drawn(test)))

    return wrap


#: Repaired in runs of 1 to 8 exchanges, for every provider.
in_pieces_for_every_provider = fuzzed("provider", PROVIDERS, run=st.sampled_from([1, 2, 3, 8]))


def rendered(
    case: Any,
    fmt: str,
    provider: str,
    *,
    model: str | None = None,
    repaired: bool = False,
    gemini_ids: bool = False,
) -> Any:
    """A generated history in `fmt`, repaired for the provider first when `repaired`."""
    history = render(case[0], fmt, gemini_ids)
    if repaired:
        history = toolpair.repair(history, provider, model=model, format=fmt).messages
    return history


def assert_no_op_verdict_holds(p: Any) -> None:
    # The no-op path may only say "valid" where the full rules find nothing.
    if p.certainly_valid():
        assert p.profile.rules(p.messages, p.ctx) == []


def _save(history: list[Any], fmt: str, provider: str) -> None:
    if not SAVE or not current_build_context().is_final:
        return
    blob = json.dumps({"format": fmt, "provider": provider, "history": history}, indent=1)
    name = hashlib.sha256(blob.encode()).hexdigest()[:12]
    Path(SAVE).mkdir(parents=True, exist_ok=True)
    (Path(SAVE) / f"{name}.json").write_text(blob)


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(case=defective(), fmt=st.sampled_from(FORMATS), gemini_ids=st.booleans())
def test_repair_properties(provider: str, case: Any, fmt: str, gemini_ids: bool) -> None:
    abstract, _defects = case
    history = render(abstract, fmt, gemini_ids)
    try:
        check_properties(history, fmt, provider)
    except AssertionError:
        _save(history, fmt, provider)
        raise


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(case=defective(), fmt=st.sampled_from(FORMATS))
def test_valid_histories_come_back_unchanged(provider: str, case: Any, fmt: str) -> None:
    # Validate and repair agree: no violations means the very same messages back.
    history = render(case[0], fmt)
    if toolpair.validate(history, provider, format=fmt):
        history = toolpair.repair(history, provider, format=fmt).messages
    r = toolpair.repair(history, provider, format=fmt)
    assert r.fixes == []
    assert all(a is b for a, b in zip(r.messages, history, strict=True))


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.json")), ids=lambda p: p.stem)
def test_saved_regressions(path: Path) -> None:
    case = json.loads(path.read_text())
    check_properties(case["history"], case["format"], case["provider"])


#: (format, checker name): every no-op checker a wire codec brings.
CHECKERS = sorted((name, k) for name, c in CODECS.items() for k in c.checks)

FAMILY_CHECKERS = {
    "vertex-ids": ("vertex", "gemini-2.5-flash"),
    "bedrock-claude": ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0"),
    "bedrock-claude4": ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    "moonshot-thinking": ("moonshot", "kimi-k2.6"),
}


@FUZZ
@given(
    case=defective(),
    pair=st.sampled_from(CHECKERS),
    repaired=st.booleans(),
    gemini_ids=st.booleans(),
    batch=st.sampled_from([0, 1, 2, fast._BATCH]),
)
def test_fast_path_never_hides_a_violation(
    case: Any, pair: tuple[str, str], repaired: bool, gemini_ids: bool, batch: int
) -> None:
    # The no-op path may only say "valid" where the full rules find nothing. Small
    # batches make the Anthropic pass check its ids in several of them.
    fmt, checker = pair
    # A family's own checker is reached through a model of that family.
    provider, model = FAMILY_CHECKERS.get(checker, (checker, None))
    history = rendered(case, fmt, provider, model=model, repaired=repaired, gemini_ids=gemini_ids)
    p = parse(history, provider, fmt, {}, model)
    assert p.profile.checker == checker
    full = p.profile.rules(p.messages, p.ctx)
    saved, fast._BATCH = fast._BATCH, batch
    try:
        if p.certainly_valid():
            assert full == []
    finally:
        fast._BATCH = saved


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(
    **REPAIRED_OR_NOT,
    model=st.sampled_from([None, "gemini-2.5-flash", "deepseek-chat"]),
)
def test_no_provider_gets_a_fast_path_that_hides_a_violation(
    provider: str, case: Any, fmt: str, repaired: bool, gemini_ids: bool, model: str | None
) -> None:
    # Every profile reaches a checker by its own name or its API's (`Profile.checker`):
    # hosts and families included, on every wire format, the verdict must hold.
    history = rendered(case, fmt, provider, model=model, repaired=repaired, gemini_ids=gemini_ids)
    assert_no_op_verdict_holds(parse(history, provider, fmt, {}, model))


def test_every_profile_names_a_checker_of_its_api() -> None:
    # DeepSeek once took the full path on every request: its checker was its own name,
    # which no codec knew. A profile with a fast path names one its wire codec knows.
    from toolpair.formats import PROVIDER_FORMATS
    from toolpair.providers import get_profile

    for provider, fmt in PROVIDER_FORMATS.items():
        profile = get_profile(provider)
        if profile.fast_path:
            assert CODECS[fmt].knows(profile.checker), (provider, profile.checker)
    assert get_profile("deepseek").checker == "openai"
    assert get_profile("deepseek-responses").checker == "deepseek-responses"


@in_pieces_for_every_provider
def test_repair_in_pieces_keeps_every_property(
    provider: str, case: Any, fmt: str, run: int
) -> None:
    # Long histories are repaired piece by piece: that path on small ones too.
    history = render(case[0], fmt)
    with pieces(run):
        try:
            check_properties(history, fmt, provider)
        except AssertionError:
            _save(history, fmt, provider)
            raise


#: Model ids whose family has rules of its own, as users write them.
MODELS = [
    ("anthropic", "claude-sonnet-4-5"),
    ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0"),
    ("bedrock", "amazon.nova-pro-v1:0"),
    ("bedrock", "meta.llama3-3-70b-instruct-v1:0"),
    ("bedrock", "mistral.mistral-large-2407-v1:0"),
    ("openai-responses", "gpt-4.1"),
    ("openai-responses", "o3"),
    ("gemini", "gemini-3-pro-preview"),
    ("gemini", "gemini-2.5-flash"),
    ("vertex", "gemini-3-flash"),
    ("deepseek", "deepseek-reasoner"),
    ("deepseek-responses", "deepseek-v4"),
]


def for_every_named_model(**strategies: Any) -> Any:
    return fuzzed(("provider", "model"), MODELS, **strategies)


@for_every_named_model(gemini_ids=st.booleans())
def test_do_no_harm_for_every_model(
    provider: str, model: str, case: Any, fmt: str, gemini_ids: bool
) -> None:
    # What a model accepts comes back as the very same messages; what it refuses is
    # repaired for that model (or reported unrepaired), and a second repair is a no-op.
    history = render(case[0], fmt, gemini_ids)
    if not toolpair.validate(history, provider, model=model, format=fmt):
        r = toolpair.repair(history, provider, model=model, format=fmt)
        assert r.fixes == []
        assert all(a is b for a, b in zip(r.messages, history, strict=True))
        return
    r = toolpair.repair(history, provider, model=model, format=fmt)
    left = {v.code for v in toolpair.validate(r.messages, provider, model=model, format=fmt)}
    assert left == {f.detail[1:].split("]")[0] for f in r.unrepaired}
    again = toolpair.repair(r.messages, provider, model=model, format=fmt)
    assert [f for f in again.fixes if f.kind != "unrepaired"] == []


@for_every_named_model(repaired=st.booleans())
def test_fast_path_never_hides_a_model_violation(
    provider: str, model: str, case: Any, fmt: str, repaired: bool
) -> None:
    history = rendered(case, fmt, provider, model=model, repaired=repaired)
    assert_no_op_verdict_holds(parse(history, provider, fmt, {}, model))


class SkeletonOnly:
    """A wire codec seen as a framework codec: no checker of its own, a skeleton read
    off its decode (`toolpair.engine.skeleton.from_view`), so every no-op verdict comes
    from the rule family's skeleton checker."""

    @staticmethod
    def of(fmt: str) -> Any:
        base = type(CODECS[fmt])

        class Codec(base):  # type: ignore[valid-type,misc]
            name = f"{fmt}-skeleton"
            checks: ClassVar[dict[str, Any]] = {}

            def skeleton(self, messages: Any) -> Any:
                return skeleton.from_view(self.decode(messages))

        return Codec()


SKELETON_CODECS = {fmt: SkeletonOnly.of(fmt) for fmt in FORMATS}


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(
    **REPAIRED_OR_NOT,
    framework=st.booleans(),
    model=st.sampled_from([None, *sorted({m for _, m in MODELS})]),
)
def test_skeleton_checkers_never_hide_a_violation(
    provider: str,
    case: Any,
    fmt: str,
    repaired: bool,
    gemini_ids: bool,
    framework: bool,
    model: str | None,
) -> None:
    # A skeleton checker may only say "valid" where the full rules of the profile find
    # nothing, on every wire format, for every provider and named model, judged as the
    # wire format (``framework`` False) or as a framework's objects would be.
    history = rendered(case, fmt, provider, model=model, repaired=repaired, gemini_ids=gemini_ids)
    p = parse(history, provider, fmt, {}, model)
    if not p.profile.fast_path:
        return
    ctx = dataclasses.replace(p.ctx, format="a-framework") if framework else p.ctx
    sk = skeleton.from_view(p.codec.decode(p.raw))
    if skeleton.check(sk, p.profile.checker, ctx) is True:
        assert p.profile.rules(p.messages, ctx) == []


@in_pieces_for_every_provider
def test_skeleton_repair_in_pieces_keeps_every_property(
    provider: str, case: Any, fmt: str, run: int
) -> None:
    # A codec that reads only a skeleton gets the same repair contract, whole and in
    # pieces (its checkers then judge fragments).
    history = render(case[0], fmt)
    codec = SKELETON_CODECS[fmt]

    def check() -> None:
        check_repair_properties(
            history, provider, codec, simple=lambda out: simple_problems(out, fmt, provider)
        )

    with pieces(run):
        check()
    check()


def test_every_profile_with_a_fast_path_has_a_skeleton_checker() -> None:
    from toolpair.formats import PROVIDER_FORMATS
    from toolpair.providers import get_profile

    for provider in PROVIDER_FORMATS:
        profile = get_profile(provider)
        if profile.fast_path:
            assert profile.checker in skeleton.CHECKERS, (provider, profile.checker)


@FUZZ
@given(
    case=defective(),
    fmt=st.sampled_from(["gemini", "bedrock"]),
    repaired=st.booleans(),
    flags=st.tuples(st.booleans(), st.booleans()),
)
def test_the_plain_loops_agree_with_the_general_ones(
    case: Any, fmt: str, repaired: bool, flags: tuple[bool, bool]
) -> None:
    # The Gemini and Bedrock checkers try a shorter loop over the common shapes first:
    # where it says valid, the general loop says so too.
    history = render(case[0], fmt, True)
    provider = fmt
    if repaired:
        history = toolpair.repair(history, provider, format=fmt).messages
    ctx = parse(history, provider, fmt, {}).ctx
    a, b = flags
    if fmt == "gemini":
        if fast._gemini_plain(history, b):
            assert fast._gemini_loop(history, None, a, b) is True
    else:
        try:
            plain = fast._bedrock(history, ctx, None, a, b)
        except (TypeError, KeyError):
            return  # malformed: the caller's full path names it
        if plain:
            assert fast._bedrock_loop(history, ctx, None, a, b) is True
