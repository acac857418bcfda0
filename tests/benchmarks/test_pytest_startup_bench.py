"""The pytest start-up benchmark: its variants see the right plugins (no timing assertions)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "pytest_startup.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pytest_startup", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_base_install_is_the_requirements_closure(bench: ModuleType) -> None:
    base = bench.closure("tool-loop-harness")
    assert {"tool-loop-harness", "pydantic", "pydantic-core", "vcrpy"} <= base
    assert {"openai", "anyio", "hypothesis", "faker"}.isdisjoint(base)
    with_openai = bench.closure("tool-loop-harness", ["openai"])
    assert {"openai", "httpx2", "anyio"} <= with_openai
    dev = bench.closure("tool-loop-harness", ["dev"])  # extras of extras: [openai,fuzz,...]
    assert {"openai", "hypothesis", "faker", "pytest"} <= dev


@pytest.mark.parametrize(
    ("allowed", "loaded", "hidden"),
    [
        (set(), [], ["harness.pytest_plugin", "anyio.pytest_plugin"]),
        ({"tool-loop-harness"}, ["harness.pytest_plugin"], ["anyio.pytest_plugin"]),
        ({"anyio"}, ["anyio.pytest_plugin"], ["harness.pytest_plugin"]),
    ],
)
def test_the_launcher_hides_the_other_plugin_distributions(
    bench: ModuleType, tmp_path: Path, allowed: set[str], loaded: list[str], hidden: list[str]
) -> None:
    bench.write_project(tmp_path)
    launcher = tmp_path / "launch.py"
    launcher.write_text(bench.LAUNCHER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(launcher), "--co", "-q", "-p", "no:cacheprovider", "--trace-config"],
        cwd=tmp_path,
        env=bench.child_env(allowed, cold=True),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 test collected" in done.stdout
    for module in loaded:
        assert module in done.stdout
    for module in hidden:
        assert module not in done.stdout


def test_a_quick_run_prints_every_variant_and_the_target(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    results = bench.main(["--quick", "--extra", "openai"])
    out = capsys.readouterr().out
    assert results["pytest alone"]["plugins"] == []
    assert results["base install"]["plugins"] == ["tool-loop-harness"]
    assert results["+ extra openai"]["plugins"] == ["anyio", "tool-loop-harness"]
    assert all(r["median"] > 0 and r["cpu"] > 0 for r in results.values())
    assert "target: the base install adds at most 0.3 s" in out
    assert "anyio (anyio.pytest_plugin)" in out
