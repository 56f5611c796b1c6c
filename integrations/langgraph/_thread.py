"""Unstick a checkpointed LangGraph thread: inspect its latest checkpoint and, when the
history it holds would be rejected, write the smallest fix through the graph's own
``update_state`` so the next ``invoke`` runs.

The history is read from ``get_state()``, which includes the results tools already
returned in an unfinished step (pending writes): those are written back, never re-run.
A call whose result a later step discarded (new input sent while the run was paused) is
looked up in the earlier checkpoints' task results before it is answered with the
neutral error result. The update is made ``as_node`` the tool node, so the graph's own
edges send it to the model next, never back into the ToolNode (which would re-run every
call of the turn). A parent graph without a ToolNode whose state names its
``active_agent`` (langgraph-swarm's ``create_swarm``) is updated as that agent's node:
the agents are subgraphs without checkpointers of their own, so the conversation lives in
the parent's ``messages`` and only a task in flight has a subgraph checkpoint. Each write
is a new checkpoint; the old one stays for time travel.

A tool step the checkpoint holds as still to run (a run stopped after the model, or
cancelled while a ToolNode ran its batch as one task, which stores nothing until every
call returns) is LangGraph's to resume: ``invoke`` re-runs the whole step. It is reported
as `PENDING_TOOL_CALLS`, and answered with the error result only when asked
(``cancel_pending_tools=True``).
"""

from __future__ import annotations

from asyncio import CancelledError
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError as FutureCancelled
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage

from toolpair import Fix, Policy, ToolpairError, Violation

from ._common import ProviderLike, model_id, repair_list, rules_for, validate_list, writing_rules

#: ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` (langgraph >= 0.3.23) clears the list
#: before the messages that follow it are added.
REMOVE_ALL = "__remove_all__"
#: The rules a thread is held to when no provider is named: Chat Completions', which are
#: the pairing rules of LangGraph's own message list (each call answered by one
#: ToolMessage right after its AIMessage, no result without its call, no duplicates).
#: Provider-specific layout (Mistral's call ids, Bedrock's bridge turns) is left to
#: read time (`repair_hook`, ``ToolpairMiddleware``) unless a provider is named.
DEFAULT_PROVIDER = "openai"
#: How many earlier checkpoints are searched for the result of a call whose result the
#: latest checkpoint lost.
HISTORY_LIMIT = 64
#: The state key a multi-agent parent (langgraph-swarm) names its current agent in.
ACTIVE_AGENT = "active_agent"
#: The `Violation` code `check_thread` reports a tool step under that the checkpoint
#: holds as still to run and no static ``interrupt_before`` explains. Not a provider
#: rule: nothing is rejected yet, but the next ``invoke`` runs every call of the step
#: again, including one that had finished when the run stopped (a batch run as one task
#: stores no result until all of them return).
PENDING_TOOL_CALLS = "pending_tool_calls"


class InterruptPending(ToolpairError):
    """The thread is paused on an ``interrupt()`` (an approval, a question): a repair
    would discard it. Nothing was written: resume the interrupt with
    ``Command(resume=...)``, or call again with ``cancel_interrupts=True``."""

    def __init__(self, interrupts: Sequence[Any], config: Mapping[str, Any]) -> None:
        self.interrupts = list(interrupts)
        self.config = dict(config)
        thread = (config.get("configurable") or {}).get("thread_id")
        super().__init__(
            f"thread {thread!r} has {len(self.interrupts)} pending interrupt(s); nothing was "
            "written. Resume with Command(resume=...), or pass cancel_interrupts=True to "
            "discard the interrupt(s) and answer their calls with the error result"
        )


class NoToolNode(ToolpairError, ValueError):
    """The graph has no ToolNode to make the update as, and no ``as_node`` was given.
    Nothing was written."""

    def __init__(self, message: str = "") -> None:
        super().__init__(
            message
            or "no ToolNode found in this graph and no active_agent in its state: pass "
            "as_node= (a node whose edges lead to the model, never into a node that runs "
            "tools); nothing was written"
        )


