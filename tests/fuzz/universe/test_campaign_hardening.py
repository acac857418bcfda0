"""``harness fuzz`` never reports green on a crash, nor hangs (issue 27 §5), imports from the
current folder, and a strategy the universe brings too is no ``DuplicateToolName`` (issue 26)."""

from __future__ import annotations

import shutil
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from harness import UsageError
from harness.cli._app import app
from harness.fuzz import CampaignConfig, run_campaign
from harness.scenarios import load_scenario, run_scenario

HERE = Path(__file__).resolve().parent
runner = CliRunner()
SMALL: dict[str, Any] = {"kind": "tools", "max_tools": 3, "max_turns": 4, "examples": 20}


def test_a_strategy_that_crashes_is_a_finding(tmp_path: Path) -> None:
    config = CampaignConfig(strategy="planted:crashing_before_turn", output=str(tmp_path), **SMALL)
    report = run_campaign(config)
    assert report.failed and report.violations["crash"] >= 1
    assert "an injection strategy crashed" in report.failures[0]
    assert "the strategy's backend went away" in report.failures[0]
    # the written file fails on replay (the crash is not an "expected error")
    (path,) = report.counterexamples
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    assert "error" not in data["expect"]
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed and "StrategyError" in (outcome.problem or "")


def test_a_crash_exits_1_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    result = runner.invoke(
        app,
        ["fuzz", "-u", "tools", "-s", "planted:crashing_before_turn", "-n", "20",
         "--max-tools", "3", "--max-turns", "4", "--no-database", "-o", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "FAIL [crash]" in result.output and "no invariant violated" not in result.output


def test_an_injected_tool_that_never_returns_is_a_hang_not_a_hung_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.fuzz.universe._execute.WATCHDOG_SECONDS", 0.2)
    config = CampaignConfig(
        strategy="planted:hanging_tool", output=str(tmp_path), faults=(), **SMALL
    )
    report = run_campaign(config)
    assert report.failed and report.violations["hang"] >= 1
    assert "'wait_forever' did not return within 0.2s" in report.failures[0]
    (path,) = report.counterexamples
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    assert data["options"]["tool_timeout"] == 0.2
    assert data["expect"]["properties"] == ["harness.fuzz:no_timeouts"]
    outcome = run_scenario(load_scenario(path))  # returns: the file bounds the call
    assert not outcome.passed and "did not return in time" in (outcome.problem or "")


def test_a_strategy_factory_that_exits_is_exit_2_not_a_silent_0() -> None:
    result = runner.invoke(app, ["fuzz", "-u", "tools", "-s", "planted:exits_zero", "-n", "3"])
    assert result.exit_code == 2
    assert "raised SystemExit(0) when built" in " ".join(result.output.split())


def test_a_strategies_factory_giving_no_strategies_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="gave \\[5\\], not InjectionStrategy instances"):
        run_campaign(CampaignConfig(kind="tools", examples=1), strategies=lambda: 5)  # type: ignore[arg-type, return-value]
    with pytest.raises(UsageError, match="must be a factory"):
        run_campaign(CampaignConfig(kind="tools", examples=1), strategies=5)  # type: ignore[arg-type]


def test_an_output_naming_a_file_exits_2(tmp_path: Path) -> None:
    taken = tmp_path / "taken.yaml"
    taken.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["fuzz", "-u", "tools", "-n", "2", "-o", str(taken)])
    assert result.exit_code == 2 and "is an existing file" in result.output
    assert "Traceback" not in result.output


def test_ray_without_a_cluster_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def init(**kwargs: Any) -> None:
        raise ConnectionError("Could not find any running Ray instance.")

    fake = types.SimpleNamespace(is_initialized=lambda: False, init=init)
    monkeypatch.setattr("harness.fuzz._ray.import_ray", lambda: fake)
    result = runner.invoke(app, ["fuzz", "-u", "tools", "-n", "2", "--ray", "auto",
                                 "--no-database", "-o", str(tmp_path / "o")])  # fmt: skip
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert "--ray auto: no Ray cluster to connect to" in output and "ray start --head" in output


def test_a_strategy_module_imports_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(HERE / "planted.py", tmp_path / "my_strategies.py")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(
        app, ["fuzz", "-u", "tools", "-s", "my_strategies:sound", "-n", "3", "--no-database"]
    )
    assert result.exit_code == 0, result.output
    missing = runner.invoke(app, ["fuzz", "-u", "tools", "-s", "nowhere_mod:make", "-n", "3"])
    assert missing.exit_code == 2
    assert "'harness fuzz --path FOLDER'" in " ".join(missing.output.split())


def test_a_strategy_the_universe_brings_too_is_no_duplicate_tool_name(tmp_path: Path) -> None:
    config = CampaignConfig(
        kind="providers",
        strategy="entity_discovery",
        examples=30,
        seed=2,
        output=str(tmp_path),
        faults=(),
    )
    report = run_campaign(config)
    assert "DuplicateToolName" not in report.errors
    assert not report.failed, report.failures
    assert report.injections_per_run > 0  # the strategy under test did the discovering


def test_async_calls_are_not_waited_for_when_the_model_answers(tmp_path: Path) -> None:
    from planted import async_tool

    from harness.fuzz import FuzzScenario, run_fuzz_scenario
    from harness.fuzz.universe._decisions import FuzzDecision
    from harness.fuzz.universe._specs import FuzzToolSpec, UniverseSpec

    scenario = FuzzScenario(
        universe=UniverseSpec(tools=[FuzzToolSpec(name="ping", description="Ping.")]),
        decisions=[FuzzDecision(kind="call", index=0), FuzzDecision(kind="call", index=1)],
    )
    outcome = run_fuzz_scenario(scenario, strategies=async_tool)
    assert outcome.trace is not None and outcome.ok, outcome.violations
    (completion,) = outcome.trace.completions
    assert (completion.name, completion.status, completion.reason) == (
        "start_export",
        "lost",
        "run_ended",  # not "deadline": nothing waited 30 s for it
    )
