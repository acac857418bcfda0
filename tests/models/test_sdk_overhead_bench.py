"""The SDK overhead benchmark runs and checks the work it times (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from harness import llm_tool

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sdk_overhead.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sdk_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_sdk_benchmark_quick_run_prints_a_ratio_table(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["N", "case", "us/iteration", "vs", "bare+dumps"]
    for n in (5, 20):
        assert results[f"N={n} bare+dumps ratio"] == 1.0
        for case in ("in-process", "sdk floor", *module.SDK_CASES):
            assert results[f"N={n} {case} ratio"] > 0
            assert f"{case}" in out
    assert {"chat stream", "chat async", "responses", "responses stream"} <= set(module.SDK_CASES)


@pytest.mark.parametrize("case", ["in-process", "chat", "chat stream", "chat async", "responses"])
def test_a_tool_that_fails_makes_the_benchmark_fail(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load()

    @llm_tool
    def add(a: int, b: int) -> int:
        """Add two integers (broken)."""
        raise RuntimeError("broken tool")

    module.CASES[case](3)  # the real tool passes the check
    monkeypatch.setattr(module, "add", add)
    with pytest.raises(RuntimeError, match="did not do the work"):
        module.CASES[case](3)


def test_a_wrong_answer_makes_the_benchmark_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()

    @llm_tool
    def add(a: int, b: int) -> int:
        """Add two integers (off by one)."""
        return a + b + 1

    monkeypatch.setattr(module, "add", add)
    for case in ("chat", "sdk floor"):
        with pytest.raises(RuntimeError, match="did not do the work"):
            module.CASES[case](3)
