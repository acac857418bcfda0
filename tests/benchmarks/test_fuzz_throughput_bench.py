"""The fuzzing benchmark runs and its work succeeds (a smoke test: no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_throughput.py"


def test_benchmark_quick_run_fuzzes_without_violations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = importlib.util.spec_from_file_location("fuzz_throughput", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert "workers=1" in out and "/s" in out
    report = results["workers=1"]
    # the benchmark's work really happened: scenarios generated, run and checked
    assert report.examples == 20 and not report.failed
    assert len(report.timelines) > 1 and sum(report.errors.values()) == 20
    assert report.per_second > 0
    # it reports the universe sizes it really ran, and each worker's rate
    assert sum(report.sizes.values()) == 20 and "tools/universe mean=" in out
    (rate,) = report.worker_rates().values()
    assert rate > 0 and "(each: " in out
