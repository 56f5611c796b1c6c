"""toolpair for LiteLLM: a guardrail that repairs (or rejects) the history of every
deployment attempt, for the provider and model that attempt really goes to.

Proxy (config.yaml)::

    guardrails:
      - guardrail_name: toolpair
        litellm_params:
          guardrail: toolpair.integrations.litellm.ToolpairGuardrail
          mode: pre_call
          default_on: true
          toolpair_mode: repair   # repair | reject | observe

SDK::

    litellm.callbacks = [ToolpairGuardrail()]
    toolpair.integrations.litellm.patch()   # synchronous litellm.completion too

The work is done in ``async_pre_call_deployment_hook``, which LiteLLM calls once per
deployment attempt (the first try, each retry, each fallback) with that deployment's
``model`` and ``custom_llm_provider``; the once-per-request ``pre_call`` hook knows only
the model group, so a failover to a stricter API would go out unrepaired.

- Chat completions, ``/v1/messages`` and ``/v1/responses`` are judged in the format the
  hook sees them (OpenAI chat, Anthropic Messages, Responses items) by the rules of the
  API the attempt reaches. An endpoint with no rules of its own (``hosted_vllm``,
  ``ollama``, an OpenAI-compatible ``api_base``...) gets those of the hosted API whose
  wire format it copies.
- ``reject`` raises a 400 carrying the API's own error envelope: LiteLLM takes it as a
  guardrail intervention, so nothing is sent, and no fallback or cooldown follows.
- ``observe`` only logs, and tags the request's metadata under ``toolpair``.
- Where repair turns thinking off for a request, the thinking parameters are dropped.
- The hook's arguments carry API keys: only fix kinds, indices and ids are ever logged.
- Every repaired, rejected or observed-broken attempt is one `toolpair.events` event
  (source ``litellm``), reported through LiteLLM's own guardrail logging: an entry of the
  standard logging payload's ``guardrail_information``, as LiteLLM's built-in guardrails
  report, so whatever LiteLLM sends to Langfuse, Datadog or OpenTelemetry carries it.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit

import litellm
from litellm.integrations.custom_guardrail import CustomGuardrail

import toolpair
from toolpair import events
from toolpair.corpus import Recorder
from toolpair.gateway import wire
from toolpair.integrations._hosts import LITELLM_PROVIDERS

logger = logging.getLogger("toolpair")


def _release() -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in version("litellm").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return (0,)


_ENVELOPES_PASS = _release() >= (1, 108)

__all__ = ["ToolpairGuardrail", "is_patched", "patch", "unpatch"]

#: Call types judged, with the key of their history and its format.
_CALLS: dict[str, tuple[str, str]] = {
    "completion": ("messages", "openai"),
    "acompletion": ("messages", "openai"),
    "anthropic_messages": ("messages", "anthropic"),
    "aanthropic_messages": ("messages", "anthropic"),
    "responses": ("input", "openai-responses"),
    "aresponses": ("input", "openai-responses"),
}

#: LiteLLM provider -> toolpair rules, for chat completions (what LiteLLM translates the
#: OpenAI-format messages into is that provider's API).
_CHAT_RULES = LITELLM_PROVIDERS
_THINKING_PARAMS = ("thinking", "reasoning_effort")


def _provider_and_model(kwargs: Mapping[str, Any]) -> tuple[str | None, str | None]:
    model = kwargs.get("model")
    model = model if isinstance(model, str) else None
    provider = kwargs.get("custom_llm_provider")
    provider = provider if isinstance(provider, str) and provider else None
    if model and "/" in model:
        prefix, rest = model.split("/", 1)
        if provider is None or prefix == provider:
            provider = provider or prefix
            model = rest
    return provider, model


def _thinking_on(kwargs: Mapping[str, Any]) -> bool:
    t = kwargs.get("thinking")
    if isinstance(t, Mapping):
        return t.get("type") in ("enabled", "adaptive")
    return kwargs.get("reasoning_effort") not in (None, "none", "minimal")


class ToolpairGuardrail(CustomGuardrail):
    """A LiteLLM guardrail (and plain callback) keeping every attempt's history paired.

    ``toolpair_mode``: ``repair`` (default), ``reject`` or ``observe``.
    ``toolpair_rules``: judge every attempt by these rules (``portable`` for a fallback
    chain across APIs), whatever its provider.
    ``lax_rules``: for endpoints with no rules of their own, the rules per format
    (``{"openai": ..., "anthropic": ..., "openai-responses": ...}``); by default those
    of the hosted API the format belongs to.
    ``record_dir`` (or ``TOOLPAIR_RECORD_DIR``): record each attempt where the provider's
    answer and toolpair's verdict on the body it received disagree, as an anonymised case
    (`toolpair.corpus`), at most ``record_per_hour`` (``TOOLPAIR_RECORD_PER_HOUR``, 60).
    """

    def __init__(
        self,
        toolpair_mode: str = "repair",
        toolpair_rules: str | None = None,
        lax_rules: Mapping[str, str] | None = None,
        record_dir: str | os.PathLike[str] | None = None,
        record_per_hour: int | None = None,
        **kwargs: Any,
    ) -> None:
        if toolpair_mode not in wire.MODES:
            raise ValueError(
                f"toolpair_mode must be one of {', '.join(wire.MODES)}, not {toolpair_mode!r}"
            )
        for name in [toolpair_rules, *(lax_rules or {}).values()]:
            if name is not None and name not in toolpair.PROVIDERS:
                raise ValueError(
                    f"unknown toolpair rules {name!r}; known: {', '.join(toolpair.PROVIDERS)}"
                )
        self.toolpair_mode = toolpair_mode
        self.toolpair_rules = toolpair_rules
        self.lax_rules = {**wire.RULES_OF_FORMAT, **(lax_rules or {})}
        self.recorder = _recorder(record_dir, record_per_hour)
        kwargs.setdefault("guardrail_name", "toolpair")
        kwargs.setdefault("default_on", True)
        super().__init__(**kwargs)

    # -- which rules -----------------------------------------------------------------

    def rules_for(self, fmt: str, provider: str | None, model: str | None) -> str:
        """The toolpair rules an attempt in ``fmt`` to ``provider``/``model`` is held to."""
        if self.toolpair_rules is not None:
            return self.toolpair_rules
        claude = model is not None and "claude" in model
        if fmt == "anthropic":
            # Every native /v1/messages path speaks Anthropic's API (Bedrock invoke,
            # Vertex, Azure AI Claude); a compatible endpoint copies it.
            native = provider in ("anthropic", "bedrock", "vertex_ai", "azure_ai")
            return "anthropic" if native or claude else self.lax_rules[fmt]
        if fmt == "openai-responses":
            if provider in ("openai", "azure"):
                return "openai-responses"
            if provider == "deepseek":
                return "deepseek-responses"
            return self.lax_rules[fmt]
        if provider in ("vertex_ai", "vertex_ai_beta") and claude:
            return "anthropic"
        rules = _CHAT_RULES.get(provider or "")
        return rules if rules is not None else self.lax_rules[fmt]

    # -- the hook ----------------------------------------------------------------------

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        name = getattr(call_type, "value", call_type)
        call = _CALLS.get(name) if isinstance(name, str) else None
        if call is None:
            return kwargs
        key, fmt = call
        history = kwargs.get(key)
        if not isinstance(history, list) or not history:
            return kwargs  # a plain string input has nothing to pair
        provider, model = _provider_and_model(kwargs)
        rules = self.rules_for(fmt, provider, model)
        body: dict[str, Any] = {key: history}
        context: dict[str, Any] = {}
        if fmt == "anthropic":
            if kwargs.get("thinking") is not None:
                body["thinking"] = kwargs["thinking"]
            if isinstance(kwargs.get("tools"), list):
                body["tools"] = kwargs["tools"]
        elif fmt == "openai-responses":
            # Outputs whose calls live in a stored response are not orphans.
            for k in ("previous_response_id", "store"):
                if kwargs.get(k) is not None:
                    body[k] = kwargs[k]
        elif rules in ("anthropic", "bedrock", "vertex") and _thinking_on(kwargs):
            context["thinking"] = True
        started = time.time()

        def report(event: events.RepairEvent) -> None:
            self._log_guardrail(kwargs, event, started)

        with events.scope(
            "litellm", mode=self.toolpair_mode, model=model, host=_host(kwargs), on_event=report
        ) as told:
            try:
                if self.toolpair_mode == "repair":
                    self._repair(kwargs, key, fmt, rules, model, body, context, told)
                else:
                    violations = toolpair.validate(body, rules, model=model, format=fmt, **context)
                    if violations:
                        told.rejected(violations, provider=rules, format=fmt)
                        told.add_time(time.time() - started)
                        self._judged(kwargs, fmt, rules, violations)
            except toolpair.InvalidHistory as e:
                # Not a history toolpair can read: the provider answers it in its own
                # words. Only where: the reason can quote the body (a role's value).
                logger.warning(
                    "toolpair could not read a %s history for %s (%s); it goes on as sent",
                    fmt,
                    rules,
                    f"message {e.index}" if e.index is not None else "the container",
                )
        return kwargs

    def _log_guardrail(
        self, request: dict[str, Any], event: events.RepairEvent, started: float
    ) -> None:
        """The event in LiteLLM's own guardrail logging (the standard logging payload's
        ``guardrail_information``), as its built-in guardrails report: whatever LiteLLM
        sends to Langfuse, Datadog, its Prometheus metrics or OpenTelemetry carries it."""
        changed = any(k != "unrepaired" and k != "prefix_binding" for k in event.fixes)
        status = (
            "guardrail_intervened"
            if event.mode == "reject" or (event.mode == "repair" and changed)
            else "guardrail_flagged"
        )
        log = self.add_standard_logging_guardrail_information_to_request_data
        arguments: dict[str, Any] = {
            "guardrail_json_response": event.as_dict(),
            "request_data": request,
            "guardrail_status": status,
            "start_time": started,
            "end_time": started + event.duration,
            "duration": event.duration,
            "guardrail_provider": "toolpair",
        }
        known = _parameters(type(self).add_standard_logging_guardrail_information_to_request_data)
        try:
            log(**{k: v for k, v in arguments.items() if k in known})
        except Exception as e:  # LiteLLM's logging must not fail the request
            logger.debug("toolpair could not add its guardrail information: %r", e)

    def _repair(
        self,
        kwargs: dict[str, Any],
        key: str,
        fmt: str,
        rules: str,
        model: str | None,
        body: dict[str, Any],
        context: dict[str, Any],
        told: events.Scope,
    ) -> None:
        rep = toolpair.repair(body, rules, model=model, format=fmt, **context)
        kinds = {f.kind for f in rep.fixes}
        if (
            fmt == "openai"
            and context.get("thinking")
            and any(".thinking_not_first]" in f.detail for f in rep.unrepaired)
        ):
            # The chat body holds no thinking switch the core could turn off: try the
            # request without thinking, and keep that where it is what makes it valid.
            # The event tells of the attempt that is sent.
            told.reset()
            without = toolpair.repair(body, rules, model=model, format=fmt, thinking=False)
            if not without.unrepaired:
                rep, kinds = without, {*kinds, "thinking_disabled"}
                off = toolpair.Fix("thinking_disabled", len(body[key]) - 1)
                events.report([off], rules, fmt, 0.0, model=model)
            else:
                told.reset()
                events.report(rep.fixes, rules, fmt, 0.0, model=model)
        if rep.changed or "thinking_disabled" in kinds:
            kwargs[key] = rep.messages[key]
        if "thinking_disabled" in kinds:
            for p in _THINKING_PARAMS:
                kwargs.pop(p, None)
        if rep.fixes:
            self._tag(kwargs, {"rules": rules, "fixes": sorted(kinds)})

    def _judged(
        self, kwargs: dict[str, Any], fmt: str, rules: str, violations: list[toolpair.Violation]
    ) -> None:
        self._tag(kwargs, {"rules": rules, "violations": [v.code for v in violations]})
        if self.toolpair_mode == "reject":
            raise _rejection(fmt, violations[0].message)

    # -- learning from the provider's answer (toolpair.corpus) ---------------------------

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._learn(kwargs, 200, None)

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._learn_failure(kwargs)

    def log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._learn(kwargs, 200, None)

    def log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._learn_failure(kwargs)

    def _learn_failure(self, kwargs: Any) -> None:
        if self.recorder is None or not isinstance(kwargs, Mapping):
            return
        exc = kwargs.get("exception")
        status = getattr(exc, "status_code", None)
        # Only the provider's own answer: LiteLLM maps it to an exception naming the
        # provider. A guardrail's refusal (this one's reject mode included) never reached
        # it, and a context window or content policy refusal is not about the history's
        # shape.
        if (
            isinstance(status, int)
            and getattr(exc, "llm_provider", None)
            and type(exc).__name__ not in _NOT_ABOUT_PAIRING
        ):
            self._learn(kwargs, status, _provider_error(exc), sent_only=True)

    def _learn(self, kwargs: Any, status: int, error: object, *, sent_only: bool = False) -> None:
        """Record the attempt if the provider's answer and toolpair's verdict on the body
        it really received (after LiteLLM's own translation) disagree. Runs per attempt,
        in LiteLLM's logging path; never raises."""
        recorder = self.recorder
        if recorder is None or not isinstance(kwargs, Mapping):
            return
        try:
            judged = self._judge_sent(kwargs, sent_only)
            if judged is None:
                return
            sent, rules, model, fmt, valid = judged
            params = kwargs.get("litellm_params")
            base = params.get("api_base") if isinstance(params, Mapping) else None
            recorder.observe(
                sent,
                provider=rules,
                model=model,
                host=base if isinstance(base, str) else None,
                valid=valid,
                status=status,
                error=error,
                source="litellm",
                format=fmt,
            )
        except Exception as e:  # the request is done: recording must not touch it
            logger.debug("toolpair could not judge a LiteLLM attempt for the corpus: %r", e)

    def _judge_sent(
        self, kwargs: Mapping[str, Any], sent_only: bool = False
    ) -> tuple[dict[str, Any], str, str | None, str | None, bool] | None:
        name = kwargs.get("call_type")
        name = getattr(name, "value", name)
        call = _CALLS.get(name) if isinstance(name, str) else None
        if call is None:
            return None
        key, fmt = call
        provider = kwargs.get("custom_llm_provider")
        provider = provider if isinstance(provider, str) and provider else None
        model = kwargs.get("model") if isinstance(kwargs.get("model"), str) else None
        rules = self.rules_for(fmt, provider, model)
        extra = kwargs.get("additional_args")
        sent = extra.get("complete_input_dict") if isinstance(extra, Mapping) else None
        if isinstance(sent, str):
            try:
                sent = json.loads(sent)
            except ValueError:
                sent = None
        if isinstance(sent, dict):
            # The provider's own body, judged in its own format by its own rules.
            try:
                valid = not toolpair.validate(sent, rules, model=model)
                return sent, rules, model, None, valid
            except (toolpair.ToolpairError, TypeError):
                pass  # a body in a format the rules do not speak: judge the hook's view
        elif sent_only:
            return None  # no body went out
        history = kwargs.get(key)
        if not isinstance(history, list) or not history:
            return None
        body = {key: history}
        try:
            valid = not toolpair.validate(body, rules, model=model, format=fmt)
        except toolpair.ToolpairError:
            return None
        return body, rules, model, fmt, valid

    @staticmethod
    def _tag(kwargs: dict[str, Any], info: dict[str, Any]) -> None:
        for k in ("metadata", "litellm_metadata"):
            meta = kwargs.get(k)
            if isinstance(meta, dict):
                meta["toolpair"] = info
                return


def _host(kwargs: Mapping[str, Any]) -> str | None:
    """The host an attempt goes to, where the deployment names its ``api_base``."""
    base = kwargs.get("api_base")
    if not isinstance(base, str):
        params = kwargs.get("litellm_params")
        base = params.get("api_base") if isinstance(params, Mapping) else None
    return urlsplit(base).hostname if isinstance(base, str) else None


@functools.cache
def _parameters(method: Callable[..., Any]) -> frozenset[str]:
    """The keyword arguments this LiteLLM release's guardrail logging takes (they grew
    over releases)."""
    return frozenset(inspect.signature(method).parameters)


#: LiteLLM's 400s that are about the request's size or content, not its history's shape.
_NOT_ABOUT_PAIRING = frozenset({"ContextWindowExceededError", "ContentPolicyViolationError"})


def _recorder(directory: str | os.PathLike[str] | None, per_hour: int | None) -> Recorder | None:
    """The corpus recorder: ``record_dir`` (a guardrail parameter), else the environment's
    ``TOOLPAIR_RECORD_DIR``; ``record_per_hour`` else ``TOOLPAIR_RECORD_PER_HOUR`` else 60."""
    directory = directory or os.environ.get("TOOLPAIR_RECORD_DIR") or None
    if directory is None:
        return None
    if per_hour is None:
        per_hour = int(os.environ.get("TOOLPAIR_RECORD_PER_HOUR") or 60)
    return Recorder(directory, per_hour=int(per_hour))


def _provider_error(exc: object) -> object:
    """The provider's error body inside a LiteLLM exception (``AnthropicException -
    {...}``), parsed when it is JSON; else LiteLLM's message without its own additions."""
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) else str(exc)
    start = text.find("{")
    if start >= 0:
        try:
            parsed, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    text = text.split("\n\nLiteLLM:", 1)[0]
    return text.split(" - ", 1)[1] if " - " in text else text


