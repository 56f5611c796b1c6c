"""For the ``toolpair`` command and the pytest plugin: reading SDK session items (a JSON
list, or a ``SQLiteSession`` database file), and the canonical poisoned history.
Standard library only, so the command reads session files without the SDK installed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from toolpair._model import Codec
from toolpair.formats import CODECS
from toolpair.integrations._poisoned import INTERRUPTED, QUESTION, RESULT, calls

#: The provider a session dump is checked against when the command is given none: the
#: SDK's default model class speaks the Responses API.
DEFAULT_PROVIDER = "openai-responses"


def _codec() -> Codec:
    return CODECS["openai-responses"]


def load_dump(obj: Any) -> tuple[list[Any], Codec] | None:
    """The items of a session dump (``await session.get_items()`` written as JSON) and
    the codec that reads them; None when ``obj`` is not a list of input items."""
    if not isinstance(obj, list) or not all(isinstance(i, Mapping) for i in obj):
        return None
    if obj and not all("type" in i or "role" in i for i in obj):
        return None
    return list(obj), _codec()


def dump_messages(messages: Sequence[Any]) -> Any:
    """The JSON-able list of ``messages`` (items are plain dicts already)."""
    return list(messages)


def load_session_file(
    path: str,
    session_id: str | None = None,
    *,
    sessions_table: str = "agent_sessions",
    messages_table: str = "agent_messages",
) -> list[Any]:
    """The items ``SQLiteSession(session_id, path).get_items()`` would return, read with
    the standard library and in the session's order. Without ``session_id`` the file must
    hold exactly one session. Raises ``ValueError`` naming what is wrong."""
    for table in (sessions_table, messages_table):
        if not table.replace("_", "").isalnum():
            raise ValueError(f"bad table name {table!r}")
    uri = f"file:{path}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as e:
        raise ValueError(f"cannot open the session database: {e}") from None
    try:
        try:
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT DISTINCT session_id FROM {messages_table} ORDER BY session_id"
                )
            ]
        except sqlite3.Error as e:
            raise ValueError(f"not an Agents SDK session database: {e}") from None
        if session_id is None:
            if len(ids) != 1:
                shown = ", ".join(map(str, ids[:10])) or "none"
                raise ValueError(
                    f"the database holds {len(ids)} sessions ({shown}); name one with --session-id"
                )
            session_id = ids[0]
        elif session_id not in ids:
            raise ValueError(f"no session {session_id!r} in the database")
        rows = conn.execute(
            f"SELECT message_data FROM {messages_table} WHERE session_id = ? ORDER BY id ASC",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()
    items: list[Any] = []
    for (data,) in rows:
        try:
            items.append(json.loads(data))
        except (TypeError, json.JSONDecodeError):
            # SQLiteSession skips rows it cannot decode; so does this reader.
            continue
    return items


def poisoned_history() -> tuple[list[Any], Codec]:
    """A fresh poisoned history of SDK items and its codec: two parallel calls, the
    first never answered, the second's output sent after a user message."""
    answered, _, output = RESULT
    return [
        {"role": "user", "content": QUESTION},
        *(
            {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}
            for cid, name, args in calls()
        ),
        {"role": "user", "content": INTERRUPTED},
        {"type": "function_call_output", "call_id": answered, "output": output},
    ], _codec()
