"""Type-check the tests with ``mypy --strict``, one folder at a time.

The test folders are not packages (pytest puts each test's folder on ``sys.path``), so
``conftest.py`` and helper names repeat across folders and one mypy run over ``tests/``
cannot tell them apart; each folder is checked on its own, itself first on the path
(then the other folders, whose helpers some tests import).

``TYPED`` lists the folders that pass; CI (``.ci/run``) keeps them passing. Add a folder
once it passes (``python tests/typecheck.py tests/loop`` checks one); ``--all`` checks
every folder and reports the count of errors in each, to see what is left.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

TYPED = [
    "tests",
    "tests/assertions",
    "tests/benchmarks",
    "tests/cassettes",
    "tests/cli",
    "tests/docs",
    "tests/fuzz",
    "tests/fuzz/agent",
    "tests/fuzz/universe",
    "tests/mcp",
    "tests/plugin",
    "tests/release",
    "tests/scenarios",
]
"""Folders (of their own files, not their subfolders) that pass ``mypy --strict``."""


def _folders() -> list[Path]:
    """Every folder under ``tests/`` holding Python files (nested ones too: helpers such as
    ``tests/fuzz/universe/planted.py`` are imported from other folders)."""
    return sorted({p.parent for p in TESTS.rglob("*.py")} - {TESTS})


def check(folder: str) -> tuple[int, str]:
    """mypy's exit status and output for the ``.py`` files directly in ``folder``."""
    path = ROOT / folder
    files = sorted(str(p.relative_to(ROOT)) for p in path.glob("*.py"))
    others = [str(p) for p in _folders() if p != path]
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(path), str(TESTS), *others])}
    done = subprocess.run(
        # an ignore a library version needs and another does not is not an error here
        [sys.executable, "-m", "mypy", "--strict", "--no-warn-unused-ignores", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def main(argv: list[str]) -> int:
    everything = "--all" in argv
    folders = [a for a in argv if not a.startswith("-")] or (
        sorted({"tests", *(str(p.relative_to(ROOT)) for p in _folders())}) if everything else TYPED
    )
    failed = 0
    for folder in folders:
        if not any((ROOT / folder).glob("*.py")):
            continue
        status, output = check(folder)
        last = output.strip().splitlines()[-1] if output.strip() else ""
        print(f"{folder}: {last}")
        if status:
            failed += 1
            if not everything:
                print(output)
    return 1 if failed and not everything else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