def _rejection(fmt: str, message: str) -> Exception:
    """A 400 LiteLLM counts as a guardrail intervention (no fallback, no cooldown)."""
    try:
        from fastapi import HTTPException
    except ImportError:  # the SDK without the proxy extra
        from litellm.exceptions import GuardrailRaisedException

        return GuardrailRaisedException(guardrail_name="toolpair", message=message)
    # The proxy wraps the detail in the endpoint's own envelope. From 1.108 on, an
    # Anthropic envelope passes through /v1/messages whole; the OpenAI routes (and every
    # route of older releases, which print a dict detail as its repr) take the text.
    whole = fmt == "anthropic" and _ENVELOPES_PASS
    detail: Any = wire.error_envelope(fmt, message) if whole else message
    return HTTPException(status_code=400, detail=detail)


# -- the synchronous SDK path --------------------------------------------------------
#
# LiteLLM runs ``async_pre_call_deployment_hook`` only on its async path (``acompletion``,
# ``Router.acompletion``, the proxy); synchronous ``litellm.completion`` runs no hook that
# may change the request before the provider's transformation (``log_pre_api_call``
# sees the messages after it). `patch` wraps ``litellm.completion`` itself, which
# ``Router.completion`` calls once per deployment attempt with that deployment's
# parameters, so retries and fallbacks are judged as on the async path.

