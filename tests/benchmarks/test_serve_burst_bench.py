"""The serve burst benchmark runs against a real `harness serve` and checks every answer
(no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "serve_burst.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_burst_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_reports_both_cases(capsys: pytest.CaptureFixture[str]) -> None:
    results = _load().main(["--quick"])
    out = capsys.readouterr().out
    assert "burst:" in out and "slow:" in out
    burst, slow = results["burst"], results["slow"]
    assert burst["clients"] == 40 and burst["200"] + burst["503"] + burst["no answer"] == 40
    assert slow["slow clients"] == 4 and slow["requests"] > 0


def test_a_200_without_the_reply_makes_the_benchmark_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = _load()
    monkeypatch.setattr(module, "SCENARIO", module.SCENARIO.replace("pong", "other"))
    with pytest.raises(RuntimeError, match="a 200 without the scripted reply"):
        module.main(["--quick"])
