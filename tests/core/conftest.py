import sys
from typing import Any

pytest_plugins = ["pytester"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    # The corpus figures, whenever the corpus test ran (its module caches the verdicts).
    recorded = sys.modules.get("recorded")
    if recorded is not None and recorded.verdicts.cache_info().currsize:
        terminalreporter.write_line(recorded.figures().line())
