"""The OpenAI Agents SDK holds the conformance suite (`toolpair.conformance`) through
its Responses input items, `repair_items`, `trim_filter` and real ``Runner.run`` calls
on the OpenAIResponsesModel and OpenAIChatCompletionsModel (`oa_adapter`)."""

from __future__ import annotations

import pytest
from oa_adapter import OpenAIAgentsAdapter

from toolpair.testing import Conformance


class TestOpenAIAgentsConformance(Conformance):
    adapter = OpenAIAgentsAdapter()
    # An agent run per example: fewer than the pure properties get.
    wire_examples = 40

    # Two suite properties assume what this integration deliberately does otherwise;
    # they run, and are expected to fail until the suite (or the integration) settles it.

    @pytest.mark.xfail(
        strict=True,
        reason="the suite wants load_dump to decline [{'role': 'user', 'content': 'x'}], "
        "but a list of easy input messages is a valid SDK session dump",
    )
    def test_dump_reader_declines_other_json(self) -> None:
        super().test_dump_reader_declines_other_json()

    @pytest.mark.xfail(
        strict=True,
        reason="the suite expects `toolpair check` to imply the portable rules, but the "
        "integration's DEFAULT_PROVIDER (openai-responses, the SDK's default model API) "
        "is what the command implies for SDK session dumps",
    )
    def test_the_command_line_checks_and_repairs_a_dump(self) -> None:
        super().test_the_command_line_checks_and_repairs_a_dump()
