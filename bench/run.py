"""toolpair benchmarks: one Markdown table of ratios, all measured in this process.

    python bench/run.py            # the full table (a few minutes on two cores)
    python bench/run.py --quick    # fewer repeats, smaller scaling run (a smoke test)
    python bench/run.py --llamaindex-python PATH   # LlamaIndex rows in another venv

llama-index-llms-anthropic needs anthropic<1 while pydantic-ai needs anthropic>=1, so
the LlamaIndex rows can run in a second interpreter (``tox -e bench`` makes one); each
ratio is still measured within one process.

Every figure is a ratio of two medians of repeated ``time.perf_counter`` runs, the two
sides interleaved so that load from elsewhere on the machine hits both alike. A figure
whose framework (or litellm) is not installed prints "n/a". Histories come from
bench/histories.py: seeded, with fixed content sizes. The cyclic garbage collector stays
on (collected before each run): its passes over a large heap are a real cost of
allocating per message, and most of what makes time per message grow with size.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# litellm fetches a model price map at import unless told to use its local copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import histories as H

import toolpair

# One aggregated warning per repair is part of repair's cost; send it nowhere.
_log = logging.getLogger("toolpair")
_log.addHandler(logging.NullHandler())
_log.propagate = False


def progress(text: str, _start: float = time.perf_counter()) -> None:
    print(f"[{time.perf_counter() - _start:6.1f}s] {text}", file=sys.stderr, flush=True)


@dataclass
class Row:
    figure: str
    sizes: str
    value: float | None
    target: str
    reference: str = ""
    note: str = ""

    def verdict(self) -> str:
        if self.value is None:
            return "n/a"
        if not self.target.startswith("<="):
            return "-"
        return "pass" if self.value <= float(self.target[2:]) else "FAIL"


def _times(fn: Callable[[], Any], number: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def ratio(a: Callable[[], Any], b: Callable[[], Any], repeats: int, number: int = 1) -> float:
    """median(time of a) / median(time of b), the runs interleaved, after one warm-up."""
    a()
    b()
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(_times(a, number))
        tb.append(_times(b, number))
    return statistics.median(ta) / statistics.median(tb)


def median_time(fn: Callable[[], Any], repeats: int, number: int = 1) -> float:
    fn()
    return statistics.median(_times(fn, number) for _ in range(repeats))


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes held by a JSON-like object graph, each object counted once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list | tuple):
        size += sum(deep_size(v, seen) for v in obj)
    return size


def dumps(history: Any) -> Callable[[], Any]:
    return lambda: json.dumps(history)


def _repair(
    history: Any, fmt: str, provider: str | None = None, model: str | None = None
) -> Callable[[], Any]:
    return lambda: toolpair.repair(history, provider or fmt, model=model, format=fmt)


def _size(n: int) -> str:
    return f"{n / 1000:g}k" if n >= 1000 else str(n)


# litellm ---------------------------------------------------------------------------


def litellm_reference(fmt: str, evs: list[H.Event], repeats: int) -> str:
    """litellm's tool-call sanitiser (modify_params=True) on the same broken
    conversation, as a ratio to json.dumps of its own (OpenAI-format) input."""
    if fmt not in ("anthropic", "openai", "mistral"):
        return "n/a"
    try:
        import litellm
        from litellm.litellm_core_utils.prompt_templates import factory
    except Exception:
        return "n/a"
    litellm.modify_params = True
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    chat = H.render(H.WIRE["mistral" if fmt == "mistral" else "openai"], evs)
    before = json.dumps(chat)
    if fmt == "anthropic":

        def run() -> Any:
            return factory.anthropic_messages_pt(
                chat, model="claude-sonnet-4-5", llm_provider="anthropic"
            )

        label = "anthropic_messages_pt"
    else:

        def run() -> Any:
            return factory.sanitize_messages_for_tool_calling(chat)

        label = "sanitize_messages_for_tool_calling"
    try:
        value = ratio(run, dumps(chat), repeats)
    except Exception as e:
        return f"error: {type(e).__name__}"
    if json.dumps(chat) != before:
        return f"{value:.2f} ({label}, mutates its input)"
    return f"{value:.2f} ({label})"


# frameworks ------------------------------------------------------------------------


def _lc_formatter() -> Callable[[list[Any]], Any]:
    from langchain_anthropic import ChatAnthropic

    model = ChatAnthropic(model="claude-sonnet-4-5", api_key="bench", max_tokens=1024)
    return lambda msgs: model._get_request_payload(msgs)


def _lc_repair() -> Callable[[list[Any]], Any]:
    from toolpair.integrations.langchain import repair_messages

    return lambda msgs: repair_messages(msgs, "anthropic")


def _pai_formatter() -> Callable[[list[Any]], Any]:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    model = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(api_key="bench"))
    params = ModelRequestParameters()
    loop = asyncio.new_event_loop()
    return lambda msgs: loop.run_until_complete(model._map_message(msgs, params, {}))


def _pai_repair() -> Callable[[list[Any]], Any]:
    from toolpair.integrations.pydantic_ai import repair

    return lambda msgs: repair(msgs, "anthropic")


def _agno_formatter() -> Callable[[list[Any]], Any]:
    from agno.utils.models.claude import format_messages

    return lambda msgs: format_messages(msgs)


def _agno_repair() -> Callable[[list[Any]], Any]:
    from toolpair.integrations.agno import repair_messages

    return lambda msgs: repair_messages(msgs, "anthropic")


def _li_formatter() -> Callable[[list[Any]], Any]:
    from llama_index.llms.anthropic.utils import messages_to_anthropic_messages

    return lambda msgs: messages_to_anthropic_messages(msgs, model="claude-sonnet-4-5")


def _li_repair() -> Callable[[list[Any]], Any]:
    from toolpair.integrations.llamaindex import repair_messages

    return lambda msgs: repair_messages(msgs, "anthropic")


def _oa_responses_formatter() -> Callable[[list[Any]], Any]:
    # What OpenAIResponsesModel does to the input on every call before sending it.
    from agents import ModelSettings, OpenAIResponsesModel
    from openai import AsyncOpenAI

    model = OpenAIResponsesModel("gpt-5", openai_client=AsyncOpenAI(api_key="bench"))
    settings = ModelSettings()
    return lambda items: model._build_response_create_kwargs(None, items, settings, [], None, [])


def _oa_chat_formatter() -> Callable[[list[Any]], Any]:
    from agents.models.chatcmpl_converter import Converter

    return lambda items: Converter.items_to_messages(items, model="gpt-4o")


def _oa_repair(provider: str) -> Callable[[], Callable[[list[Any]], Any]]:
    def make() -> Callable[[list[Any]], Any]:
        from toolpair.integrations.openai_agents import repair_items

        return lambda items: repair_items(items, provider)

    return make


def _adk_formatter() -> Callable[[list[Any]], Any]:
    # What ADK's Gemini model has google-genai do with the contents on every call: the
    # request mapping, the dict conversion and the JSON body.
    from google.genai import Client, _common, models

    client = Client(api_key="bench")._api_client

    def fmt(contents: list[Any]) -> str:
        body = models._GenerateContentParameters_to_mldev(
            client, {"model": "gemini-2.5-flash", "contents": contents}
        )
        return json.dumps(_common.encode_unserializable_types(_common.convert_to_dict(body)))

    return fmt


def _adk_repair() -> Callable[[list[Any]], Any]:
    from toolpair.integrations.google_adk import repair_contents

    return lambda contents: repair_contents(contents, "gemini", model="gemini-2.5-flash")


def _strands_model() -> Any:
    import boto3
    from strands.models.bedrock import BedrockModel

    session = boto3.Session(
        aws_access_key_id="bench", aws_secret_access_key="bench", region_name="us-east-1"
    )
    return BedrockModel(
        boto_session=session, model_id="us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    )


def _strands_formatter() -> Callable[[list[Any]], Any]:
    model = _strands_model()
    return lambda msgs: model.format_request(msgs)


def _strands_repair() -> Callable[[list[Any]], Any]:
    # What ToolpairModel does before every stream: the provider and model id read off
    # the BedrockModel.
    from toolpair.integrations.strands import ToolpairModel

    model = ToolpairModel(_strands_model())
    return lambda msgs: model.repair(msgs)


FRAMEWORK_BENCH: dict[str, tuple[str, Callable[[], Any], Callable[[], Any]]] = {
    "langchain": ("ChatAnthropic._get_request_payload", _lc_formatter, _lc_repair),
    "pydantic-ai": ("AnthropicModel._map_message", _pai_formatter, _pai_repair),
    "agno": ("agno.utils.models.claude.format_messages", _agno_formatter, _agno_repair),
    "llamaindex": ("messages_to_anthropic_messages", _li_formatter, _li_repair),
    "openai-agents": (
        "OpenAIResponsesModel._build_response_create_kwargs",
        _oa_responses_formatter,
        _oa_repair("openai-responses"),
    ),
    "openai-agents-chat": (
        "Converter.items_to_messages",
        _oa_chat_formatter,
        _oa_repair("openai"),
    ),
    "google-adk": ("google-genai generateContent request body", _adk_formatter, _adk_repair),
    "strands": ("BedrockModel.format_request", _strands_formatter, _strands_repair),
}


def framework_rows(n: int, repeats: int, only: str | None = None) -> list[Row]:
    rows = []
    for name, (label, formatter, repairer) in FRAMEWORK_BENCH.items():
        if only is not None and name != only:
            continue
        progress(f"framework {name}")
        for defects in (False, True):
            kind = "1% defects" if defects else "valid"
            figure = f"{name}: toolpair repair ({kind}) / {label}"
            target = "reported" if defects else "<= 0.5"
            try:
                fmt, rep = formatter(), repairer()
                msgs = H.framework(name, n, defects=defects)
            except Exception as e:
                note = f"{type(e).__name__}: {e}".splitlines()[0][:80]
                rows.append(Row(figure, _size(n), None, target, note=note))
                continue
            try:
                value = ratio(partial(rep, msgs), partial(fmt, msgs), repeats)
                rows.append(Row(figure, f"{len(msgs)} messages", value, target))
            except Exception as e:
                note = f"{type(e).__name__}: {e}".splitlines()[0][:80]
                if name == "llamaindex":
                    note += " (needs anthropic<1: see --llamaindex-python)"
                rows.append(Row(figure, f"{len(msgs)} messages", None, target, note=note))
    return rows


def framework_elsewhere(name: str, python: str, n: int, repeats: int) -> list[Row]:
    """The rows of one framework, measured by ``python`` running this script."""
    cmd = [python, os.path.abspath(__file__), "--framework-json", name, "--repeats", str(repeats)]
    progress(f"framework {name} in {python}")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        note = (done.stderr.strip().splitlines() or ["failed"])[-1][:80]
        return [Row(f"{name}: toolpair repair", _size(n), None, "<= 0.5", note=note)]
    return [Row(**row) for row in json.loads(done.stdout)]


def trim_row(n: int, repeats: int) -> Row:
    figure = "toolpair langchain trim_messages / langchain_core trim_messages"
    try:
        from langchain_core.messages import trim_messages as lc_trim
        from langchain_core.messages.utils import count_tokens_approximately

        from toolpair.integrations.langchain import trim_messages as tp_trim

        msgs = H.framework("langchain", n)
    except Exception as e:
        return Row(figure, _size(n), None, "<= 0.33", note=f"{type(e).__name__}: {e}"[:80])
    budget = count_tokens_approximately(msgs) // 2
    kw: dict[str, Any] = {
        "max_tokens": budget,
        "token_counter": "approximate",
        "strategy": "last",
    }
    progress("trim_messages")
    value = ratio(lambda: tp_trim(msgs, **kw), lambda: lc_trim(msgs, **kw), repeats)
    sizes = f"{len(msgs)} messages, approximate counter, strategy last, max_tokens {budget}"
    return Row(figure, sizes, value, "<= 0.33")


def langgraph_rows(n: int, repeats: int) -> list[Row]:
    """repair_thread's dry run against the get_state it starts from, and repair_hook
    against the request formatting the model does anyway."""
    thread_fig = "langgraph: repair_thread dry-run beyond its get_state / graph.get_state"
    hook_fig = "langgraph: repair_hook (valid) / ChatAnthropic._get_request_payload"
    try:
        from langchain_core.messages import RemoveMessage
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode

        from toolpair.integrations.langgraph import repair_hook, repair_thread

        msgs = H.framework("langchain", n)
        formatter = _lc_formatter()
    except Exception as e:
        note = f"{type(e).__name__}: {e}".splitlines()[0][:80]
        return [Row(f, _size(n), None, "<= 0.5", note=note) for f in (thread_fig, hook_fig)]
    progress("langgraph")
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda state: {})
    g.add_node("tools", ToolNode([]) if _toolnode_takes_empty() else (lambda state: {}))
    g.add_edge(START, "agent")
    g.add_edge("tools", "agent")
    graph = g.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "bench"}}
    graph.update_state(config, {"messages": [RemoveMessage(id="__remove_all__"), *msgs]})
    held = len(graph.get_state(config).values["messages"])

    def dry_run(provider: str | None = None) -> Callable[[], Any]:
        return lambda: repair_thread(graph, config, provider, dry_run=True)

    def get_state() -> Any:
        return graph.get_state(config, subgraphs=True)

    # repair_thread must read the state itself: the figure is the time it adds to that
    # read, relative to the read. The default rules (a thread's pairing rules) have a
    # no-op path; a named provider's rules take the full one (reported).
    sizes = f"{held} messages, InMemorySaver"
    whole = ratio(dry_run(), get_state, repeats)
    named = ratio(dry_run("anthropic"), get_state, repeats)
    rows = [
        Row(thread_fig + " (default rules)", sizes, whole - 1, "<= 0.5"),
        Row(thread_fig + " (anthropic rules)", sizes, named - 1, "reported"),
    ]
    hook = repair_hook("anthropic")
    state = {"messages": msgs}
    value = ratio(lambda: hook(state), lambda: formatter(msgs), repeats)
    rows.append(Row(hook_fig, f"{len(msgs)} messages", value, "<= 0.5"))
    return rows


def _toolnode_takes_empty() -> bool:
    from langgraph.prebuilt import ToolNode

    try:
        ToolNode([])
    except Exception:
        return False
    return True


# the table -------------------------------------------------------------------------


def _reads(history: list[Any]) -> None:
    # Each role, each block's type, and the one string each block's rules read (call id,
    # result id, text), with none of the rules: what any validator must fetch from memory.
    for m in history:
        len(m["role"])
        for b in m["content"]:
            t = b["type"]
            if t == "tool_use":
                len(b["id"])
            elif t == "tool_result":
                len(b["tool_use_id"])
            elif t == "text":
                len(b["text"])


#: Every provider profile, on a valid history in the wire format it speaks (with a
#: model where the generated history is that family's: Claude's text beside its tool use
#: behind Converse; ids on Vertex, which a model naming v1beta1 takes).
NOOP_PROVIDERS: dict[str, tuple[str, str | None]] = {
    "anthropic": ("anthropic", None),
    "bedrock": ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    "openai": ("openai", None),
    "openai-responses": ("openai-responses", None),
    "gemini": ("gemini", None),
    "mistral": ("mistral", None),
    "deepseek": ("openai", None),
    "deepseek-responses": ("openai-responses", None),
    "vertex": ("gemini", "gemini-2.5-flash"),
    "moonshot": ("openai", None),
    "zhipu": ("openai", None),
}


def noop_rows(n: int, repeats: int) -> list[Row]:
    """repair of a valid history, per provider: what every request pays."""
    progress("no-op repair, per provider")
    rows = []
    for provider, (fmt, model) in NOOP_PROVIDERS.items():
        valid = H.wire(fmt, n)
        sizes = f"{len(valid)} {fmt} messages, {len(json.dumps(valid)) / 1e6:.1f} MB JSON"
        left = toolpair.validate(valid, provider, model=model, format=fmt)
        rows.append(
            Row(
                f"repair, valid history (no-op), {provider}"
                f"{f', model={model!r}' if model else ''} / json.dumps",
                sizes,
                ratio(_repair(valid, fmt, provider, model), dumps(valid), 2 * repeats),
                "<= 0.10",
                note=f"{len(left)} violations: not a no-op" if left else "",
            )
        )
    return rows


def wire_rows(n: int, repeats: int) -> list[Row]:
    rows = []
    progress("wire formats")
    valid = H.wire("anthropic", n)
    sizes = f"{len(valid)} messages, {len(json.dumps(valid)) / 1e6:.1f} MB JSON"
    if toolpair.validate(valid, "anthropic"):
        raise SystemExit("bench: the generated Anthropic history is not valid")
    rows.append(
        Row(
            "validate, valid Anthropic history / json.dumps",
            sizes,
            ratio(lambda: toolpair.validate(valid, "anthropic"), dumps(valid), 2 * repeats),
            "<= 0.10",
        )
    )
    rows.append(
        Row(
            "repair, valid Anthropic history (no-op) / json.dumps",
            sizes,
            ratio(_repair(valid, "anthropic"), dumps(valid), 2 * repeats),
            "<= 0.10",
        )
    )
    claude = "claude-sonnet-4-5-20250929"
    rows.append(
        Row(
            f"validate, valid Anthropic history, model={claude!r} / json.dumps",
            sizes,
            ratio(
                lambda: toolpair.validate(valid, "anthropic", model=claude),
                dumps(valid),
                2 * repeats,
            ),
            "<= 0.10",
        )
    )
    rows.append(
        Row(
            f"repair, valid Anthropic history (no-op), model={claude!r} / json.dumps",
            sizes,
            ratio(
                lambda: toolpair.repair(valid, "anthropic", model=claude),
                dumps(valid),
                2 * repeats,
            ),
            "<= 0.10",
        )
    )
    bedrock = H.wire("bedrock", n)
    bedrock_claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    rows.append(
        Row(
            "repair, valid Bedrock history (no-op), a Claude model id / json.dumps",
            f"{len(bedrock)} messages, {len(json.dumps(bedrock)) / 1e6:.1f} MB JSON",
            ratio(
                lambda: toolpair.repair(bedrock, "bedrock", model=bedrock_claude),
                dumps(bedrock),
                2 * repeats,
            ),
            "<= 0.10",
            note="Claude's own no-op checker (text beside tool use is fine)",
        )
    )
    rows.append(
        Row(
            "reference: a loop reading only what validity depends on, no rules / json.dumps",
            sizes,
            ratio(partial(_reads, valid), dumps(valid), 2 * repeats),
            "reported",
            note="the floor under the two rows above",
        )
    )
    for fmt, render_one in H.WIRE.items():
        progress(f"repair, 1% defects, {fmt}")
        evs = H.with_defects(H.take(render_one, n), max(1, n // 100))
        broken = H.render(render_one, evs)
        # The Bedrock history is Claude's (text beside its tool use): held to Claude's
        # rules, as an integration passing the model id does; without a model the strict
        # set splits every such turn (the row after the loop).
        model = bedrock_claude if fmt == "bedrock" else None
        before = toolpair.validate(broken, fmt, model=model, format=fmt)
        result = toolpair.repair(broken, fmt, model=model, format=fmt)
        left = len(result.unrepaired)
        note = f"{len(before)} violations before, {len(result.fixes) - left} fixes"
        if left:
            note += f", {left} left unrepaired"
        rows.append(
            Row(
                f"repair, 1% defects, {fmt}{', a Claude model id' if model else ''} / json.dumps",
                f"{len(broken)} messages, {len(json.dumps(broken)) / 1e6:.1f} MB JSON",
                ratio(_repair(broken, fmt, model=model), dumps(broken), repeats),
                "<= 0.5" if fmt == "anthropic" else "reported",
                reference=litellm_reference(fmt, evs, repeats),
                note=note,
            )
        )
    progress("repair, 1% defects, bedrock, no model")
    evs = H.with_defects(H.take(H.WIRE["bedrock"], n), max(1, n // 100))
    broken = H.render(H.WIRE["bedrock"], evs)
    strict = toolpair.repair(broken, "bedrock", format="bedrock")
    rows.append(
        Row(
            "repair, 1% defects, bedrock, no model (the strict set) / json.dumps",
            f"{len(broken)} messages, {len(json.dumps(broken)) / 1e6:.1f} MB JSON",
            ratio(_repair(broken, "bedrock"), dumps(broken), repeats),
            "reported",
            note=f"{len(strict.fixes)} fixes: every turn with text beside its tool use is split",
        )
    )
    return rows


def scaling_rows(small: int, big: int, repeats: int) -> list[Row]:
    rows = []
    cases: list[tuple[str, Callable[[list[Any]], Any], bool, str]] = [
        (
            "repair, 1% defects",
            lambda h: toolpair.repair(h, "anthropic", format="anthropic"),
            True,
            "<= 1.3",
        ),
        ("validate, valid", lambda h: toolpair.validate(h, "anthropic"), False, "reported"),
    ]
    for label, op, defects, target in cases:
        progress(f"scaling, {label}")
        hs = H.wire("anthropic", small, defects=defects)
        hb = H.wire("anthropic", big, defects=defects)
        per_small = median_time(partial(op, hs), repeats * 3, number=5) / len(hs)
        per_big = median_time(partial(op, hb), 2 * repeats) / len(hb)
        del hb
        H.wire.cache_clear()
        rows.append(
            Row(
                f"scaling, {label}: time per message at {_size(big)} / at {_size(small)}",
                f"{_size(small)} and {_size(big)} Anthropic messages",
                per_big / per_small,
                target,
            )
        )
    return rows


def floor_row(n: int, repeats: int) -> Row:
    valid = H.wire("anthropic", n)

    def bare() -> int:
        count = 0
        for m in valid:
            content = m["content"]
            if isinstance(content, str):
                count += 1
                continue
            for b in content:
                if b["type"] == "tool_use":
                    count += 1
        return count

    return Row(
        "validate / bare loop touching every block's type once",
        f"{len(valid)} Anthropic messages",
        ratio(lambda: toolpair.validate(valid, "anthropic"), bare, 2 * repeats),
        "<= 3",
    )


def memory_row(n: int) -> Row:
    valid = H.wire("anthropic", n)
    size = deep_size(valid)
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    result = toolpair.repair(valid, "anthropic")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return Row(
        "peak extra memory of repair (no-op, tracemalloc) / size of the input",
        f"{len(valid)} Anthropic messages, {size / 1e6:.1f} MB in memory",
        (peak - base) / size,
        "<= 0.1",
    )


def _fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def table(rows: list[Row]) -> str:
    head = "| figure | history | ratio | target | pass | litellm reference | notes |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r.figure, r.sizes, _fmt(r.value), r.target, r.verdict()]
        cells += [r.reference or "-", r.note or ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _versions() -> str:
    from importlib import metadata

    found = []
    names = ("langchain-core", "langchain-anthropic", "langgraph", "pydantic-ai-slim", "agno")
    names += ("llama-index-core", "llama-index-llms-anthropic", "litellm")
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 20k scaling")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--llamaindex-python",
        default=os.environ.get("BENCH_LLAMAINDEX_PYTHON"),
        help="an interpreter with llama-index (and anthropic<1) for the LlamaIndex rows",
    )
    parser.add_argument("--framework-json", help=argparse.SUPPRESS)
    parser.add_argument("--langgraph-only", action="store_true", help="only the LangGraph rows")
    parser.add_argument(
        "--noop-only", action="store_true", help="only the per-provider no-op repair rows"
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    if args.noop_only:
        rows = noop_rows(10_000, repeats)
        print(table(rows))
        return _enforced(rows)
    if args.langgraph_only:
        print(table(langgraph_rows(2_000, repeats)))
        return 0
    if args.framework_json:
        rows = framework_rows(2_000, repeats, only=args.framework_json)
        print(json.dumps([r.__dict__ for r in rows]))
        return 0
    big = 20_000 if args.quick else 100_000
    start = time.perf_counter()
    rows = wire_rows(10_000, repeats)
    rows += noop_rows(10_000, repeats)
    rows += scaling_rows(1_000, big, repeats)
    rows.append(trim_row(10_000, max(3, repeats // 2)))
    for name in FRAMEWORK_BENCH:
        elsewhere = args.llamaindex_python
        if name == "llamaindex" and elsewhere and os.path.exists(elsewhere):
            rows += framework_elsewhere(name, elsewhere, 2_000, repeats)
        else:
            rows += framework_rows(2_000, repeats, only=name)
    rows += langgraph_rows(2_000, repeats)
    progress("floor and memory")
    rows.append(floor_row(10_000, repeats))
    rows.append(memory_row(10_000))
    print(table(rows))
    print()
    print(
        f"Medians of {repeats} runs ({2 * repeats} for the no-op rows, the floor and the "
        f"scaling at {_size(big)}, the noisiest). "
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}; toolpair {toolpair.__version__}; "
        f"{_versions()}. Took {time.perf_counter() - start:.0f} s."
    )
    if args.llamaindex_python and os.path.exists(args.llamaindex_python):
        print(f"LlamaIndex rows measured by {args.llamaindex_python} (anthropic<1).")
    return _enforced(rows)


def _enforced(rows: list[Row]) -> int:
    """1 where a row misses its target (every provider's no-op row among them)."""
    failed = [r.figure for r in rows if r.verdict() == "FAIL"]
    for figure in failed:
        print(f"bench: over target: {figure}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