class UnknownActiveAgent(NoToolNode):
    """The state's ``active_agent`` names no node of the graph (a renamed or removed
    agent), so there is no node to make the update as. Nothing was written."""

    def __init__(self, agent: Any, nodes: Sequence[str]) -> None:
        self.agent = agent
        self.nodes = list(nodes)
        super().__init__(
            f"the state's {ACTIVE_AGENT}={agent!r} names no node of this graph (nodes: "
            f"{', '.join(self.nodes)}): pass as_node= (a node whose edges lead to the "
            "model); nothing was written"
        )


@dataclass
class ThreadRepair:
    """What `repair_thread` found and wrote for one thread (and its subgraphs).

    ``fixes``: toolpair's fixes to the history (kind, message index, ids), empty for a
    healthy thread. ``written``: the ``messages`` update passed to ``update_state``
    (empty when nothing was written, or in a dry run): either the tail to append or, when
    a message had to go in or out mid-history, ``RemoveMessage(REMOVE_ALL)`` and the whole
    repaired list. ``checkpoint_id``: the new checkpoint (None when nothing was written);
    ``previous_checkpoint_id``: the one it supersedes, still there for time travel.
    ``recovered``: call ids whose real result was found in an earlier checkpoint and kept.
    ``provider`` and ``model``: the rules the history was held to.
    """

    config: dict[str, Any]
    provider: str = ""
    model: str | None = None
    fixes: list[Fix] = field(default_factory=list)
    messages: list[BaseMessage] = field(default_factory=list)
    written: list[BaseMessage] = field(default_factory=list)
    mode: str = "none"  # "none", "append" or "rewrite"
    as_node: str | None = None
    checkpoint_id: str | None = None
    previous_checkpoint_id: str | None = None
    recovered: tuple[str, ...] = ()
    cancelled_interrupts: int = 0
    dry_run: bool = False
    subgraphs: list[ThreadRepair] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the thread needed (or, in a dry run, would need) a write."""
        return self.mode != "none" or any(s.changed for s in self.subgraphs)

    def __str__(self) -> str:
        lines = [f"{self.mode}: {len(self.fixes)} fix(es)"]
        lines += [f"  {f}" for f in self.fixes]
        lines += [f"  subgraph {s.config.get('configurable', {})}: {s}" for s in self.subgraphs]
        return "\n".join(lines)


# ----------------------------------------------------------------------------- reading


def _values(snapshot: Any) -> Any:
    return getattr(snapshot, "values", None) or {}


def _messages(snapshot: Any, key: str) -> list[BaseMessage]:
    values = _values(snapshot)
    found = values.get(key) if isinstance(values, Mapping) else getattr(values, key, None)
    return list(found or [])


def _interrupts(snapshot: Any) -> list[Any]:
    # StateSnapshot.interrupts exists from langgraph 0.4; before that only the tasks
    # carry them.
    found = getattr(snapshot, "interrupts", None)
    if found is not None:
        return list(found)
    return [i for t in getattr(snapshot, "tasks", ()) for i in (getattr(t, "interrupts", ()) or ())]


def _existing(snapshot: Any, config: Mapping[str, Any]) -> Any:
    """``snapshot``, or `LookupError` when the thread has no checkpoint (LangGraph gives
    an empty snapshot for any thread id, a mistyped one included)."""
    if getattr(snapshot, "created_at", None) is None and not getattr(snapshot, "metadata", None):
        conf = config.get("configurable") or {}
        where = f"thread {conf.get('thread_id')!r}"
        if conf.get("checkpoint_ns"):
            where += f" (namespace {conf['checkpoint_ns']!r})"
        if conf.get("checkpoint_id"):
            where += f" at checkpoint {conf['checkpoint_id']!r}"
        raise LookupError(
            f"{where} has no checkpoint in this graph's checkpointer: nothing was read or "
            "written (check the thread_id, and that the graph was compiled with the "
            "checkpointer that holds it)"
        )
    return snapshot


def _for_writing(provider: ProviderLike) -> ProviderLike:
    return None if provider is None else writing_rules(provider, DEFAULT_PROVIDER)


def _is_snapshot(value: Any) -> bool:
    return hasattr(value, "values") and hasattr(value, "next") and hasattr(value, "tasks")


def tool_nodes(graph: Any) -> list[str]:
    """The names of the graph's prebuilt ToolNodes (the node named ``tools`` when none
    can be told by type)."""
    from langgraph.prebuilt import ToolNode

    nodes = getattr(graph, "nodes", {}) or {}
    names = [n for n, spec in nodes.items() if isinstance(getattr(spec, "bound", None), ToolNode)]
    if not names and "tools" in nodes:
        names = ["tools"]
    return names


def _agent_node(snapshot: Any, graph: Any) -> str | None:
    """The node of the agent the state names as active (a swarm parent), or None when
    the state names none; `UnknownActiveAgent` when it names no node of ``graph``."""
    values = _values(snapshot)
    agent = values.get(ACTIVE_AGENT) if isinstance(values, Mapping) else None
    if agent is None:
        return None
    nodes = [n for n in (getattr(graph, "nodes", {}) or {}) if not n.startswith("__")]
    if agent not in nodes:
        raise UnknownActiveAgent(agent, nodes)
    return str(agent)


def _planned_pause(graph: Any, tools: Sequence[str]) -> bool:
    """Whether the graph was compiled to stop before its tool node (a human reviews the
    calls first): a pending tool step there is the pause, not an interrupted run. An
    ``interrupt_before`` passed to ``invoke`` leaves no trace in the checkpoint."""
    before = getattr(graph, "interrupt_before_nodes", None) or ()
    return before == "*" or "*" in before or bool(set(before) & set(tools))


def _checkpoint_id(config: Mapping[str, Any] | None) -> str | None:
    if not config:
        return None
    value = (config.get("configurable") or {}).get("checkpoint_id")
    return value if isinstance(value, str) else None


def _thread_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without its checkpoint id: the whole thread (a checkpoint id would make
    the history listing return that one checkpoint)."""
    conf = {k: v for k, v in (config.get("configurable") or {}).items() if k != "checkpoint_id"}
    return {**config, "configurable": conf}


