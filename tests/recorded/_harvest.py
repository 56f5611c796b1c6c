"""Harvest recorded provider exchanges from other projects' test suites into cases.

    python3 tests/recorded/_harvest.py            # every source in SOURCES
    python3 tests/recorded/_harvest.py pydantic   # sources whose repo contains a word

A source is a git mirror (``fetch github:owner/name`` gives one) and the folders of its
VCR cassettes or recorded fixtures. Every interaction whose request body holds a tool
call or a tool result becomes ``tests/recorded/<provider>/<slug>.json`` with its source,
host, model, date, status and, for a refusal, the verbatim error. Text, tool arguments
and outputs are replaced by neutral placeholders of the same length; roles, block types,
order, ids, names, status fields and signatures stay as they were sent.

A refusal needs its ``expect`` (the rule family and the message index the error names):
it is read from ``_expect.json`` by case file name, since only a reader of the error can
say it. Hand-made cases (``"kind": "thread"``) are never overwritten.

Stdlib only, except that VCR cassettes are YAML: PyYAML is imported for those (this is a
maintainer's tool, never run by the test envs).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

HERE = Path(__file__).resolve().parent
MIRRORS = Path("/work/.mirror")

# Copies of files from repositories too large to mirror (read one by one), laid out as
# <owner>+<name>/<path in the repository>; the commit they were read at is in COMMITS.
INCOMING = Path("/tmp/incoming")
COMMITS = {"anomalyco/opencode": "317768a76091cab2074e5bdefde4e44fe6d1057a"}

# (repo, licence, folders)
SOURCES: list[tuple[str, str, list[str]]] = [
    (
        "pydantic/pydantic-ai",
        "MIT",
        [
            "tests/models/cassettes/test_anthropic",
            "tests/models/cassettes/test_anthropic_mid_conversation_system",
            "tests/models/cassettes/test_bedrock",
            "tests/models/cassettes/test_bedrock_mantle",
            "tests/models/cassettes/test_openai",
            "tests/models/cassettes/test_openai_responses",
            "tests/models/cassettes/test_google",
            "tests/models/cassettes/test_mistral",
            "tests/models/cassettes/test_deepseek",
            "tests/models/cassettes/test_deepseek_responses",
            "tests/models/cassettes/test_tool_choice_matrix",
            "tests/models/cassettes/test_multimodal_tool_returns",
            "tests/models/anthropic/cassettes/test_unpaired_native_tool_calls",
            # December 2026, third pass: the suite's other tool exchanges.
            "tests/cassettes/test_tool_search",
            "tests/cassettes/test_tool_availability_portability",
            "tests/cassettes/test_thinking_wire_contract",
            "tests/cassettes/test_thinking_native_tools",
            "tests/cassettes/test_cache_prefix_stability",
            "tests/cassettes/test_ref_sibling_wire_contract",
            "tests/cassettes/test_temporal",
            "tests/cassettes/test_dbos",
            "tests/cassettes/test_prefect",
            "tests/models/anthropic/cassettes/test_output",
            "tests/models/bedrock/cassettes/test_native_output",
            "tests/models/bedrock/cassettes/test_strict_tool_calls",
            "tests/models/google/cassettes/test_structured_output",
            "tests/models/google/cassettes/test_output",
            "tests/models/google/cassettes/test_code_execution",
            "tests/models/cassettes/test_openai_tool_availability_delta",
            "tests/models/cassettes/test_openai_prompt_cache",
        ],
    ),
    ("simonw/llm-gemini", "Apache-2.0", ["tests/cassettes"]),
    ("anomalyco/opencode", "MIT", ["packages/ai/test/fixtures/recordings"]),
    ("simonw/llm-anthropic", "Apache-2.0", ["tests/cassettes"]),
    ("langchain-ai/langchain-aws", "MIT", ["libs/aws/tests/cassettes"]),
    (
        "Mirascope/mirascope",
        "MIT",
        ["python/tests/e2e/input/cassettes", "python/tests/e2e/output/cassettes"],
    ),
    ("crmne/ruby_llm", "MIT", ["spec/fixtures/vcr_cassettes"]),
    ("tmc/langchaingo", "MIT", ["llms", "agents", "chains"]),
    ("charmbracelet/fantasy", "Apache-2.0", ["providertests/testdata"]),
    ("crewAIInc/crewAI", "MIT", ["lib/crewai/tests/cassettes"]),
    ("jackmpcollins/magentic", "MIT", ["tests"]),
    ("activeagents/activeagent", "MIT", ["test/fixtures/vcr_cassettes"]),
    ("posit-dev/chatlas", "MIT", ["tests/_vcr"]),
    ("tidyverse/ellmer", "MIT", ["tests/testthat/_vcr", "vignettes/_vcr", "inst/_vcr"]),
    (
        "DataDog/dd-trace-py",
        "Apache-2.0 OR BSD-3-Clause",
        [
            "tests/cassettes",
            *(
                f"tests/contrib/{d}/cassettes"
                for d in (
                    "openai",
                    "anthropic",
                    "litellm",
                    "openai_agents",
                    "llama_index",
                    "pydantic_ai",
                    "google_adk",
                    "crewai",
                )
            ),
            "tests/contrib/botocore/bedrock_cassettes",
        ],
    ),
]
# Older versions of recordings a source has since re-recorded, where the older exchange
# is evidence the newer is not (DeepSeek's ids before 2025-09, a model since retired):
# (repo, licence, commit, folders). Their cases are named ``at-<commit>__<slug>``.
HISTORY: list[tuple[str, str, str, list[str]]] = [
    # 2025-08: DeepSeek's `call_0_` ids, Claude 3.5 on Bedrock, Gemini 2.0 Flash.
    (
        "crmne/ruby_llm",
        "MIT",
        "08d50f0372c93f7e2019e0df324acf2528365462",
        ["spec/fixtures/vcr_cassettes"],
    ),
    # 2025-09: Claude 3.5 Haiku through Converse, two user turns in a row before the
    # tool loop (ruby_llm sent the system prompt as a user turn), re-recorded since.
    (
        "crmne/ruby_llm",
        "MIT",
        "1e3c65e92f425129ece82183e48e0c1038574226",
        [
            "spec/fixtures/vcr_cassettes/chat_function_calling_bedrock_anthropic_claude-3-5-"
            "haiku-20241022-v1_0_can_handle_multiple_tool_calls_in_a_single_response.yml",
            "spec/fixtures/vcr_cassettes/chat_function_calling_bedrock_anthropic_claude-3-5-"
            "haiku-20241022-v1_0_can_use_tools_without_parameters_in_multi-turn_streaming_"
            "conversations.yml",
        ],
    ),
    # 2026-01 and 2026-02: Claude 3 Haiku through Converse answering a toolResult turn
    # followed by a user text turn (two user turns in a row), re-recorded since.
    (
        "crewAIInc/crewAI",
        "MIT",
        "bd4d039f636b26063364a2416635d1b18d4c5198",
        [
            "lib/crewai/tests/cassettes/agents/TestBedrockNativeToolCalling."
            "test_bedrock_agent_kickoff_with_tools_mocked.yaml"
        ],
    ),
    (
        "crewAIInc/crewAI",
        "MIT",
        "120f2ef6e782dcc10ccb5de1fde8992e0310c5b3",
        [
            "lib/crewai/tests/cassettes/agents/TestNativeToolCallingBehavior."
            "test_bedrock_mcp_tool_with_optional_fields_no_schema_error.yaml"
        ],
    ),
    (
        "crewAIInc/crewAI",
        "MIT",
        "5b00b5f83782952bf2dfe7865c2fb9332accaec5",
        [
            "lib/crewai/tests/cassettes/agents/TestNativeToolCallingBehavior."
            "test_bedrock_mcp_tool_with_optional_fields_no_schema_error.yaml"
        ],
    ),
]

# Recordings read and deliberately left out of the corpus for now, each with why: toolpair
# disagrees with them and the fix is a check change not yet made. The harvest names each
# one it leaves out. Empty: the last three went in with their check changes
# (tests/recorded/README.md, "Three recordings that changed a check").
PENDING: dict[str, str] = {}

TOOL_MARKERS = (
    '"tool_use"',
    '"tool_result"',
    '"toolUse"',
    '"toolResult"',
    '"tool_calls"',
    '"role":"tool"',
    '"function_call"',
    '"function_call_output"',
    '"functionCall"',
    '"functionResponse"',
    '"function_call":',
    '"custom_tool_call"',
    '"mcp_call"',
    '"web_search_call"',
    '"server_tool_use"',
)

# Keys whose string values are structure, not content: kept verbatim.
KEEP = {
    "role",
    "type",
    "id",
    "call_id",
    "tool_call_id",
    "tool_use_id",
    "toolUseId",
    "name",
    "status",
    "execution",
    "signature",
    "thoughtSignature",
    "thought_signature",
    "encrypted_content",
    "redacted_content",
    "data_signature",
    "model",
    "modelId",
    "mimeType",
    "mime_type",
    "media_type",
    "format",
    "tool_choice",
    "stop_reason",
    "stopReason",
    "finish_reason",
    "previous_response_id",
    "cache_control",
    "cachePoint",
    "detail",
    "reasoning_effort",
    "effort",
    "server_label",
    "phase",
    "prefix",
}
# Binary payloads: shortened to a token (their size is not what the rules read).
BINARY = {"data", "bytes", "image_url", "file_data", "url", "uri", "fileUri", "file_uri"}
# Refusals about what a model takes as media, not about how calls and results pair: the
# request decides them, but no toolpair rule is about them, so they are kept (their
# tool turns are real) and left out of the agreement figure.
OUT_OF_SCOPE = [
    re.compile(p)
    for p in (
        r"Cannot fetch content from the provided URL",
        r"Invalid file data",
        r"file type you uploaded is not supported",
        r"doesn't support the (video content block|s3Uri field)",
        r"document\.source\.type: Field required",
        r"Content blocks are expected to be either text or image_url",
        r"extraneous key \[toolResult\] is not permitted",
    )
]
THINK_TAG = re.compile(r"</?think>")
WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")


def filler(n: int) -> str:
    out: list[str] = []
    i = 0
    while sum(len(w) + 1 for w in out) < n:
        out.append(WORDS[i % len(WORDS)])
        i += 1
    return " ".join(out)[:n]


def placeholder(s: str) -> str:
    """Same length, same leading and trailing whitespace, ``<think>`` tags kept (DeepSeek
    reads them), every other character neutral."""
    if not s.strip():
        return s
    parts = THINK_TAG.split(s)
    tags = THINK_TAG.findall(s)
    out = []
    for k, part in enumerate(parts):
        lead = part[: len(part) - len(part.lstrip())]
        trail = part[len(part.rstrip()) :]
        core = part.strip()
        out.append(lead + (filler(len(core)) if core else "") + trail if part.strip() else part)
        if k < len(tags):
            out.append(tags[k])
    return "".join(out)


def anon_json_string(s: str) -> str:
    try:
        value = json.loads(s)
    except ValueError:
        return placeholder(s)
    if not isinstance(value, dict | list):
        return placeholder(s)
    return json.dumps(anon_values(value), separators=(",", ":"))


def anon_values(value: Any) -> Any:
    """Tool arguments and inputs: keys kept, string values neutral."""
    if isinstance(value, dict):
        return {k: anon_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [anon_values(v) for v in value]
    if isinstance(value, str):
        return placeholder(value)
    return value


def anon(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in ("input", "args") and isinstance(v, dict):
                out[k] = anon_values(v)
            elif k == "arguments" and isinstance(v, str):
                out[k] = anon_json_string(v)
            elif k in ("parameters", "inputSchema", "input_schema", "json", "schema"):
                out[k] = v  # tool schemas are structure
            else:
                out[k] = anon(v, k)
        return out
    if isinstance(value, list):
        return [anon(v, key) for v in value]
    if isinstance(value, str):
        if key in KEEP:
            return value
        if key in BINARY:
            if value.startswith(("http", "gs://", "s3://")):
                return value if len(value) < 200 else value[:40]
            return "AAAA" if value else value
        return placeholder(value)
    return value


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], capture_output=True, text=True, check=True
    ).stdout


def classify(uri: str, body: dict[str, Any]) -> tuple[str, str, str] | None:
    """(provider, host, model) for a request URI, or None for a host toolpair has no
    profile for."""
    u = urlparse(uri)
    host, path = u.netloc, unquote(u.path)
    model = body.get("model") if isinstance(body.get("model"), str) else ""
    if "count_tokens" in path or "countTokens" in path:
        return None
    if host == "api.anthropic.com" and path.endswith("/messages"):
        return "anthropic", "api.anthropic.com", model
    if host == "opencode.ai" and path.endswith("/v1/messages"):
        return "anthropic", "opencode zen gateway (anthropic messages)", model
    if host == "api.meta.ai" and path.endswith("/responses"):
        return "openai-responses", "api.meta.ai (responses protocol)", model
    if host.startswith("bedrock-runtime") and re.search(r"/converse(-stream)?$", path):
        m = re.search(r"/model/(.+)/converse", path)
        return "bedrock", "bedrock-runtime (converse)", m.group(1) if m else ""
    if host.startswith("bedrock-runtime") and "/invoke" in path and "anthropic" in path:
        m = re.search(r"/model/(.+)/invoke", path)
        return "anthropic", "bedrock-runtime (invoke)", m.group(1) if m else ""
    if "bedrock-mantle" in host or ("bedrock" in host and "/v1/" in path):
        if path.endswith("/responses"):
            return "openai-responses", "bedrock (openai-compatible)", model
        if path.endswith("/chat/completions"):
            return "openai", "bedrock (openai-compatible)", model
        return None
    if host == "api.openai.com" or host.endswith(".openai.azure.com"):
        where = "azure openai" if "azure" in host else "api.openai.com"
        if path.endswith("/responses"):
            return "openai-responses", where, model
        if path.endswith("/chat/completions"):
            return "openai", where, model
        return None
    if host == "generativelanguage.googleapis.com":
        m = re.search(r"models/([^:/]+):", path)
        return "gemini", host, m.group(1) if m else model
    if host.endswith("aiplatform.googleapis.com"):
        m = re.search(r"models/([^:/]+):", path)
        name = m.group(1) if m else model
        if "publishers/anthropic" in path:
            return "anthropic", "vertex", name
        if "publishers/google" in path or ":generateContent" in path:
            return "vertex", "vertex", name
        return None
    if host == "api.mistral.ai" and path.endswith("/chat/completions"):
        return "mistral", host, model
    if host == "api.deepseek.com":
        if path.endswith("/responses"):
            return "deepseek-responses", host, model
        if path.endswith("/chat/completions"):
            return "deepseek", host, model
    return None


def has_tools(body: dict[str, Any]) -> bool:
    text = json.dumps(body, separators=(",", ":"))
    return any(m in text for m in TOOL_MARKERS)


def request_body(req: dict[str, Any]) -> dict[str, Any] | None:
    body = req.get("parsed_body")
    if body is None:
        raw = req.get("body")
        if isinstance(raw, dict):
            raw = raw.get("string")
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        if not isinstance(raw, str) or not raw.strip():
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            return None
    return body if isinstance(body, dict) else None


def response_error(resp: dict[str, Any]) -> str:
    body = resp.get("parsed_body")
    if body is None:
        raw = resp.get("body")
        if isinstance(raw, dict):
            raw = raw.get("string")
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        try:
            body = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            return str(raw)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message", json.dumps(err)))
        return str(body.get("message", err))
    return json.dumps(body) if not isinstance(body, str) else body


def response_date(resp: dict[str, Any]) -> str:
    headers = resp.get("headers") or {}
    for k, v in headers.items():
        if k.lower() == "date":
            value = v[0] if isinstance(v, list) else v
            try:
                return parsedate_to_datetime(str(value)).date().isoformat()
            except (TypeError, ValueError):
                return ""
    return ""


def slug(path: str, folder: str, n: int) -> str:
    """The recording's path below its source folder (test names repeat across
    folders), and the interaction number."""
    rel = path[len(folder) :].lstrip("/") if path.startswith(folder) else path
    rel = re.sub(r"\.(ya?ml|json|httprr)$", "", rel)
    rel = re.sub(r"[^A-Za-z0-9_.-]+", "_", rel.replace("/", "__")).strip("_")
    return f"{rel}__{n}"


def cassette_interactions(
    path: str, text: str
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """VCR YAML cassettes (either layout), and JSON recordings of the same shape
    (opencode's: ``url`` for ``uri``, ``status`` a number, ``recordedAt``)."""
    if path.endswith(".httprr"):
        yield from _httprr(text)
        return
    if path.endswith(".json"):
        data = json.loads(text)
        day = str((data.get("metadata") or {}).get("recordedAt", ""))[:10]
        for n, it in enumerate(data.get("interactions") or []):
            req, resp = dict(it.get("request") or {}), dict(it.get("response") or {})
            req.setdefault("uri", req.get("url", ""))
            if isinstance(resp.get("status"), int):
                resp["status"] = {"code": resp["status"]}
            resp["recorded"] = day
            yield n, req, resp
        return
    import yaml  # a maintainer's tool; see the module docstring

    class Loader(yaml.SafeLoader):
        """Ruby's VCR writes non-UTF-8-safe bodies as ``!binary`` (base64)."""

    def binary(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        raw = base64.b64decode(str(loader.construct_scalar(node)))  # type: ignore[arg-type]
        return raw.decode("utf-8", "replace")

    def python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        """vcrpy under aiohttp writes header names as ``!!python/object/apply:...istr``:
        read as the plain data they wrap, never constructed."""
        if isinstance(node, yaml.SequenceNode):
            args = loader.construct_sequence(node, deep=True)
            return args[0] if len(args) == 1 and isinstance(args[0], str) else args
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        return loader.construct_scalar(node)  # type: ignore[arg-type]

    Loader.add_constructor("!binary", binary)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", python_tag)
    data = yaml.load(text, Loader=Loader) or {}
    if "requests" in data:  # the older layout: two parallel lists
        # A request the recorder saw no answer to has no response: it is not a case.
        answers = data.get("responses") or []
        pairs = zip(data["requests"][: len(answers)], answers, strict=True)
        for n, (req, resp) in enumerate(pairs):
            yield n, req or {}, resp or {}
        return
    # Python's vcrpy writes ``interactions``; Ruby's VCR ``http_interactions``; Go's
    # go-vcr ``interactions`` too, with ``url`` for ``uri`` and ``code`` beside a
    # ``status`` line ("200 OK"); R's vcr the same keys as vcrpy, the status a number.
    for n, it in enumerate(data.get("interactions") or data.get("http_interactions") or []):
        req, resp = dict(it.get("request") or {}), dict(it.get("response") or {})
        req.setdefault("uri", req.get("url", ""))
        if not isinstance(resp.get("status"), dict) and isinstance(resp.get("code"), int):
            resp["status"] = {"code": resp["code"]}
        elif isinstance(resp.get("status"), int):  # R's vcr: the status as a number
            resp["status"] = {"code": resp["status"]}
        yield n, req, resp


def _httprr(text: str) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Go's httprr traces (``httprr trace v1``, then per exchange ``<n> <m>`` and the raw
    HTTP request and response of n and m bytes), as VCR-shaped request and response."""
    raw = text.encode("utf-8", "surrogateescape")
    head, _, rest = raw.partition(b"\n")
    if not head.startswith(b"httprr trace v1"):
        return
    n = 0
    while rest:
        sizes, _, rest = rest.partition(b"\n")
        try:
            a, b = (int(x) for x in sizes.split())
        except ValueError:
            return
        req, resp, rest = rest[:a], rest[a : a + b], rest[a + b :]
        line, _, tail = req.partition(b"\r\n" if b"\r\n" in req[:400] else b"\n")
        method, uri = [*line.decode("latin-1").split(" "), "", ""][:2]
        sep = b"\r\n\r\n" if b"\r\n\r\n" in tail else b"\n\n"
        body = tail.split(sep, 1)[-1]
        status_line, _, rtail = resp.partition(b"\n")
        parts = status_line.decode("latin-1").split(" ")
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        rhead, _, rbody = rtail.replace(b"\r\n", b"\n").partition(b"\n\n")
        headers = {}
        for h in rhead.decode("latin-1").split("\n"):
            k, _, v = h.partition(":")
            headers[k.strip()] = v.strip()
        yield (
            n,
            {"method": method, "uri": uri, "body": body.decode("utf-8", "replace")},
            {
                "status": {"code": code},
                "headers": headers,
                "body": rbody.decode("utf-8", "replace"),
            },
        )
        n += 1


def commit_dates(gitdir: Path, folders: list[str], ref: str = "HEAD") -> dict[str, str]:
    """The date of the last commit that touched each file: cassettes that strip the
    response's Date header were recorded no later than that."""
    out: dict[str, str] = {}
    try:
        log = git(gitdir, "log", "--format=@%cs", "--name-only", ref, "--", *folders)
    except subprocess.CalledProcessError:
        return out  # a shallow or partial mirror: the responses' Date headers say it
    day = ""
    for line in log.splitlines():
        if line.startswith("@"):
            day = line[1:]
        elif line.strip():
            out.setdefault(line.strip(), day)
    return out


def files(
    repo: str, folders: list[str], ref: str = "HEAD"
) -> tuple[str, dict[str, str], Iterator[tuple[str, str]]]:
    """(commit, dates by path, (path, text) of every recording) from the mirror at
    ``ref``, or from INCOMING for a repository read file by file."""
    gitdir = MIRRORS / repo.replace("/", "+") / "repo"
    if not gitdir.exists():
        root = INCOMING / repo.replace("/", "+")
        found = sorted(p for f in folders for p in (root / f).rglob("*.json"))
        return (
            COMMITS[repo],
            {},
            ((str(p.relative_to(root)), p.read_text()) for p in found),
        )

    def read() -> Iterator[tuple[str, str]]:
        for folder in folders:
            for path in git(gitdir, "ls-tree", "-r", "--name-only", ref, folder).split("\n"):
                if not path.endswith((".yaml", ".yml", ".json", ".yaml.gz", ".httprr")):
                    continue
                shown = subprocess.run(
                    ["git", f"--git-dir={gitdir}", "show", f"{ref}:{path}"], capture_output=True
                )
                if shown.returncode:
                    continue  # a file the mirror lists but does not hold
                raw = shown.stdout
                if path.endswith(".gz"):
                    raw = gzip.decompress(raw)
                yield path.removesuffix(".gz"), raw.decode("utf-8", "replace")

    commit = git(gitdir, "rev-parse", ref).strip()
    return commit, commit_dates(gitdir, folders, ref), read()


def harvest(
    repo: str, licence: str, folders: list[str], expect: dict[str, Any], ref: str = "HEAD"
) -> list[str]:
    commit, dates, recordings = files(repo, folders, ref)
    written: list[str] = []
    for path, text in recordings:
        for n, req, resp in cassette_interactions(path, text):
            body = request_body(req)
            if body is None or not has_tools(body):
                continue
            where = classify(str(req.get("uri", "")), body)
            if where is None:
                continue
            provider, host, model = where
            status = int((resp.get("status") or {}).get("code", 0))
            if status == 0 or status >= 500 or status == 429:
                continue
            # A folder may name a single recording: its name is then taken from its own folder.
            under = next((f for f in folders if path.startswith(f + "/")), path.rpartition("/")[0])
            name = slug(path, under, n)
            if f"{provider}/{name}.json" in written:  # one test name in two folders
                name = f"{Path(under).name}__{name}"
            if ref != "HEAD":
                name = f"at-{commit[:8]}__{name}"
            case: dict[str, Any] = {
                "source": {
                    "repo": repo,
                    "commit": commit,
                    "path": path,
                    "interaction": n,
                    "licence": licence,
                    "kind": "recording",
                },
                "provider": provider,
                "host": host,
                "model": model,
                "date": resp.get("recorded") or response_date(resp) or dates.get(path, ""),
                "status": status,
            }
            key = f"{provider}/{name}.json"
            if key in PENDING:
                print(f"  left out {key}: {PENDING[key]}")
                continue
            if status >= 400:
                case["error"] = response_error(resp)
                if key in expect:
                    case.update(expect[key])
                elif any(p.search(case["error"]) for p in OUT_OF_SCOPE):
                    case["decidable"] = False
                    case["why"] = "media support of the model, outside the pairing rules"
            elif key in expect:  # an answer the API of the day gave and has changed since
                case.update(expect[key])
            case["body"] = anon(body)
            out = HERE / provider / f"{name}.json"
            if out.exists() and json.loads(out.read_text()).get("source", {}).get("kind") not in (
                None,
                "recording",
            ):
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n")
            written.append(f"{provider}/{name}.json")
    return written


def main(argv: list[str]) -> None:
    expect_file = HERE / "_expect.json"
    expect = json.loads(expect_file.read_text()) if expect_file.exists() else {}
    for repo, licence, folders in SOURCES:
        if argv and not any(w in repo for w in argv):
            continue
        written = harvest(repo, licence, folders, expect)
        print(f"{repo}: {len(written)} cases")
    for repo, licence, ref, folders in HISTORY:
        if argv and not any(w in repo for w in argv):
            continue
        written = harvest(repo, licence, folders, expect, ref)
        print(f"{repo}@{ref[:8]}: {len(written)} cases")


if __name__ == "__main__":
    main(sys.argv[1:])
