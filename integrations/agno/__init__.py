"""toolpair for agno: every request agno formats is built from a repaired copy of the
messages, for every model class, while the stored runs and sessions stay untouched.

    from toolpair.integrations import agno as toolpair_agno
    toolpair_agno.patch()            # every agno model, globally (unpatch() reverses it)
    with toolpair_agno.patched(): ...
    toolpair_agno.guard(model)       # one model instance only
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import toolpair
from toolpair import Policy, Violation
from toolpair.integrations.agno._codec import AgnoCodec
from toolpair.integrations.agno._history import select_history
from toolpair.integrations.agno._hooks import poisoned_history
from toolpair.integrations.agno._patch import (
    PROVIDER_BY_CLASS,
    guard,
    is_guarded,
    is_patched,
    model_for,
    patch,
    patched,
    provider_for,
    repair_messages,
    unguard,
    unpatch,
)


def validate_messages(
    messages: Sequence[Any], provider: str, *, model: str | None = None
) -> list[Violation]:
    """What ``provider`` (serving ``model``, a model id) would reject in this agno
    history, read at the agno level."""
    return toolpair.validate(list(messages), provider, model=model, format=AgnoCodec(provider))


__all__ = [
    "PROVIDER_BY_CLASS",
    "AgnoCodec",
    "Policy",
    "guard",
    "is_guarded",
    "is_patched",
    "model_for",
    "patch",
    "patched",
    "poisoned_history",
    "provider_for",
    "repair_messages",
    "select_history",
    "unguard",
    "unpatch",
    "validate_messages",
]