def _answered(messages: Iterable[BaseMessage]) -> set[str]:
    return {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}


def _results_in(value: Any) -> Iterator[ToolMessage]:
    """The ToolMessages in a task's result (a state update: dict, list, Command...)."""
    if isinstance(value, ToolMessage):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _results_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _results_in(item)
    elif hasattr(value, "update"):  # a Command
        yield from _results_in(getattr(value, "update", None))


def _calls_in(messages: Iterable[BaseMessage]) -> set[str]:
    return {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}


def _found_results(snapshots: Iterable[Any], wanted: set[str], key: str) -> list[ToolMessage]:
    """The results for ``wanted`` call ids that earlier steps' tool tasks returned (their
    pending writes, which new input or a new checkpoint discarded), newest first. Results
    that were committed and later deleted on purpose are not brought back. The search
    stops at the first checkpoint that holds none of the calls: results come after."""
    found: dict[str, ToolMessage] = {}
    for snap in snapshots:
        if not wanted & _calls_in(_messages(snap, key)):
            break
        for m in _results_in([getattr(t, "result", None) for t in snap.tasks]):
            if m.tool_call_id in wanted and m.tool_call_id not in found:
                found[m.tool_call_id] = m
        if len(found) == len(wanted):
            break
    return list(found.values())


# ----------------------------------------------------------------------------- planning


@dataclass
class _Plan:
    report: ThreadRepair
    missing: set[str]
    update: dict[str, Any] | None = None


def _policy(policy: Policy | None, keep_trailing: bool) -> Policy | None:
    return replace(policy or Policy(), trailing="keep") if keep_trailing else policy


def _awaiting_tools(snapshot: Any, tools: Sequence[str]) -> bool:
    """Whether the latest step is the tool node about to run (a static
    ``interrupt_before``, or a run stopped right after the model) rather than stuck:
    ``invoke(None)`` would run the calls, so they are not dangling yet."""
    tasks = [t for t in getattr(snapshot, "tasks", ()) if t.name in tools]
    if not tasks or any(_failed(getattr(t, "error", None)) for t in tasks):
        return False
    return bool(set(getattr(snapshot, "next", ())) & set(tools))


def _failed(error: Any) -> bool:
    """Whether a task's stored error is a failure rather than a cancellation: an async
    run cancelled mid-step stores ``CancelledError`` for the tasks still running (the
    checkpointer may hold only its repr), and the next ``invoke`` runs them again."""
    if error is None or isinstance(error, CancelledError | FutureCancelled):
        return False
    return not (isinstance(error, str) and error.startswith("CancelledError("))


