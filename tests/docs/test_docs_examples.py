"""Every ```python block in README.md and docs/ runs, page by page, in a fresh namespace.

Blocks of one page share a namespace (later blocks build on earlier ones) and run
with the repository root as the working directory, so relative paths in examples work.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: str(p),
)
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    """The python code blocks of a markdown page, in order."""
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if python_blocks(p) and "examples/downstream" not in str(p)]


def test_the_docs_have_examples() -> None:
    pages = {p.relative_to(ROOT).as_posix() for p in _pages_with_code()}
    assert {"README.md", "docs/quickstart.md", "docs/scenarios.md"} <= pages


SLOW_PAGES = {"docs/fuzzing.md"}
"""Pages whose examples take seconds (a fuzzing campaign): marked ``slow``."""


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=pytest.mark.slow)
        if p.relative_to(ROOT).as_posix() in SLOW_PAGES
        else p
        for p in _pages_with_code()
    ],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_page_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    module = types.ModuleType(f"docs_example_{page.stem}")  # dataclasses look their module up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for number, block in enumerate(python_blocks(page), start=1):
        code = compile(block, f"{page.name}:block{number}", "exec")
        try:
            exec(code, module.__dict__)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(
                f"{page.relative_to(ROOT)} block {number} failed: {type(exc).__name__}: {exc}"
            )
    assert os.getcwd() == str(ROOT)
