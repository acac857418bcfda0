"""The serve latency benchmark runs against a real ``harness serve`` and the reference server,
checks every answer and prints its table (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "serve_latency.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_latency_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quick_run_prints_the_table_for_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    results = _load().main(["--quick"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "format",
        "metric",
        "harness",
        "reference",
        "ratio",
        "target",
    ]
    assert list(results) == ["chat", "responses", "messages", "mcp"]
    for fmt, table in results.items():
        assert set(table) == {"harness", "reference", "ratio"}
        metrics = table["harness"]
        assert set(table["reference"]) == set(table["ratio"]) == set(metrics)
        assert all(value > 0 for part in table.values() for value in part.values()), table
        assert {"round trip p50 ms", "round trip p99 ms", "rps 64 clients"} <= set(metrics)
        streamed = fmt != "mcp"
        assert ("first event p50 ms" in metrics) == streamed
        p50 = table["ratio"]["round trip p50 ms"]
        assert p50 == metrics["round trip p50 ms"] / table["reference"]["round trip p50 ms"]
        assert f"{fmt}  " in out and f"{p50:.2f}x" in out
    assert out.count("<= 2x") == 7 and out.count(">= 0.5x") == 4


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["chat", "mcp"])
def test_a_wrong_answer_makes_the_benchmark_fail(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    if fmt == "mcp":
        monkeypatch.setattr(module, "TOOLS_MODULE", module.TOOLS_MODULE.replace("sunny", "rainy"))
        expected = "mcp: expected 'sunny in Paris'"
    else:
        monkeypatch.setattr(
            module, "SCENARIO", module.SCENARIO.replace("city: Paris", "city: Lyon")
        )
        expected = "chat: expected get_weather"
    with pytest.raises(RuntimeError, match=expected):
        module.main(["--quick", "--formats", fmt])


def test_unknown_formats_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _load().main(["--formats", "chat,gemini"])
    assert "unknown formats ['gemini']" in capsys.readouterr().err
