"""Read-time repair of every model call's input: the ``call_model_input_filter``, the
model wrapper that sees the server-managed ids, and `with_toolpair` that installs both.

Where the repair runs:

- `with_toolpair` installs a model provider whose models (`ToolpairModel`) receive
  ``previous_response_id`` / ``conversation_id`` on every call, and wraps a ``Model``
  given as ``run_config.model``. For those models the filter only runs the inner filter
  and the model repairs, with the server state known: a lone ``function_call_output``
  whose call lives on the server is then left alone (Responses R8).
- Everywhere else (a ``Model`` object set on the agent, a bare ``ToolpairInputFilter``)
  the filter repairs. The SDK hands filters no server ids (``CallModelData`` holds only
  the input, the agent and the user's context), so the filter reads them from the run
  loop that calls it; when it cannot, the run is not known to be client-managed and
  leading outputs whose call is not in the input are kept (see `_server_state`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agents.models.interface import Model, ModelProvider
from agents.models.openai_responses import OpenAIResponsesModel
from agents.run import CallModelData, ModelInputData, RunConfig, Runner

import toolpair
from toolpair import Policy, Repaired, _api
from toolpair.formats.responses import CALL_TYPES, OUTPUT_TYPES
from toolpair.integrations._base import Guard, Integration, OnRepair, Target, status_of

from ._codec import CHAT_CODEC
from ._detect import detect, known

#: The SDK's items are Responses input items whatever model receives them.
FORMAT = "openai-responses"
#: Profiles for which a server-managed run holds earlier items on the server.
_PENDING = ("vertex", "deepseek", "deepseek-responses")
_SERVER_STATE = ("openai-responses", "deepseek-responses", "portable")


def _target(provider: Any, model: str | None, fallback: Any) -> tuple[str, str | None]:
    """``(profile name, model id)`` for an explicit ``provider`` (a profile name, a model
    string or a ``Model``), else for ``fallback`` (the model the SDK resolves)."""
    if isinstance(provider, str) and (provider in toolpair.PROVIDERS or provider in _PENDING):
        return known(provider), model
    name, detected_model = detect(provider if provider is not None else fallback)
    return known(name), model if model is not None else detected_model


def repair_items(
    items: list[Any],
    provider: str,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    server_state: str | None = None,
    keep_head_outputs: bool = False,
) -> list[Any]:
    """``items`` repaired for ``provider``; the same list when nothing needed changing.
    ``server_state`` is the ``previous_response_id`` or ``conversation_id`` of a
    server-managed run (outputs of server-side calls are then legal).
    ``keep_head_outputs``: the run may be server-managed (it is not known to keep its
    history on the client), so the outputs that open ``items`` and answer no call in
    them are sent as they are, their calls may live on the server; the rest is
    repaired."""
    out: list[Any] = _repaired_items(
        items, provider, model, policy, server_state, keep_head_outputs
    ).messages
    return out


def _repaired_items(
    items: list[Any],
    provider: str,
    model: str | None,
    policy: Policy | None,
    server_state: str | None,
    keep_head_outputs: bool,
) -> Repaired:
    """`repair_items` with its report: ``.messages`` is what `repair_items` returns."""
    if keep_head_outputs and server_state is None and provider in _SERVER_STATE:
        head = _lone_head_outputs(items)
        if head:
            rest = items[head:]
            fixed = _repaired_items(rest, provider, model, policy, None, False)
            if fixed.messages is not rest:
                fixed.messages = [*items[:head], *fixed.messages]
                # The report names indices in the items as sent.
                fixed.fixes = [dataclasses.replace(f, index=f.index + head) for f in fixed.fixes]
            else:
                fixed.messages = items
            return fixed
    ctx: dict[str, Any] = {}
    if server_state is not None and provider in _SERVER_STATE:
        ctx["previous_response_id"] = server_state
    if server_state is None and _SDK_DEDUPES:
        items = _distinct_call_ids(items)
    fmt = CHAT_CODEC if provider == "openai" else FORMAT
    # The common case first, as repair itself starts: one pass, nothing decoded.
    if _api.parse(items, provider, fmt, ctx, model).certainly_valid():
        return Repaired(items, [], {}, provider, _format_name(fmt))
    send_stripped = provider in _RESPONSES and not _SDK_STRIPS_FAKE_IDS
    view, originals, stripped = _as_dicts(items, keep_stripped=send_stripped)
    rep = toolpair.repair(view, provider, model=model, policy=policy, format=fmt, **ctx)
    # What repair could not fix is in its warning; the items go as they were.
    if not rep.changed:
        if stripped and originals is not None:
            rep.messages = [originals.get(id(m), m) for m in view]
        else:
            rep.messages = items
    elif originals is None:
        rep.messages = list(rep.messages)
    else:
        rep.messages = [originals.get(id(m), m) for m in rep.messages]
    return rep


def _format_name(fmt: Any) -> str:
    return fmt if isinstance(fmt, str) else str(getattr(fmt, "name", FORMAT))


class OpenAIAgents(Integration):
    """The OpenAI Agents SDK: Responses input items whatever model receives them."""

    name = "openai_agents"

    def detect(self, model: object) -> Target:
        provider, model_id = detect(model)
        return Target(known(provider), model_id)

    def codec(self, target: Target) -> Any:
        return CHAT_CODEC if target.provider == "openai" else FORMAT

    def repair(
        self,
        messages: Sequence[Any],
        target: Target,
        policy: Policy | None,
        *,
        server_state: str | None = None,
        keep_head_outputs: bool = False,
        **options: Any,
    ) -> Repaired:
        items = messages if isinstance(messages, list) else list(messages)
        return _repaired_items(
            items, target.provider, target.model, policy, server_state, keep_head_outputs
        )


INTEGRATION = OpenAIAgents()


def _field(item: Any, name: str) -> Any:
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)


def _lone_head_outputs(items: list[Any]) -> int:
    """How many items open ``items`` as outputs whose ``call_id`` no call in ``items``
    has (what a server-managed run sends after the server's response called tools)."""
    head = 0
    while head < len(items) and _field(items[head], "type") in OUTPUT_TYPES:
        head += 1
    if not head:
        return 0
    called = {_field(i, "call_id") for i in items if _field(i, "type") in CALL_TYPES}
    n = 0
    while n < head and _field(items[n], "call_id") not in called:
        n += 1
    return n


#: The server-state arguments of the installed SDK's ``Runner.run``.
_SERVER_ARGS = tuple(
    n
    for n in ("previous_response_id", "conversation_id", "auto_previous_response_id")
    if n in inspect.signature(Runner.run).parameters
)
#: The run loop's tracker of server-managed state (0.2.10+); older run loops hold the
#: ids themselves as locals named as ``Runner.run``'s arguments.
_TRACKER = "server_conversation_tracker"
#: How far up the stack the run loop may be: the SDK's filter helper, the turn function
#: and the filter's own frames, with room for a wrapping user filter.
_MAX_FRAMES = 12
#: `_server_state` could not tell.
UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()


def _server_state() -> Any:
    """The ``previous_response_id`` or ``conversation_id`` the SDK will send with the
    model call that is running the filter; None when the run keeps its history on the
    client; `UNKNOWN` when the calling run loop cannot be read.

    The SDK passes filters no server state, but the run loop that calls the filter
    holds it: from 0.2.10 its ``server_conversation_tracker`` (None for a client-managed
    run), in 0.2.8 its ``previous_response_id`` argument. Only an ``agents`` frame that
    holds the tracker, or every server argument the installed ``Runner.run`` takes, is
    believed; anything else (another SDK layout, another Python) is `UNKNOWN`, which
    keeps outputs that may answer server-side calls rather than dropping a real result.
    """
    getframe = getattr(sys, "_getframe", None)
    if getframe is None:
        return UNKNOWN
    frame = getframe(1)
    for _ in range(_MAX_FRAMES):
        if frame is None:
            break
        module = frame.f_globals.get("__name__", "")
        if module == "agents" or module.startswith("agents."):
            local = frame.f_locals
            if _TRACKER in local:
                tracker = local[_TRACKER]
                if tracker is None:
                    return None
                if not all(
                    hasattr(tracker, a) for a in ("previous_response_id", "conversation_id")
                ):
                    return UNKNOWN
                return tracker.previous_response_id or tracker.conversation_id or None
            if _SERVER_ARGS and all(n in local for n in _SERVER_ARGS):
                ids = [local[n] for n in _SERVER_ARGS if n != "auto_previous_response_id"]
                server = next((i for i in ids if i), None)
                if server is None and local.get("auto_previous_response_id"):
                    # Chained ids without a tracker: a layout not seen; do not guess.
                    return UNKNOWN
                return server
        frame = frame.f_back
    return UNKNOWN


def _sdk_dedupes() -> bool:
    try:
        from agents.run_internal import items as sdk_items
    except ImportError:
        return False
    return hasattr(sdk_items, "deduplicate_input_items_preferring_latest")


#: Newer SDKs keep one input item per call id after the filter has run
#: (``deduplicate_input_items_preferring_latest``).
_SDK_DEDUPES = _sdk_dedupes()


def _distinct_call_ids(items: list[Any]) -> list[Any]:
    """A call id that a later call reuses would lose a call and an output on the way out
    (the SDK keeps one item per call id), though both APIs accept the reuse: the later
    call and the output that follows it get a fresh id. The same list when none is
    reused; a server-managed run keeps its ids (the calls live on the server)."""
    seen: set[str] = set()
    taken: set[object] | None = None
    pending: dict[str, str] = {}  # reused id -> the fresh id its next output takes
    out: list[Any] | None = None
    for k, item in enumerate(items):
        if type(item) is not dict:
            continue
        cid = item.get("call_id")
        t = item.get("type")
        if not isinstance(cid, str):
            continue
        if t in CALL_TYPES:
            if cid not in seen:
                seen.add(cid)
                continue
            if taken is None:
                taken = {i.get("call_id") for i in items if type(i) is dict}
            n = 2
            while f"{cid}_{n}" in taken:
                n += 1
            fresh = f"{cid}_{n}"
            taken.add(fresh)
            pending[cid] = fresh
        elif t in OUTPUT_TYPES and cid in pending:
            fresh = pending.pop(cid)
        else:
            continue
        if out is None:
            out = list(items)
        out[k] = {**item, "call_id": fresh}
    return items if out is None else out


#: The id the SDK gives items from models that have no item ids (Chat Completions,
#: LiteLLM); the models strip it before sending, OpenAIResponsesModel only from 0.9 on.
FAKE_ID = "__fake_id__"
_SDK_STRIPS_FAKE_IDS = hasattr(
    OpenAIResponsesModel, "_remove_openai_responses_api_incompatible_fields"
)
_RESPONSES = ("openai-responses", "deepseek-responses")


def _as_dicts(
    items: list[Any], *, keep_stripped: bool = False
) -> tuple[list[Any], dict[int, Any] | None, bool]:
    """The items as the model will send them, for judging: callers may pass the SDK's
    pydantic output items (a ``ResponseFunctionToolCall`` from ``result.new_items``),
    which the SDK dumps, and items from Chat Completions models carry the placeholder
    id ``__fake_id__``, which the SDK strips. Returns the view and, when it differs,
    view item id -> the caller's object, so what repair leaves alone goes back as the
    very object given. ``keep_stripped``: an SDK that sends the placeholder id (before
    0.9) gets the stripped copy sent instead (the Responses API rejects the id)."""
    if all(type(i) is dict and i.get("id") != FAKE_ID for i in items):
        return items, None, False
    view: list[Any] = []
    originals: dict[int, Any] = {}
    kept_stripped = False
    for item in items:
        as_dict = item
        if not isinstance(item, dict):
            dump = getattr(item, "model_dump", None)
            if dump is None:
                view.append(item)  # the codec names it as bad input
                continue
            as_dict = dump(exclude_unset=True, mode="json")
        stripped = as_dict.get("id") == FAKE_ID
        if stripped:
            as_dict = {k: v for k, v in as_dict.items() if k != "id"}
        if stripped and keep_stripped:
            kept_stripped = True
        elif as_dict is not item:
            originals[id(as_dict)] = item
        view.append(as_dict)
    return view, originals, kept_stripped


class ToolpairInputFilter:
    """A ``RunConfig.call_model_input_filter`` that repairs the items about to be sent
    for the provider the agent's model talks to.

    ``provider``: None (detect it from the agent's model on every call), a toolpair
    provider name, a model string (``"litellm/anthropic/claude-sonnet-4-5"``) or a
    ``Model`` object. ``model``: the model id, when detection cannot tell it.
    ``inner``: a filter already in the slot; it runs **first** and its output is
    repaired, so a trimming filter that cuts a pair cannot send it broken.

    In a server-managed run (``previous_response_id=``, ``conversation_id=``,
    ``auto_previous_response_id=True``) outputs whose calls live on the server are left
    alone; the ids are read from the SDK's run loop, and when that cannot be done a
    leading output whose call is not in the input is kept, never dropped.

    Nothing is written back to the session; untouched items are the same objects, and
    when nothing needed a fix the inner filter's ``ModelInputData`` is returned as is.
    """

    def __init__(
        self,
        provider: Any = None,
        *,
        model: str | None = None,
        policy: Policy | None = None,
        inner: Callable[[CallModelData[Any]], Any] | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
    ) -> None:
        self.provider = provider
        self.model = model
        self.policy = policy
        self.inner = inner
        self.on_repair = on_repair
        self.strict = strict
        self.guard = Guard(INTEGRATION, policy=policy, on_repair=on_repair, strict=strict)
        # Set by with_toolpair: the run-level model, and whether models resolved by its
        # provider repair themselves (they see the server-managed ids, the filter does not).
        self._run_model: Any = None
        self._models_repair = False

    def target(self, agent: Any) -> tuple[str, str | None]:
        """``(provider, model id)`` the input for ``agent`` is judged for."""
        model = self._run_model if self._run_model is not None else getattr(agent, "model", None)
        return _target(self.provider, self.model, model)

    def _deferred(self, agent: Any) -> bool:
        """True when the model the SDK resolves for ``agent`` is a `ToolpairModel`, which
        repairs the input itself (mirrors the SDK's own model resolution)."""
        if not self._models_repair:
            return False
        run_model = self._run_model
        if isinstance(run_model, Model):
            return isinstance(run_model, ToolpairModel)
        if isinstance(run_model, str):
            return True
        agent_model = getattr(agent, "model", None)
        if isinstance(agent_model, Model):
            return isinstance(agent_model, ToolpairModel)
        return True

    def __call__(self, data: CallModelData[Any]) -> Any:
        # Read while the SDK's run loop is the caller, before any inner filter awaits.
        server = None if self._deferred(data.agent) else _server_state()
        out: Any = self.inner(data) if self.inner is not None else data.model_data
        if inspect.isawaitable(out):
            return self._finish_later(out, data, server)
        return self._finish(out, data, server)

    async def _finish_later(
        self, pending: Any, data: CallModelData[Any], server: Any
    ) -> ModelInputData:
        return self._finish(await pending, data, server)

    def _finish(self, out: Any, data: CallModelData[Any], server: Any) -> ModelInputData:
        if not isinstance(out, ModelInputData) or not isinstance(out.input, list):
            return out  # the SDK reports a wrong return type itself
        if self._deferred(data.agent):
            return out
        provider, model = self.target(data.agent)
        self.guard.policy = self.policy
        repaired = self.guard.repair(
            out.input,
            target=Target(provider, model),
            server_state=None if server is UNKNOWN else server,
            keep_head_outputs=server is UNKNOWN,
        )
        items = out.input if repaired is None else repaired.messages
        if items is out.input:
            return out
        return ModelInputData(input=items, instructions=out.instructions)


class ToolpairModel(Model):
    """A ``Model`` that repairs its input before the wrapped model sends it. It receives
    ``previous_response_id`` and ``conversation_id``, so in a server-managed run it keeps
    outputs whose calls live on the server. Everything else is the wrapped model's.
    ``on_repair``/``strict`` are the `Guard`'s; with ``record_dir`` each request the
    provider and toolpair disagreed on is recorded (the items are Responses input
    items, the answer is the wrapped model's reply or error)."""

    def __init__(
        self,
        model: Model,
        *,
        provider: Any = None,
        model_id: str | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.toolpair_inner = model
        self._provider = provider
        self._model_id = model_id
        self._policy = policy
        self._target: tuple[str, str | None] | None = None
        self.guard = Guard(
            INTEGRATION,
            policy=policy,
            on_repair=on_repair,
            strict=strict,
            record_dir=record_dir,
        )

    def target(self) -> tuple[str, str | None]:
        if self._target is None:
            self._target = _target(self._provider, self._model_id, self.toolpair_inner)
        return self._target

    def _prepare(self, input: Any, kwargs: dict[str, Any]) -> tuple[Any, Repaired | None]:
        if not isinstance(input, list):
            return input, None
        server = kwargs.get("previous_response_id") or kwargs.get("conversation_id")
        repaired = self.guard.repair(input, target=Target(*self.target()), server_state=server)
        return (input if repaired is None else repaired.messages), repaired

    def _observe(self, sent: Any, repaired: Repaired | None, exc: BaseException | None) -> None:
        if self.guard.recorder is None or not isinstance(sent, list):
            return
        status = 200 if exc is None else status_of(exc)
        if status is not None:
            self.guard.observe({"input": sent}, repaired, status=status, error=exc)

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> Any:
        prepared, repaired = self._prepare(input, kwargs)
        try:
            response = await self.toolpair_inner.get_response(
                system_instructions, prepared, *args, **kwargs
            )
        except Exception as e:
            self._observe(prepared, repaired, e)
            raise
        self._observe(prepared, repaired, None)
        return response

    def stream_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        prepared, _ = self._prepare(input, kwargs)
        return self.toolpair_inner.stream_response(system_instructions, prepared, *args, **kwargs)

    # The rest is the wrapped model's: retry advice, closing, prompt-cache support...
    def get_retry_advice(self, request: Any) -> Any:
        method = getattr(self.toolpair_inner, "get_retry_advice", None)
        return method(request) if method is not None else None

    async def close(self) -> None:
        method = getattr(self.toolpair_inner, "close", None)
        if method is not None:
            await method()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        method = getattr(self.toolpair_inner, "_cleanup_on_run_end", None)
        if method is not None:
            await method(owner)

    def __getattr__(self, name: str) -> Any:
        if name == "toolpair_inner":
            raise AttributeError(name)
        return getattr(self.toolpair_inner, name)

    def __repr__(self) -> str:
        return f"ToolpairModel({self.toolpair_inner!r})"


class ToolpairModelProvider(ModelProvider):
    """Wraps every model another provider resolves in a `ToolpairModel`. A provider that
    hands back the same model object for a name gets the same wrapper back (the SDK's
    per-model bookkeeping then sees one model); one that builds a new model per call
    (as ``OpenAIProvider`` does) gets a new wrapper, and nothing piles up."""

    def __init__(
        self,
        inner: ModelProvider,
        *,
        provider: Any = None,
        model: str | None = None,
        policy: Policy | None = None,
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.toolpair_inner = inner
        self._options = {
            "provider": provider,
            "model_id": model,
            "policy": policy,
            "on_repair": on_repair,
            "strict": strict,
            "record_dir": record_dir,
        }
        self._last: dict[str | None, tuple[Model, ToolpairModel]] = {}

    def get_model(self, model_name: str | None) -> Model:
        resolved = self.toolpair_inner.get_model(model_name)
        if isinstance(resolved, ToolpairModel):
            return resolved
        hit = self._last.get(model_name)
        if hit is not None and hit[0] is resolved:
            return hit[1]
        wrapper = ToolpairModel(resolved, **self._options)
        self._last[model_name] = (resolved, wrapper)
        return wrapper

    async def aclose(self) -> None:
        method = getattr(self.toolpair_inner, "aclose", None)
        if method is not None:
            await method()

    def __getattr__(self, name: str) -> Any:
        if name == "toolpair_inner":
            raise AttributeError(name)
        return getattr(self.toolpair_inner, name)


def with_toolpair(run_config: RunConfig | None = None, **options: Any) -> RunConfig:
    """A copy of ``run_config`` (or a new ``RunConfig``) whose every model call is
    repaired: the given settings are kept, a filter already set runs first (see
    `ToolpairInputFilter`), and models resolved through its model provider repair with
    the run's ``previous_response_id`` / ``conversation_id`` in view, so server-managed
    runs need no flag. ``options``: ``provider``, ``model``, ``policy``, and the `Guard`'s
    ``on_repair``, ``strict`` and ``record_dir`` (recorded by the models, which see the
    provider's answer)."""
    unknown = set(options) - {"provider", "model", "policy", "on_repair", "strict", "record_dir"}
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    rc = run_config if run_config is not None else RunConfig()
    existing = rc.call_model_input_filter
    if isinstance(existing, ToolpairInputFilter):
        if existing._models_repair:
            return rc  # already on
        # A bare ToolpairInputFilter in the slot: take over its settings and inner filter
        # rather than repairing twice.
        options = {
            "provider": existing.provider,
            "model": existing.model,
            "policy": existing.policy,
            "on_repair": existing.on_repair,
            "strict": existing.strict,
            **options,
        }
        existing = existing.inner
    provider = rc.model_provider
    if not isinstance(provider, ToolpairModelProvider):
        provider = ToolpairModelProvider(provider, **options)
    run_model = rc.model
    if isinstance(run_model, Model) and not isinstance(run_model, ToolpairModel):
        run_model = ToolpairModel(
            run_model,
            provider=options.get("provider"),
            model_id=options.get("model"),
            policy=options.get("policy"),
            on_repair=options.get("on_repair"),
            strict=bool(options.get("strict")),
            record_dir=options.get("record_dir"),
        )
    filt = ToolpairInputFilter(
        options.get("provider"),
        model=options.get("model"),
        policy=options.get("policy"),
        inner=existing,
        on_repair=options.get("on_repair"),
        strict=bool(options.get("strict")),
    )
    filt._run_model = run_model
    filt._models_repair = True
    return dataclasses.replace(
        rc, model=run_model, model_provider=provider, call_model_input_filter=filt
    )
