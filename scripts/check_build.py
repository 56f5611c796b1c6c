"""Build the sdist and the wheel and fail on any warning of the build, on a module of
either package root missing from the wheel, or on a licence not declared as SPDX.

Run by the lint env: packaging that warns today is packaging that breaks when
setuptools turns the warning into an error."""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROOTS = {"core": "toolpair", "integrations": "toolpair/integrations"}
#: Lines a build prints that are not about the package (the interpreter's own settings).
NOT_OURS = re.compile(r"byte-compiling is disabled|Running pip as the 'root' user")


def main() -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, str(ROOT)],
            capture_output=True,
            text=True,
            env=env,
        )
        log = run.stdout + run.stderr
        if run.returncode:
            print(log)
            print("check_build: the build failed")
            return 1
        warnings = [
            line
            for line in log.splitlines()
            if re.search(r"warn|deprecat", line, re.I) and not NOT_OURS.search(line)
        ]
        wheel = next(Path(out).glob("*.whl"))
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
            meta = email.message_from_bytes(z.read(meta_name))
    problems = [f"build warning: {w.strip()}" for w in warnings]
    for src, dest in ROOTS.items():
        for f in sorted((ROOT / src).rglob("*")):
            if f.suffix not in (".py", ".json", ".typed") or "__pycache__" in f.parts:
                continue
            if src == "core" and f.relative_to(ROOT / src).parts[0] == "integrations":
                continue
            inside = f"{dest}/{f.relative_to(ROOT / src).as_posix()}"
            if inside not in names:
                problems.append(f"missing from the wheel: {inside}")
    if meta.get("License-Expression") != "MIT":
        problems.append(f"License-Expression is {meta.get('License-Expression')!r}, not 'MIT'")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("the LICENSE file is not in the wheel")
    for p in problems:
        print(f"check_build: {p}")
    if not problems:
        print(f"check_build: {wheel.name}: {len(names)} files, no warning")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
