"""The cost-analysis benchmark runs and its work is real (a smoke test: no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "cost_analysis.py"


def test_benchmark_quick_run_analyses_every_request(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("cost_analysis", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert out.count(" 100 ") == 3  # each format analysed the 100 requests
    for name in module.FORMATS:
        assert results[f"{name} breaks"] == 0  # the first change would be at call 100
        assert results[f"{name} seconds"] > 0
    log = module.record(201)
    _, report = module.measure(log, "anthropic-messages")
    assert [(b.request, b.cause, b.by) for b in report.breaks] == [
        (101, "tools-changed", "every-hundred"),
        (201, "tools-changed", "every-hundred"),
    ]
