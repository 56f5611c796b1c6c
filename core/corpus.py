"""The corpus that grows from every deployment: where toolpair and a provider disagreed.

Wherever toolpair stands in front of a provider it sees both halves: its own verdict on
the body that went out, and the provider's answer. A `Recorder` keeps the cases where the
two disagree, as anonymised cases in the format of the project's recorded corpus
(``tests/recorded``): the provider refused (400 or 422) a body toolpair called valid, or
accepted (2xx) a body toolpair would have changed. ``toolpair corpus check DIR`` holds
toolpair to such a folder, and to the recorded corpus itself (`judge`, `figures`).

    recorder = Recorder("/var/lib/toolpair/corpus", per_hour=60)
    recorder.observe(body, provider="anthropic", model="claude-sonnet-4-5",
                     valid=True, status=400, error=error_json)

What a case keeps and what it replaces is set out in ``docs/corpus.md``; the rules are
here (`anonymise`) and nowhere else. Recording never raises into the caller's request:
a failure to write is logged once, and cases dropped by the hourly cap are counted and
logged, never silently lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolpair import _api, events
from toolpair._model import ToolpairError

__all__ = [
    "REFUSED",
    "CaseError",
    "Figures",
    "Recorder",
    "Verdict",
    "anonymise",
    "figures",
    "judge",
    "read_cases",
    "table",
]

logger = logging.getLogger("toolpair.corpus")

#: The statuses that are a refusal of the request itself (not auth, rate limit, a
#: missing model or the server's own failure).
REFUSED = frozenset({400, 422})

# -- anonymisation -----------------------------------------------------------------------

#: Keys whose string values are structure, not content: kept verbatim (outside tool
#: arguments and outputs, which are replaced whole).
KEEP = frozenset(
    {
        "role",
        "type",
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "toolUseId",
        "caller_id",
        "name",
        "status",
        "execution",
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
        "detail",
        "reasoning_effort",
        "effort",
        "phase",
        "ttl",
        "anthropic_version",
    }
)
#: Opaque provider tokens (signatures, encrypted reasoning): replaced by a digest, so that
#: equal tokens stay equal and an absent or empty one stays so; the documented stand-ins
#: are kept, since rules read them.
SIGNATURES = frozenset(
    {
        "signature",
        "thoughtSignature",
        "thought_signature",
        "encrypted_content",
        "redacted_content",
        "data_signature",
    }
)
SIGNATURE_STAND_INS = frozenset(
    {"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
)
#: Payloads (images, files, redacted thinking) and links to them.
BINARY = frozenset(
    {"data", "bytes", "image_url", "file_data", "url", "uri", "fileUri", "file_uri", "file_id"}
)
#: Tool arguments and arbitrary tool outputs (objects): keys kept, every value replaced.
#: (A Responses ``input`` is a list of items, not arguments: it is read item by item.)
DATA = frozenset({"input", "args", "arguments", "response", "json"})
#: Tool arguments sent as JSON text.
_JSON_TEXT = frozenset({"arguments", "partial_json"})
#: Tool schemas: keys and types kept, every text in them replaced.
SCHEMAS = frozenset(
    {
        "parameters",
        "input_schema",
        "inputSchema",
        "schema",
        "parametersJsonSchema",
        "responseJsonSchema",
        "response_schema",
        "responseSchema",
    }
)
_SCHEMA_KEEP = frozenset({"type", "format", "$ref", "required"})
#: Roles whose message-level ``name`` is a person or participant, not a tool.
_PARTICIPANTS = frozenset({"user", "system", "developer", "assistant"})

_THINK_TAG = re.compile(r"</?think>")
_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")


def _filler(n: int) -> str:
    """Exactly ``n`` neutral characters, never ending in a space."""
    out = ""
    i = 0
    while len(out) < n:
        out += _WORDS[i % len(_WORDS)] + " "
        i += 1
    out = out[:n]
    return out[:-1] + "." if out.endswith(" ") else out


def placeholder(s: str) -> str:
    """Same length, same leading and trailing whitespace, ``<think>`` tags kept (DeepSeek
    reads them), every other character neutral."""
    if not s.strip():
        return s
    parts = _THINK_TAG.split(s)
    tags = _THINK_TAG.findall(s)
    out: list[str] = []
    for k, part in enumerate(parts):
        core = part.strip()
        if core:
            lead = part[: len(part) - len(part.lstrip())]
            trail = part[len(part.rstrip()) :]
            out.append(lead + _filler(len(core)) + trail)
        else:
            out.append(part)
        if k < len(tags):
            out.append(tags[k])
    return "".join(out)


def _digest(value: str) -> str:
    if not value or value in SIGNATURE_STAND_INS:
        return value
    return "redacted-" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:32]


def _binary(value: str) -> str:
    if not value:
        return value
    if value.startswith("data:"):
        head = value[5:].split(",", 1)[0].split(";", 1)[0]
        mime = head if re.fullmatch(r"[\w.+-]+/[\w.+-]+", head) else ""
        return f"data:{mime};base64,AAAA"
    scheme = re.match(r"([a-z][a-z0-9+.-]*)://", value, re.I)
    if scheme:
        return f"{scheme.group(1).lower()}://redacted.invalid/"
    return "AAAA"


class _Anonymiser:
    def __init__(self) -> None:
        #: Every replaced text, for scrubbing the error (which may quote it).
        self.replaced: dict[str, str] = {}

    def text(self, s: str) -> str:
        out = placeholder(s)
        if out != s and len(s.strip()) >= 4:
            self.replaced[s] = out
        return out

    def data(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return 0
        if isinstance(value, float):
            return 0.0
        return self.text(str(value))

    def json_text(self, s: str) -> str:
        try:
            value = json.loads(s)
        except ValueError:
            return self.text(s)
        if not isinstance(value, dict | list):
            return self.text(s)
        return json.dumps(self.data(value), separators=(",", ":"), ensure_ascii=False)

    def schema(self, value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            return {str(k): self.schema(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.schema(v, key) for v in value]
        if isinstance(value, str):
            return value if key in _SCHEMA_KEEP else self.text(value)
        return value

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            participant = value.get("role") in _PARTICIPANTS
            out: dict[str, Any] = {}
            for k0, v in value.items():
                k = str(k0)
                if k in DATA and isinstance(v, Mapping):
                    out[k] = self.data(v)
                elif k in _JSON_TEXT and isinstance(v, str):
                    out[k] = self.json_text(v)
                elif k == "json" and isinstance(v, list):
                    out[k] = self.data(v)
                elif k in SCHEMAS:
                    out[k] = self.schema(v)
                elif k == "name" and participant and isinstance(v, str):
                    out[k] = self.text(v)
                else:
                    out[k] = self.value(v, k)
            return out
        if isinstance(value, list | tuple):
            return [self.value(v, key) for v in value]
        if isinstance(value, str):
            if key in SIGNATURES:
                return _digest(value)
            if key in BINARY:
                return _binary(value)
            if key in KEEP:
                return value
            return self.text(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        return self.text(str(value))

    def scrub(self, error: str) -> str:
        error = _URL_QUERY.sub(r"\1", error)
        for original in sorted(self.replaced, key=len, reverse=True):
            if original in error:
                error = error.replace(original, self.replaced[original])
        return error


_URL_QUERY = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s?#\"'<>()]*)[?#][^\s\"'<>()]*", re.I)


def anonymise(body: Any) -> Any:
    """``body`` with every text, tool argument and tool output replaced (see the module
    docstring of `toolpair.corpus` and ``docs/corpus.md`` for exactly what is kept)."""
    return _Anonymiser().value(body)


def error_text(error: object) -> str:
    """The provider's own words from a parsed error body, its raw text or an exception."""
    if error is None:
        return ""
    if isinstance(error, bytes | bytearray):
        error = bytes(error).decode("utf-8", "replace")
    if isinstance(error, str):
        try:
            parsed = json.loads(error)
        except ValueError:
            return error
        if not isinstance(parsed, dict | list):
            return error
        error = parsed
    if isinstance(error, Mapping):
        err = error.get("error", error)
        if isinstance(err, Mapping):
            msg = err.get("message")
            if isinstance(msg, str):
                return msg
            return json.dumps(err, ensure_ascii=False, default=str)
        if isinstance(err, str):
            return err
        msg = error.get("message")
        return msg if isinstance(msg, str) else json.dumps(error, default=str)
    if isinstance(error, list):
        return json.dumps(error, ensure_ascii=False, default=str)
    return str(error)


