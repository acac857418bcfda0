"""The loop benchmark runs (a smoke test: no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "loop_overhead.py"


def test_benchmark_quick_run_reports_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("loop_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert "N=100 tools=10000" in out
    assert results["N=10 tools=10"] > 0
    assert "tools_ratio" in results
    # the harness loop and the bare loop compute the same answer
    assert module.harness_loop(3, 10)().output == "done"
    assert module.bare_loop(3, 10)() == "done"
