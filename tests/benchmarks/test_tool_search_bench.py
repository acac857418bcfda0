"""The tool-search benchmark runs (a smoke test: the runs are checked, no timing assertion)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tool_search.py"


def test_benchmark_quick_run_reports_the_added_cost(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("tool_search_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--quick"])  # each timed run checks the search, the deferral and the answer
    assert "500 deferred tools + local BM25 search" in capsys.readouterr().out
