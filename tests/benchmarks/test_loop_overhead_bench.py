"""The loop benchmark runs and checks the work it times (a smoke test: no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from harness import llm_tool

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "loop_overhead.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("loop_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_quick_run_reports_every_target(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    results = module.main(["--quick"])
    out = capsys.readouterr().out
    for name in ("run/bare N=10", "run/bare N=100", "many/10 tools N=10", "arun/run"):
        assert results[name] > 0
        assert name in out
    assert "run N=10, 1,000 functions" in out
    assert module.harness_loop(3, 10)().output == "done"
    assert module.bare_loop(3, 10)() == "done"


def test_the_guard_is_run_at_most_4x_the_bare_loop_at_1000() -> None:
    module = _load()
    assert module.TARGETS["run/bare N=1000"] == 4.0
    within = {"run/bare N=1000": 4.0, "many/10 tools N=10": 1.5, "arun/run": 1.3}
    assert module.missed(within) == []
    assert module.missed({**within, "run/bare N=1000": 4.01}) == ["run/bare N=1000"]
    assert module.missed({"run/bare N=10": 9.0}) == []  # only the measured targets count


def test_check_exits_with_the_missed_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    monkeypatch.setattr(module, "TARGETS", {"arun/run": 0.0, "many/10 tools N=10": 1e9})
    with pytest.raises(SystemExit, match="missed: arun/run"):
        module.main(["--quick", "--check"])
    assert module.main(["--quick"])["arun/run"] > 0  # without --check it only reports


def _broken(module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    @llm_tool
    def add(a: int, b: int) -> int:
        """Add two integers (broken)."""
        raise RuntimeError("broken tool")

    @llm_tool(name="add")
    async def add_async(a: int, b: int) -> int:
        """Add two integers (broken)."""
        raise RuntimeError("broken tool")

    monkeypatch.setattr(module, "add", add)
    monkeypatch.setattr(module, "add_async", add_async)


@pytest.mark.parametrize(
    "case",
    [
        ("harness_loop", (3, 10)),
        ("function_list_loop", (3, 10)),
        ("async_loop", (3, "run")),
        ("async_loop", (3, "run sync")),
        ("async_loop", (3, "arun")),
    ],
    ids=lambda c: f"{c[0]}{c[1]}",
)
def test_a_failing_tool_makes_the_timed_runs_fail(
    case: tuple[str, tuple[object, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load()
    factory, arguments = case
    getattr(module, factory)(*arguments)()  # the real tool passes the check
    _broken(module, monkeypatch)
    with pytest.raises(RuntimeError, match="did not do the work"):
        getattr(module, factory)(*arguments)()


def test_a_wrong_bare_loop_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load()
    monkeypatch.setattr(module, "_arguments", lambda i: {"a": i, "b": 2})
    with pytest.raises(RuntimeError, match="did not do the work"):
        module.bare_loop(3, 10)()
