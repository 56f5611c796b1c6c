"""Helpers the wire codecs share."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolpair._model import InvalidHistory, Message, Role

#: Text stood in for a result kept as text (the orphans="text" policy).
ORPHAN_TEXT = "[tool result for call {id} (its call is not in this history)]: {content}"


def thinking_on(value: Any) -> bool:
    """Whether a body's thinking setting (``{type: enabled | adaptive | disabled}`` or a
    flag) turns thinking on."""
    if isinstance(value, Mapping):
        return value.get("type") in ("enabled", "adaptive")
    return bool(value)


def require_mapping(obj: Any, index: int, what: str = "message") -> Mapping[str, Any]:
    if type(obj) is dict:  # the common case, without the ABC check's cost
        return obj
    if not isinstance(obj, Mapping):
        raise InvalidHistory(f"{what} must be an object, got {type(obj).__name__}", index)
    return obj


def require_id(value: Any, index: int, field: str) -> str:
    if not isinstance(value, str):
        if value is None:
            raise InvalidHistory(f"{field} is missing", index)
        raise InvalidHistory(f"{field} must be a string, got {type(value).__name__}", index)
    return value


def optional_id(value: Any, index: int, field: str) -> str | None:
    """A result's id: None where it has none (an orphan result, which repair handles);
    anything but a string or None is malformed."""
    if value is None:
        return None
    return require_id(value, index, field)


def require_list(value: Any, index: int, field: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise InvalidHistory(f"{field} must be a list, got {type(value).__name__}", index)
    return value


def content_is_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list | tuple):
        return len(content) == 0
    return False


def stringify(content: Any) -> str:
    """A plain-text rendering of result content, for the orphans-as-text policy."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        if parts:
            return "\n".join(parts)
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        # Cyclic, absurdly deep or unprintable content: say so rather than fail.
        try:
            return str(content)
        except (RecursionError, ValueError, TypeError):
            return f"<{type(content).__name__} content that cannot be rendered as text>"


def copy_with(template: Message | None, role_value: str, **fields: Any) -> dict[str, Any]:
    """A new dict message: the template's fields, then ``fields``."""
    out: dict[str, Any] = dict(template.native) if template is not None else {}
    out["role"] = role_value
    out.update(fields)
    return out


def role_of(value: Any, index: int, allowed: Mapping[str, Role]) -> Role:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidHistory(f"unknown role {value!r}", index)
    return allowed[value]