def _plan(
    snapshot: Any,
    graph: Any,
    provider: ProviderLike,
    *,
    model: str | None,
    policy: Policy | None,
    cancel_interrupts: bool,
    cancel_pending_tools: bool,
    key: str,
    as_node: str | None,
    extra: Sequence[ToolMessage] = (),
    recovered: tuple[str, ...] = (),
) -> _Plan:
    config = dict(snapshot.config or {})
    rules = DEFAULT_PROVIDER if provider is None else provider
    report = ThreadRepair(
        config,
        provider=rules_for(rules),
        model=model if model is not None else model_id(rules),
        previous_checkpoint_id=_checkpoint_id(config),
    )
    messages = _messages(snapshot, key)
    interrupts = _interrupts(snapshot)
    tools = tool_nodes(graph)
    if interrupts and not cancel_interrupts:
        raise InterruptPending(interrupts, config)
    keep_trailing = not (cancel_interrupts or cancel_pending_tools) and _awaiting_tools(
        snapshot, tools
    )
    head, tail = messages, []
    last = _last_ai(messages)
    if keep_trailing and last >= 0 and last == len(messages) - 1 - _trailing_results(messages):
        # The calls that finished in the pending step (one task per call) sit after
        # their turn; set aside, the turn is the last one again and its other calls
        # stay pending for the resume to run.
        head, tail = messages[: last + 1], messages[last + 1 :]
    result = repair_list(
        [*head, *extra], rules, model=report.model, policy=_policy(policy, keep_trailing)
    )
    if not result.changed:
        return _Plan(report, set())
    fixed = [*result.messages, *tail]
    report.fixes = list(result.fixes)
    report.messages = fixed
    report.recovered = recovered
    report.cancelled_interrupts = len(interrupts)
    missing = {i for f in result.fixes if f.kind == "synthetic_result" for i in f.ids}
    node = as_node or (tools[0] if tools else None) or _agent_node(snapshot, graph)
    if node is None:
        raise NoToolNode()
    report.as_node = node
    if (
        len(fixed) >= len(messages)
        and all(a is b for a, b in zip(fixed, messages, strict=False))
        and not extra
    ):
        # Only additions after the history: re-send the latest turn's results (those the
        # unfinished step holds as pending writes are not in the checkpoint yet; the
        # committed ones keep their place, as add_messages replaces by id) and the rest.
        start = _last_ai(messages) + 1
        report.mode = "append"
        report.written = fixed[start:]
    else:
        report.mode = "rewrite"
        report.written = [RemoveMessage(id=REMOVE_ALL), *fixed]
    return _Plan(report, missing, {key: report.written})