def _host(host: str | None) -> str:
    if not host:
        return ""
    if "://" in host:
        try:
            name = urlsplit(host).hostname or ""
        except ValueError:
            name = ""
        return name
    host = host.split("?", 1)[0].split("#", 1)[0]
    if "@" in host:
        host = host.rsplit("@", 1)[1]
    return host.split("/", 1)[0] if "/" in host and " " not in host else host


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    return cleaned or "unknown"


# -- recording ---------------------------------------------------------------------------


class Recorder:
    """Records each disagreement between toolpair and a provider as an anonymised case
    under ``directory/<provider>/<digest>.json``, at most ``per_hour`` per rolling hour.

    Thread-safe; `observe` never raises. The same case (same anonymised body, answer and
    model) is written once: observing it again returns the existing file and does not
    count against the cap.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        per_hour: int = 60,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_hour < 0:
            raise ValueError(f"per_hour must be 0 or more, not {per_hour}")
        self.directory = Path(directory)
        self.per_hour = per_hour
        self.written = 0
        #: Disagreements not written because of the hourly cap.
        self.dropped = 0
        self._clock = clock
        self._lock = threading.Lock()
        self._recent: deque[float] = deque()
        self._cap_warned: float | None = None
        self._write_warned = False
        self._known: set[str] = set()

    def observe(
        self,
        sent: Mapping[str, Any],
        *,
        provider: str,
        model: str | None = None,
        host: str | None = None,
        valid: bool,
        status: int,
        error: object = None,
        source: str = "library",
        format: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Path | None:
        """Record ``sent`` if toolpair's verdict (``valid``) and the provider's answer
        (``status``, ``error``) disagree; the path of the case, else None."""
        try:
            kind = disagreement(valid, status)
            if kind is None or not isinstance(sent, Mapping):
                return None
            return self._record(
                kind, sent, provider, model, host, valid, status, error, source, format, context
            )
        except Exception as e:  # never into the caller's request path
            self._failed(e)
            return None

    def observe_bytes(
        self,
        raw: bytes | bytearray | memoryview | str,
        *,
        provider: str,
        model: str | None = None,
        host: str | None = None,
        valid: bool,
        status: int,
        error: object = None,
        source: str = "library",
        format: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Path | None:
        """`observe` for a gateway holding the raw request body; a body that is not a
        JSON object is not a case (None)."""
        try:
            if disagreement(valid, status) is None:
                return None
            data = bytes(raw) if not isinstance(raw, str) else raw.encode()
            sent = json.loads(data)
        except Exception:
            return None
        if not isinstance(sent, dict):
            return None
        return self.observe(
            sent,
            provider=provider,
            model=model,
            host=host,
            valid=valid,
            status=status,
            error=error,
            source=source,
            format=format,
            context=context,
        )

    def _record(
        self,
        kind: str,
        sent: Mapping[str, Any],
        provider: str,
        model: str | None,
        host: str | None,
        valid: bool,
        status: int,
        error: object,
        source: str,
        format: str | None,
        context: Mapping[str, Any] | None,
    ) -> Path | None:
        an = _Anonymiser()
        body = an.value(sent)
        if model is None and isinstance(sent.get("model"), str):
            model = sent["model"]
        case: dict[str, Any] = {
            "source": {"kind": "deployment", "via": str(source), "toolpair": _version()},
            "provider": str(provider),
            "host": _host(host),
            "model": model or "",
            "date": datetime.now(timezone.utc).date().isoformat(),
            "status": int(status),
        }
        if kind == "refused":
            case["error"] = an.scrub(error_text(error))[:4000]
        case["disagreement"] = kind
        if format is not None:
            case["format"] = format
        if context:
            case["context"] = {
                k: v for k, v in context.items() if isinstance(v, bool | int | float | str)
            }
        case["body"] = body
        identity = {k: v for k, v in case.items() if k not in ("source", "date")}
        digest = hashlib.sha256(
            json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()[:20]
        folder = self.directory / _safe_name(str(provider))
        path = folder / f"{digest}.json"
        if path.exists():
            return path
        admitted = self._admit(digest)
        if admitted is not True:
            return path if admitted == "known" else None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, json.dumps(case, indent=1, ensure_ascii=False) + "\n")
        except BaseException:
            with self._lock:
                self._known.discard(digest)
            raise
        with self._lock:
            self.written += 1
        return path

    def _admit(self, digest: str) -> bool | str:
        """True: write it; ``"known"``: written (or being written) already; False: the
        hourly cap is reached."""
        with self._lock:
            if digest in self._known:
                return "known"
            now = self._clock()
            while self._recent and now - self._recent[0] >= 3600.0:
                self._recent.popleft()
            if len(self._recent) < self.per_hour:
                self._recent.append(now)
                self._known.add(digest)
                return True
            self.dropped += 1
            warn = self._cap_warned is None or now - self._cap_warned >= 3600.0
            if warn:
                self._cap_warned = now
            dropped = self.dropped
        if warn:
            logger.warning(
                "toolpair corpus: %d disagreement(s) in the last hour reached the cap of "
                "%d per hour; further ones are not recorded for now (%d dropped so far)",
                self.per_hour,
                self.per_hour,
                dropped,
            )
        return False

    def _failed(self, e: BaseException) -> None:
        with self._lock:
            first, self._write_warned = not self._write_warned, True
        if first:
            logger.warning(
                "toolpair corpus: could not record a case in %s (%s: %s); the request "
                "was not affected, and further failures are not logged",
                self.directory,
                type(e).__name__,
                e,
            )


def disagreement(valid: bool, status: int) -> str | None:
    """``"refused"`` (a refusal of a body toolpair called valid), ``"accepted"`` (an
    acceptance of a body toolpair would have changed), or None (they agree, or the
    answer says nothing about the body: auth, rate limit, the server's own failure)."""
    if valid and status in REFUSED:
        return "refused"
    if not valid and 200 <= status < 300:
        return "accepted"
    return None


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _version() -> str:
    # Not ``toolpair.__version__``: the package's root sits above every layer.
    try:
        return version("toolpair")
    except PackageNotFoundError:
        return ""


# -- judging a corpus --------------------------------------------------------------------


class CaseError(ToolpairError):
    """A file in a corpus folder that is not a readable case."""


@dataclass
class Verdict:
    """toolpair against one case: what validate says of the body (with the case's model,
    format and context) beside the provider's answer, and what repair makes of it."""

    name: str
    case: dict[str, Any]
    codes: list[tuple[str, int, str]] = field(default_factory=list)
    error: str = ""  # toolpair raised instead of answering
    agrees: bool = False
    located: bool = False
    changed: bool = False  # repair changed an accepted body
    fixes: list[str] = field(default_factory=list)
    repaired_valid: bool = True  # repair left a refused body valid
    left: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return int(self.case["status"]) < 400

    @property
    def decidable(self) -> bool:
        return bool(self.case.get("decidable", True))

    @property
    def provider(self) -> str:
        return str(self.case["provider"])

    @property
    def locatable(self) -> bool:
        """A refusal whose error names a message index toolpair can be held to."""
        return isinstance((self.case.get("expect") or {}).get("index"), int)

    @property
    def missed(self) -> bool:
        """A refusal toolpair found nothing in."""
        return not self.accepted and not self.codes and not self.error


def family(code: str) -> str:
    return code.split(".", 1)[-1]


def read_cases(
    directory: str | os.PathLike[str], *, errors: list[str] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """Every case under ``directory`` (``<provider>/<name>.json``, at any depth), named by
    its path below it; files and folders whose name starts with ``_`` or ``.`` are not
    cases. Raises `CaseError` for a missing folder, and for a file that is not a case
    unless ``errors`` is given: then it is named there and the others are read."""
    root = Path(directory)
    if not root.is_dir():
        raise CaseError(f"{root}: not a directory")
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if any(part.startswith(("_", ".")) for part in rel.parts):
            continue
        try:
            out.append((rel.as_posix(), _read_case(path)))
        except CaseError as e:
            if errors is None:
                raise
            errors.append(str(e))
    return out


def _read_case(path: Path) -> dict[str, Any]:
    try:
        case = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CaseError(f"{path}: {e}") from None
    if not isinstance(case, dict):
        raise CaseError(f"{path}: not a case (a JSON object)")
    missing = [k for k in ("provider", "status", "body") if k not in case]
    if missing:
        raise CaseError(f"{path}: not a case (no {', '.join(missing)})")
    if not isinstance(case["status"], int) or not isinstance(case["provider"], str):
        raise CaseError(f"{path}: not a case (status must be a number, provider a name)")
    return case


def _kwargs(case: Mapping[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = dict(case.get("context") or {})
    if case.get("model"):
        kw["model"] = case["model"]
    if case.get("format"):
        kw["format"] = case["format"]
    return kw


def _key(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    for key in ("messages", "input", "contents"):
        if key in body:
            return key
    return None


def judge(name: str, case: dict[str, Any]) -> Verdict:
    """toolpair's verdict on one case. A refusal agrees when toolpair finds a violation of
    the family the error names (``expect``) at the index it names; a refusal recorded by a
    deployment names none yet, and agrees when toolpair finds any violation."""
    v = Verdict(name, case)
    body, provider, kw = case["body"], case["provider"], _kwargs(case)
    try:
        found = _api.validate(body, provider, **kw)
    except (ToolpairError, TypeError) as e:
        v.error = f"{type(e).__name__}: {e}"
        return v
    v.codes = [(x.code, x.index, x.message) for x in found]
    expect = case.get("expect") or {}
    fams = expect.get("family")
    families = [fams] if isinstance(fams, str) else list(fams or [])
    index = expect.get("index")
    if v.accepted:
        v.agrees = not found
    else:
        v.located = index is not None and any(x.index == index for x in found)
        if families:
            v.agrees = any(
                family(x.code) in families and (index is None or x.index == index) for x in found
            )
        else:
            v.agrees = bool(found) and (index is None or v.located)
    with events.silenced():  # a verdict on a recorded case, not a request repaired
        result = _api.repair(body, provider, **kw)
    v.fixes = [str(f) for f in result.fixes]
    key = _key(body)
    if v.accepted:
        before = body[key] if key else body
        after = result.messages[key] if key else result.messages
        same = len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True))
        v.changed = bool(result.fixes) or not same
    else:
        left = _api.validate(result.messages, provider, **kw)
        v.left = [(x.code, x.index, x.message) for x in left]
        v.repaired_valid = not left and not result.unrepaired
    return v


def judge_all(named: Iterable[tuple[str, dict[str, Any]]]) -> tuple[Verdict, ...]:
    """`judge` over many cases, without repair's one warning per changed history (on a
    corpus, hundreds of them, and none is news)."""
    log = logging.getLogger("toolpair")
    was, log.disabled = log.disabled, True
    try:
        return tuple(judge(name, case) for name, case in named)
    finally:
        log.disabled = was


@dataclass(frozen=True)
class Figures:
    total: int
    accepted: int
    refused: int
    decidable: int
    agree: int
    changed_accepted: int
    located: int
    refused_decidable: int
    unrepaired_refused: int
    missed_refusals: int = 0
    locatable: int = 0

    @property
    def share(self) -> float:
        return self.agree / self.decidable if self.decidable else 1.0

    def line(self) -> str:
        return (
            f"recorded: {self.total} cases ({self.accepted} accepted, {self.refused} refused), "
            f"agreement {self.agree}/{self.decidable} ({100 * self.share:.1f}%), "
            f"changed-accepted {self.changed_accepted}, "
            f"located {self.located}/{self.locatable}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.total,
            "accepted": self.accepted,
            "refused": self.refused,
            "decidable": self.decidable,
            "agree": self.agree,
            "agreement": round(self.share, 4),
            "changed_accepted": self.changed_accepted,
            "missed_refusals": self.missed_refusals,
            "located": self.located,
            "locatable": self.locatable,
            "unrepaired_refused": self.unrepaired_refused,
        }


def figures(vs: Sequence[Verdict]) -> Figures:
    dec = [v for v in vs if v.decidable]
    refused = [v for v in dec if not v.accepted]
    return Figures(
        total=len(vs),
        accepted=sum(v.accepted for v in vs),
        refused=sum(not v.accepted for v in vs),
        decidable=len(dec),
        agree=sum(v.agrees for v in dec),
        changed_accepted=sum(v.changed for v in dec if v.accepted),
        located=sum(v.located for v in refused),
        refused_decidable=len(refused),
        unrepaired_refused=sum(not v.repaired_valid for v in refused),
        missed_refusals=sum(v.missed for v in refused),
        locatable=sum(v.locatable for v in refused),
    )


def table(vs: Sequence[Verdict]) -> dict[str, Figures]:
    """`figures` per provider, in name order."""
    by: dict[str, list[Verdict]] = {}
    for v in vs:
        by.setdefault(v.provider, []).append(v)
    return {p: figures(by[p]) for p in sorted(by)}


def disagrees(v: Verdict) -> bool:
    """A decidable case where toolpair and the provider's answer differ."""
    return v.decidable and (not v.agrees or (v.accepted and v.changed))