_patch_lock = threading.Lock()
_ORIGINAL = "__toolpair_original__"


def _finish(hook: Any) -> Any:
    """Run a guardrail hook coroutine to its end here, without an event loop: the hook
    awaits nothing that needs one, so this costs no loop and works from inside a
    running loop's thread as well as from plain synchronous code."""
    try:
        while True:
            if hook.send(None) is not None:
                hook.close()
                raise RuntimeError(
                    "ToolpairGuardrail's hook awaited an event loop: it cannot run on the "
                    "synchronous litellm.completion path"
                )
    except StopIteration as done:
        return done.value


def _guarded(original: Callable[..., Any]) -> Callable[..., Any]:
    # Positional arguments (``completion("gpt-4o", messages)``) are named so that the
    # hook sees them, as LiteLLM's own async path does.
    names = [
        p.name
        for p in inspect.signature(original).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]

    @functools.wraps(original)
    def completion(*args: Any, **kwargs: Any) -> Any:
        guards = [cb for cb in litellm.callbacks if isinstance(cb, ToolpairGuardrail)]
        # ``acompletion`` runs its own hook before it reaches completion.
        if not guards or kwargs.get("acompletion"):
            return original(*args, **kwargs)
        if len(args) > len(names):
            return original(*args, **kwargs)  # not a call LiteLLM itself would take
        request = dict(kwargs)
        request.update(zip(names, args, strict=False))
        for guard in guards:
            out = _finish(guard.async_pre_call_deployment_hook(request, "completion"))
            if out is not None:
                request = out
        return original(**request)

    setattr(completion, _ORIGINAL, original)
    return completion


def patch() -> None:
    """Repair synchronous ``litellm.completion`` calls (and so ``Router.completion``,
    which calls it for every attempt) as the async path is: every `ToolpairGuardrail`
    in ``litellm.callbacks`` judges each attempt's history before LiteLLM builds the
    request. Idempotent and thread-safe; `unpatch` reverses it. Code that took
    ``from litellm import completion`` before the patch keeps the unpatched function."""
    with _patch_lock:
        if not is_patched():
            litellm.completion = _guarded(litellm.completion)


def unpatch() -> None:
    """Put back the ``litellm.completion`` `patch` replaced. Idempotent and thread-safe."""
    with _patch_lock:
        original = getattr(litellm.completion, _ORIGINAL, None)
        if original is not None:
            litellm.completion = original


def is_patched() -> bool:
    """Whether `patch` is in effect."""
    return getattr(litellm.completion, _ORIGINAL, None) is not None
