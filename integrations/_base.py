"""What every framework integration declares, and the one per-request step they share.

An integration is a codec for its framework's messages, a hook into the framework (a
history processor, a wrapper model, a plugin, middleware, a patch: that stays its own),
and an `Integration` spec: its name and minimum version (read off the one registry,
``toolpair._frameworks``), how it finds the provider, model and host from the
framework's own objects (`Integration.detect`, through the one `_hosts` table), and how
a history is repaired in its format (`Integration.repair`, whose codec carries the
integration's fast path). The hook hands each request to a `Guard`, which does the rest
the same way in every framework:

- detection, overridden by the user's ``provider=`` / ``model=``;
- the repair, inside ``toolpair.events.scope(source=<integration>)``, so each repaired
  request is reported as exactly one `RepairEvent` (the log line is its rendering);
- ``on_repair``: called with that same event, when and only when it is emitted. A
  callback annotated to take a `Repaired` (the report type these hooks handed over
  before events existed) receives the `Repaired` of that request instead, under the same
  condition;
- an unreadable history (`InvalidHistory`): sent as it is, with one warning on the
  ``toolpair.integrations`` logger, because the integration must never be the reason a
  request fails; ``strict=True`` raises it instead;
- the corpus: with ``record_dir``, a request whose history is in a wire format and whose
  provider answer the hook can see is recorded where toolpair and the provider disagreed
  (`Guard.observe`).

This is sentry's ``Integration`` and OpenTelemetry's ``BaseInstrumentor`` cut to what
toolpair needs: a spec per framework, and one place for everything around the hook.
After them come the few helpers more than one integration needs (a lazy package's
``__getattr__``, the blocks and text several codecs make alike), so each is written once.
"""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import os
import sys
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any, ClassVar

import toolpair
from toolpair import Block, Codec, InvalidHistory, Policy, Repaired, events
from toolpair._frameworks import INTEGRATIONS, Framework
from toolpair.corpus import Recorder
from toolpair.events import RepairEvent

__all__ = ["Guard", "Integration", "OnRepair", "Target", "older_than"]

logger = logging.getLogger("toolpair.integrations")

#: The providers whose rules read which model produced a thought signature (G8).
_SIGNED = frozenset({"gemini"})

#: What ``on_repair`` is called with: the request's `RepairEvent`, or (for a callback
#: annotated to take one) its `Repaired`.
OnRepair = Callable[[RepairEvent], object] | Callable[[Repaired], object]


@dataclass(frozen=True, slots=True)
class Target:
    """What a request is judged for: the provider's rules, the model id as the user wrote
    it (None: the strictest rules of the provider's API), and the host it goes to (for
    the report only)."""

    provider: str = "portable"
    model: str | None = None
    host: str | None = None


class Integration(ABC):
    """The spec of one framework integration. Subclasses set `name` (a key of the
    registry) and implement `detect` and `codec`; `repair` defaults to the core's repair
    in that codec, and an integration with passes of its own overrides it."""

    #: The registry key: the package name under ``toolpair.integrations``, and the
    #: ``source`` of its events.
    name: ClassVar[str]

    @property
    def framework(self) -> Framework:
        return INTEGRATIONS[self.name]

    @property
    def requires(self) -> str:
        """The distribution and its oldest supported release (``"agno>=2.3.8"``)."""
        return self.framework.requires

    @abstractmethod
    def detect(self, model: object) -> Target:
        """The target of a request to the framework's model object ``model`` (None where
        the hook has no model object)."""

    @abstractmethod
    def codec(self, target: Target) -> str | Codec:
        """The format the framework's messages are read in for ``target`` (a codec, or a
        core wire format's name); its ``certainly_valid`` is the integration's fast path."""

    def guard(
        self,
        provider: str | None = None,
        model: str | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
    ) -> Guard:
        """A `Guard` of this integration with a hook's options, in the order the hooks
        take them (the hooks that take them all build their guard here)."""
        return Guard(
            self,
            provider=provider,
            model=model,
            policy=policy,
            on_repair=on_repair,
            strict=strict,
            record_dir=record_dir,
        )

    def signature_models(self, messages: Sequence[Any]) -> Mapping[str, str] | None:
        """The model that produced each thought signature in ``messages``, where the
        framework keeps it beside the signature (``{signature or call id: model}``, the
        core's ``signature_models``); None (the default) where it does not. The `Guard`
        reads it and hands it to `repair`, so a signature of another model is judged
        (Gemini G8) without the user naming the models."""
        return None

    def repair(
        self, messages: Sequence[Any], target: Target, policy: Policy | None, **options: Any
    ) -> Repaired:
        """``messages`` repaired for ``target``; ``options`` are the hook's own knobs, and
        ``signature_models`` (from `signature_models`) where the framework knows them."""
        extra = (
            {"signature_models": options["signature_models"]}
            if "signature_models" in options
            else {}
        )
        return toolpair.repair(
            list(messages),
            target.provider,
            model=target.model,
            policy=policy,
            format=self.codec(target),
            **extra,
        )


