"""The peers benchmark runs and checks every system's work (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from harness import llm_tool

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "peers.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("peers_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quick_run_prints_a_table_with_every_system(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert "| bare loop |" in out and "| harness.run |" in out
    assert results["bare loop N=10 ratio"] == 1.0
    assert results["harness.run N=10"] > 0
    listed = [line for line in out.splitlines() if line.startswith("| ") and "N=" not in line][
        1:
    ]  # after the | --- | line
    assert len(listed) == 2 + len(module.PEERS) - len(results["notes"])
    for note in results["notes"]:
        assert "pip install '.[bench]'" in note


def test_a_failing_harness_tool_makes_the_benchmark_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()

    @llm_tool
    def add(a: int, b: int) -> int:
        """Add two integers (broken)."""
        raise RuntimeError("broken tool")

    module.harness_run(3)
    monkeypatch.setattr(module, "add", add)
    with pytest.raises(RuntimeError, match="did not do the work"):
        module.harness_run(3)


def test_every_system_checks_its_results(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    found = module.systems([])
    for go in found.values():
        go(2)
    monkeypatch.setattr(module, "_expected", lambda n: [0] * n)
    for name, go in found.items():
        with pytest.raises(RuntimeError, match="did not do the work"):
            go(2)
        assert name
