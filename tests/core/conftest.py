import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    # The corpus figures, whenever the corpus test ran (its module caches the verdicts).
    recorded = sys.modules.get("tests.support.recorded")
    if recorded is not None and recorded.verdicts.cache_info().currsize:
        terminalreporter.write_line(recorded.figures().line())
