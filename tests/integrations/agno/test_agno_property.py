"""With the patch on, the body a real agno agent run sends is valid for generated agno
histories, and the stored history is left as it was. (The unpatched verdict agreement
and repair properties are the conformance suite's, in test_conformance.py.)"""

from __future__ import annotations

from agno.models.message import Message
from agno_adapter import PROVIDERS, agent_histories, wire_body
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolpair
from toolpair.integrations import agno as tp_agno


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=agent_histories(), provider=st.sampled_from(PROVIDERS))
def test_patched_wire_is_always_valid(history: list[Message], provider: str) -> None:
    before = [m.model_dump() for m in history]
    with tp_agno.patched():
        body = wire_body(provider, history)
    assert toolpair.validate(body, provider) == []
    assert [m.model_dump() for m in history] == before