def older_than(requires: str) -> str | None:
    """Why the installed framework cannot be used (older than ``requires``'s minimum),
    or None: it is recent enough, or its version cannot be read (a source checkout)."""
    dist, _, minimum = requires.partition(">=")
    try:
        installed = version(dist.strip())
    except PackageNotFoundError:
        return None
    if _release(installed) < _release(minimum.strip()):
        return f"toolpair needs {requires}; {dist.strip()} {installed} is installed"
    return None


#: The integrations whose installed framework has been checked against its minimum.
_CHECKED: set[str] = set()


def _check_version(integration: Integration) -> None:
    """Warn once per process when the installed framework is older than the oldest
    release the integration supports (sentry's minimum-version check, as a warning:
    what breaks on an older release is the framework's hook, which says so itself)."""
    if integration.name in _CHECKED:
        return
    _CHECKED.add(integration.name)
    why = older_than(integration.requires)
    if why is not None:
        logger.warning("toolpair[%s]: %s", integration.name, why)


def _release(v: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in v.split("."):
        digits = "".join(c for c in piece if c.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not piece.isdigit():
            break
    return tuple(parts)


def _wants_repaired(callback: Callable[..., object]) -> bool:
    """Whether ``callback`` is annotated to take a `Repaired` (the callbacks written
    before events existed) rather than a `RepairEvent`."""
    annotation = first_annotation(callback)
    if isinstance(annotation, str):
        try:
            hints = typing.get_type_hints(callback)
        except Exception:
            return annotation.rpartition(".")[2] == "Repaired"
        name = next(iter(inspect.signature(callback).parameters))
        annotation = hints.get(name, annotation)
    return annotation is Repaired


class Guard:
    """The per-request step of every integration: detect, repair, report, and never be
    the reason a request fails.

    ``provider`` / ``model`` override what `Integration.detect` reads off the model;
    ``policy`` is the repair policy; ``on_repair`` is called once per repaired request
    (see the module docstring); ``strict`` raises `InvalidHistory` instead of sending an
    unreadable history as it is; ``record_dir`` (else ``TOOLPAIR_RECORD_DIR``) records
    disagreements with the provider where the hook can see its answer.
    """

    def __init__(
        self,
        integration: Integration,
        *,
        provider: str | None = None,
        model: str | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
        record_per_hour: int = 60,
    ) -> None:
        if provider is not None and provider not in toolpair.PROVIDERS:
            raise ValueError(
                f"unknown provider {provider!r}; known: {', '.join(toolpair.PROVIDERS)}"
            )
        _check_version(integration)
        self.integration = integration
        self.provider = provider
        self.model = model
        self.policy = policy
        self.on_repair = on_repair
        self.strict = strict
        directory = record_dir or os.environ.get("TOOLPAIR_RECORD_DIR") or None
        #: The corpus recorder, when recording.
        self.recorder = Recorder(directory, per_hour=record_per_hour) if directory else None
        #: The report of the latest request (None before the first that could be read).
        self.last: Repaired | None = None
        #: The report of the latest request whose history was changed.
        self.last_changed: Repaired | None = None
        self._legacy = on_repair is not None and _wants_repaired(on_repair)

    def target(self, model: object = None) -> Target:
        """The target of a request to ``model``: detected, then the overrides."""
        found = self.integration.detect(model)
        if self.provider is None and self.model is None:
            return found
        return Target(
            self.provider or found.provider,
            self.model if self.model is not None else found.model,
            found.host,
        )

    def repair(
        self,
        messages: Sequence[Any],
        model: object = None,
        *,
        target: Target | None = None,
        **options: Any,
    ) -> Repaired | None:
        """The repair of one request's ``messages`` for ``model`` (or for ``target``, where
        the hook has refined `target`'s answer); None when the history cannot be read and
        is to be sent as it is (the warning is logged)."""
        target = target or self.target(model)
        if "signature_models" not in options and target.provider in _SIGNED:
            try:
                made_by = self.integration.signature_models(messages)
            except Exception as e:  # reading the framework's record never fails a request
                logger.debug("toolpair[%s]: no signature models: %r", self.integration.name, e)
                made_by = None
            if made_by:
                options["signature_models"] = made_by
        box: list[Repaired] = []
        start = events.clock()
        try:
            with events.scope(
                self.integration.name,
                mode="repair",
                model=target.model,
                host=target.host,
                on_event=None if self.on_repair is None else partial(self._deliver, box),
            ) as s:
                repaired = self.integration.repair(messages, target, self.policy, **options)
                box.append(repaired)
                if repaired.fixes and not s.changed:
                    # The repair ran outside the core's reporting (a hook's own pass):
                    # the scope hears of it here, once.
                    events.report(
                        repaired.fixes,
                        repaired.provider,
                        repaired.format,
                        events.clock() - start,
                        source=self.integration.name,
                        model=target.model,
                    )
        except InvalidHistory as e:
            if self.strict:
                raise
            logger.warning(
                "toolpair[%s]: the history could not be read, sent as it is: %s",
                self.integration.name,
                e,
            )
            return None
        self.last = repaired
        if repaired.changed:
            self.last_changed = repaired
        return repaired

    def _deliver(self, box: list[Repaired], event: RepairEvent) -> None:
        """``on_repair`` with the request's event (or, for a callback annotated to take
        one, its `Repaired`)."""
        if self.on_repair is None:
            return
        if self._legacy and box:
            typing.cast(Callable[[Repaired], object], self.on_repair)(box[0])
        else:
            typing.cast(Callable[[RepairEvent], object], self.on_repair)(event)

    def __call__(self, messages: Sequence[Any], model: object = None) -> list[Any]:
        """The messages to send: the repaired copy, or ``messages`` itself (as a list)
        when nothing changed or the history could not be read."""
        repaired = self.repair(messages, model)
        if repaired is None or not repaired.changed:
            return messages if isinstance(messages, list) else list(messages)
        return list(repaired.messages)

    def observe(
        self,
        sent: Mapping[str, Any],
        repaired: Repaired | None,
        *,
        status: int,
        error: object = None,
        model: object = None,
    ) -> None:
        """Record the request ``sent`` (a body in ``repaired.format``, as the hook holds
        it) if toolpair called it valid and the provider refused it, or the other way
        round. Never raises; does nothing without ``record_dir``."""
        if self.recorder is None or repaired is None:
            return
        try:
            target = self.target(model)
            self.recorder.observe(
                sent,
                provider=repaired.provider,
                model=target.model,
                host=target.host,
                valid=not repaired.unrepaired,
                status=status,
                error=error,
                source=self.integration.name,
                format=repaired.format,
            )
        except Exception as e:  # the request is done: recording must not touch it
            logger.debug("toolpair[%s] could not record a case: %r", self.integration.name, e)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status a provider SDK's error carries (``status_code`` on the Anthropic,
    OpenAI, Mistral and google-genai errors, ``code`` on some; botocore's
    ``ClientError`` keeps it in its response), or None for an error that is not a
    provider's answer."""
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        meta = response.get("ResponseMetadata")
        code = meta.get("HTTPStatusCode") if isinstance(meta, Mapping) else None
        if isinstance(code, int):
            return code
    return None


def lazy_exports(
    package: str, where: Mapping[str, str], made: Mapping[str, tuple[str, str]] | None = None
) -> Callable[[str], Any]:
    """The module ``__getattr__`` of an integration package that imports its framework
    on first use, so that importing the package never does: ``name`` is read from the
    module ``where[name]`` (relative to ``package``), or made by the function
    ``made[name] = (module, function)`` (a class built on the framework's base class),
    and kept in the package so the next lookup is a plain attribute."""
    factories = made or {}

    def __getattr__(name: str) -> Any:
        if name in factories:
            module, function = factories[name]
            value = getattr(importlib.import_module(module, package), function)()
        elif name in where:
            value = getattr(importlib.import_module(where[name], package), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


# ----------------------------------------------------------------- what codecs share


def as_text(value: object) -> str:
    """``value`` as the text a token count or a rendered result reads: a string as it
    is, anything else as JSON (``str`` where JSON cannot hold it)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def first_annotation(fn: Callable[..., object]) -> object:
    """The annotation of ``fn``'s first parameter as written (a string under ``from
    __future__ import annotations``); `inspect.Parameter.empty` where it has none, no
    parameter, or no readable signature. A callback's first annotation says what it is
    handed."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return inspect.Parameter.empty
    return params[0].annotation if params else inspect.Parameter.empty


def native_result(
    part: Mapping[str, Any], index: int, *, sub: str, empty: Callable[[Any], bool]
) -> Block:
    """An Anthropic-native ``tool_result`` block kept in a message's content (LangChain,
    agno) read as the result it is on the wire; ``empty`` is the codec's reading of
    its content."""
    result_id = part.get("tool_use_id")
    if result_id is not None and not isinstance(result_id, str):
        raise InvalidHistory(
            f"tool_result tool_use_id must be a string, got {type(result_id).__name__}", index
        )
    return Block(
        "result",
        part,
        id=result_id,
        is_error=part.get("is_error") is True,
        empty=empty(part.get("content")),
        sub=sub,
    )


def lone_result_home(template: object, kind: type, native: object) -> Any:
    """Where a native ``tool_result`` block answering its call on its own goes back:
    ``template`` (a ``kind`` message whose content held that one result and nothing
    else), or its copy holding ``native`` when the block was rewritten; None when the
    template is not such a message (the caller makes a message of its own). A
    framework that keeps Anthropic's blocks in a user message's content (LangChain,
    agno) keeps the result where it came from, its other fields with it."""
    content = getattr(template, "content", None)
    if not (
        isinstance(template, kind)
        and isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], Mapping)
        and content[0].get("type") == "tool_result"
    ):
        return None
    if content[0] is native:
        return template
    return template.model_copy(update={"content": [native]})  # type: ignore[attr-defined]
