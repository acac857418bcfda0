"""The Gemini SDK overhead benchmark runs and checks the work it times (no timing
assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gemini_overhead.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gemini_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_quick_run_prints_a_ratio_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    results = module.main(["--quick", "--repeats", "1"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["N", "case", "us/iteration", "vs", "bare", "sdk"]
    for n in (5, 10):
        assert results[f"N={n} bare sdk ratio"] == 1.0
        for case in module.CASES:
            assert results[f"N={n} {case} ratio"] > 0 and case in out


@pytest.mark.parametrize("case", ["bare sdk", "adapter", "adapter stream", "adapter+fake"])
def test_a_wrong_sum_makes_the_case_fail(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    module.CASES[case](3)  # does the work
    monkeypatch.setattr(module, "_plus", lambda a, b: a - b)
    with pytest.raises(RuntimeError, match="did not do the work"):
        module.CASES[case](3)
