"""The OpenTelemetry import benchmark runs and reads what it wrote (a smoke test: no timing)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "otel_import.py"


def test_benchmark_quick_run_reads_every_conversation(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("otel_import", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--spans", "600", "--repeats", "1"])
    assert results["spans"] >= 600
    assert results["conversations"] > 10  # one per copied trace
    assert "requests; import median" in capsys.readouterr().out
