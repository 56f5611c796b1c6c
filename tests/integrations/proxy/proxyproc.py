"""`toolpair proxy` as a real subprocess (uvicorn), its log read as it runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time


class Proxy:
    def __init__(self, upstream: str, *extra: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolpair",
                "proxy",
                "--upstream",
                upstream,
                "--port",
                "0",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"http://[^:]+:(\d+)", line)
        assert m, line + (self.proc.stderr.read() if self.proc.stderr else "")
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.log: list[str] = []
        self._t = threading.Thread(target=self._drain, daemon=True)
        self._t.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def wait_for(self, text: str) -> str:
        """The log so far, once it holds ``text`` (stderr is read by another thread)."""
        deadline = time.monotonic() + 10
        while text not in "".join(self.log):
            assert time.monotonic() < deadline, self.log
            time.sleep(0.05)
        return "".join(self.log)

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(10)
        self._t.join(5)
        return "".join(self.log)

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
