"""The SDK overhead benchmark runs (a smoke test: no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sdk_overhead.py"


def test_sdk_benchmark_quick_run_prints_a_ratio_table(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("sdk_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["N", "case", "us/iteration", "ratio"]
    assert "chat stream" in out and "responses" in out
    for n in (5, 20):
        assert results[f"N={n} in-process"] > 0
        for case in ("chat", "chat stream", "responses"):
            assert results[f"N={n} {case} ratio"] > 0
