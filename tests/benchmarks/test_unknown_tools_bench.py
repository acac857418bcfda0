"""The unknown-tools benchmark runs (a smoke test: sizes, no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "unknown_tools.py"


def test_benchmark_quick_run_reports_bounded_messages(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("unknown_tools", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(["--quick"])
    assert "unknown=20 tools=1000" in capsys.readouterr().out
    assert results["unknown=20 tools=1000 bytes_per_call"] < 600  # not 1,000 tool names each
