"""The Bedrock SDK-path benchmark runs and checks the work it times (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bedrock_overhead.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bedrock_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quick_run_prints_a_ratio_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["N", "case", "us/iteration"]
    for n in (5, 20):
        assert results[f"N={n} boto3 floor ratio"] == 1.0
        for case in module.CASES:
            assert results[f"N={n} {case} ratio"] > 0 and case in out


def test_a_wrong_answer_makes_the_benchmark_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    monkeypatch.setattr(module, "_steps", lambda n: [module.reply("done")])  # no calls made
    with pytest.raises(RuntimeError, match="did not do the work: 0/3 calls"):
        module.CASES["converse"](3)
    with pytest.raises(RuntimeError, match="did not do the work"):
        module.CASES["in-process"](3)