def _last_ai(messages: Sequence[BaseMessage]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            return i
    return -1


# ----------------------------------------------------------------------------- sync


def _subgraph(graph: Any, name: str) -> Any:
    try:
        return dict(graph.get_subgraphs()).get(name)
    except Exception:
        return None


def _repair_one(
    root: Any, graph: Any, snapshot: Any, provider: ProviderLike, opts: dict[str, Any]
) -> ThreadRepair:
    # ``as_node`` names a node of the graph it was given for; a subgraph is updated as
    # its own ToolNode.
    inner = {**opts, "as_node": None}
    subs = [
        _repair_one(root, _subgraph(graph, t.name), t.state, provider, inner)
        for t in snapshot.tasks
        if _is_snapshot(getattr(t, "state", None)) and _subgraph(graph, t.name) is not None
    ]
    plan = _plan(snapshot, graph, provider, **_plan_opts(opts))
    if plan.missing:
        history = root.get_state_history(
            _thread_config(snapshot.config), limit=opts["history_limit"]
        )
        plan = _with_recovered(plan, history, snapshot, graph, provider, opts)
    report = _report(plan, subs, opts)
    if plan.update is not None and not opts["dry_run"]:
        new = root.update_state(snapshot.config, plan.update, as_node=report.as_node)
        report.checkpoint_id = _checkpoint_id(new)
    return report


def _plan_opts(opts: dict[str, Any]) -> dict[str, Any]:
    return {
        k: opts[k]
        for k in (
            "model",
            "policy",
            "cancel_interrupts",
            "cancel_pending_tools",
            "key",
            "as_node",
        )
    }


def _options(**kw: Any) -> dict[str, Any]:
    return kw


def _with_recovered(
    plan: Any, history: Any, snapshot: Any, graph: Any, provider: Any, opts: dict[str, Any]
) -> Any:
    """The plan again with the results an earlier checkpoint still holds for the calls
    it would answer with errors (a tool that ran is never run twice); the same plan
    when there are none."""
    found = _found_results(history, plan.missing, opts["key"])
    if not found:
        return plan
    return _plan(
        snapshot,
        graph,
        provider,
        **_plan_opts(opts),
        extra=found,
        recovered=tuple(m.tool_call_id for m in found),
    )


def _report(plan: Any, subs: Any, opts: dict[str, Any]) -> Any:
    report = plan.report
    report.subgraphs = subs
    report.dry_run = opts["dry_run"]
    return report


def repair_thread(
    graph: Any,
    config: Mapping[str, Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    dry_run: bool = False,
    cancel_interrupts: bool = False,
    cancel_pending_tools: bool = False,
    as_node: str | None = None,
    messages_key: str = "messages",
    history_limit: int = HISTORY_LIMIT,
) -> ThreadRepair:
    """Repair the thread ``config`` names so its next ``invoke`` sends a valid history.

    ``provider``: a provider name or the chat model the graph calls (its rules and model
    id apply); None holds it to the pairing rules of LangGraph's message list (those of
    OpenAI Chat Completions), leaving provider-specific layout to read time. ``model``:
    the model id, when ``provider`` is a name. ``policy``: `toolpair.Policy` (wording of
    the error result, ``orphans="text"`` to keep a result with no call as text).

    Paused threads: a thread waiting on an ``interrupt()`` (an approval, a question) is
    refused with `InterruptPending` and nothing is written, dry run or not, unless
    ``cancel_interrupts=True``: then the paused calls get the error result and the
    interrupts are discarded. A thread stopped right before its tool node (a static
    ``interrupt_before``, a run cancelled after the model step) is not stuck, since
    ``invoke(None)`` runs the calls: its pending calls are left alone unless
    ``cancel_interrupts=True`` or ``cancel_pending_tools=True``.

    Interrupted tool batches: a run stopped while its ToolNode ran the calls as one task
    keeps no result, not even of a call that finished; LangGraph's resume runs the whole
    step again, and by default that is left to it. ``cancel_pending_tools=True`` answers
    every call of the pending step with the error result instead (keeping a result the
    checkpoint's pending writes hold), so the next ``invoke`` goes to the model and runs
    none of them again. Pending interrupts still need ``cancel_interrupts=True``.

    Returns a `ThreadRepair`; ``dry_run=True`` only reports. Subgraphs paused inside the
    thread are repaired too (``report.subgraphs``). ``as_node``: the node the update is
    made as; by default the graph's ToolNode, else the node of the agent the state names
    in ``active_agent`` (a langgraph-swarm parent; `UnknownActiveAgent` when it names
    none). It must lead to the model.
    """
    snapshot = _existing(graph.get_state(dict(config), subgraphs=True), config)
    provider = _for_writing(provider)
    opts = _options(
        model=model,
        policy=policy,
        cancel_interrupts=cancel_interrupts,
        cancel_pending_tools=cancel_pending_tools,
        key=messages_key,
        as_node=as_node,
        dry_run=dry_run,
        history_limit=history_limit,
    )
    return _repair_one(graph, graph, snapshot, provider, opts)


def _judge(
    snapshot: Any, graph: Any, provider: ProviderLike, model: str | None, key: str
) -> list[Violation]:
    messages = _messages(snapshot, key)
    violations = validate_list(
        messages, DEFAULT_PROVIDER if provider is None else provider, model=model
    )
    tools = tool_nodes(graph)
    awaiting = _awaiting_tools(snapshot, tools)
    if _interrupts(snapshot) or awaiting:
        # The latest turn's calls are about to run (or wait on a human): not dangling.
        last = _last_ai(messages)
        pending: set[str] = set()
        if last >= 0 and last == len(messages) - 1 - _trailing_results(messages):
            pending = {c["id"] for c in messages[last].tool_calls} - _answered(messages)
        violations = [v for v in violations if not (v.ids and set(v.ids) <= pending)]
        if awaiting and pending and not _interrupts(snapshot) and not _planned_pause(graph, tools):
            ids = tuple(c["id"] for c in messages[last].tool_calls if c["id"] in pending)
            violations.append(
                Violation(
                    PENDING_TOOL_CALLS,
                    f"the tool step of messages.{last} is still to run ({len(ids)} call(s) "
                    "without a result): the next invoke runs all of them again, including "
                    "any that finished before the run stopped; repair_thread(..., "
                    "cancel_pending_tools=True) answers them with the error result instead",
                    last,
                    ids,
                )
            )
    return violations


def _trailing_results(messages: Sequence[BaseMessage]) -> int:
    n = 0
    for m in reversed(messages):
        if not isinstance(m, ToolMessage):
            break
        n += 1
    return n


def check_thread(
    graph: Any,
    config: Mapping[str, Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    messages_key: str = "messages",
) -> list[Violation]:
    """What ``provider`` would reject in the thread's current history (with the results
    of an unfinished step), worded as that provider words it. Calls of a step that is
    about to run, or waits on an interrupt, are not counted as dangling; a tool step
    the checkpoint holds as still to run (a run stopped after the model step or in the
    middle of a batch: the checkpoint cannot tell which) is reported once, as
    `PENDING_TOOL_CALLS` with the calls' ids, unless the graph was compiled with
    ``interrupt_before`` its tool node."""
    snapshot = _existing(graph.get_state(dict(config)), config)
    return _judge(snapshot, graph, _for_writing(provider), model, messages_key)


# ----------------------------------------------------------------------------- async


async def _alist(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


async def _arepair_one(
    root: Any, graph: Any, snapshot: Any, provider: ProviderLike, opts: dict[str, Any]
) -> ThreadRepair:
    inner = {**opts, "as_node": None}
    subs = [
        await _arepair_one(root, _subgraph(graph, t.name), t.state, provider, inner)
        for t in snapshot.tasks
        if _is_snapshot(getattr(t, "state", None)) and _subgraph(graph, t.name) is not None
    ]
    plan = _plan(snapshot, graph, provider, **_plan_opts(opts))
    if plan.missing:
        history = await _alist(
            root.aget_state_history(_thread_config(snapshot.config), limit=opts["history_limit"])
        )
        plan = _with_recovered(plan, history, snapshot, graph, provider, opts)
    report = _report(plan, subs, opts)
    if plan.update is not None and not opts["dry_run"]:
        new = await root.aupdate_state(snapshot.config, plan.update, as_node=report.as_node)
        report.checkpoint_id = _checkpoint_id(new)
    return report


async def arepair_thread(
    graph: Any,
    config: Mapping[str, Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    policy: Policy | None = None,
    dry_run: bool = False,
    cancel_interrupts: bool = False,
    cancel_pending_tools: bool = False,
    as_node: str | None = None,
    messages_key: str = "messages",
    history_limit: int = HISTORY_LIMIT,
) -> ThreadRepair:
    """`repair_thread` through the graph's async API (``aget_state``,
    ``aupdate_state``), for async checkpointers."""
    snapshot = _existing(await graph.aget_state(dict(config), subgraphs=True), config)
    provider = _for_writing(provider)
    opts = _options(
        model=model,
        policy=policy,
        cancel_interrupts=cancel_interrupts,
        cancel_pending_tools=cancel_pending_tools,
        key=messages_key,
        as_node=as_node,
        dry_run=dry_run,
        history_limit=history_limit,
    )
    return await _arepair_one(graph, graph, snapshot, provider, opts)


async def acheck_thread(
    graph: Any,
    config: Mapping[str, Any],
    provider: ProviderLike = None,
    *,
    model: str | None = None,
    messages_key: str = "messages",
) -> list[Violation]:
    """`check_thread` through ``aget_state``."""
    snapshot = _existing(await graph.aget_state(dict(config)), config)
    return _judge(snapshot, graph, _for_writing(provider), model, messages_key)
