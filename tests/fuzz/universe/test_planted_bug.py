"""A planted bug is found, shrunk to a small scenario, written, and replayed by ``harness run``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from typer.testing import CliRunner

from harness.cli._app import app
from harness.fuzz import CampaignConfig, loop_core_machine, run_campaign
from harness.scenarios import load_scenario, run_scenario
from harness.tools import Tool

HERE = Path(__file__).resolve().parent


def test_offered_before_injected_is_found_and_shrunk(tmp_path: Path) -> None:
    config = CampaignConfig(
        kind="mixed",
        strategy="planted:offered_before_injected",
        examples=40,
        profile="ci",
        output=str(tmp_path),
    )
    report = run_campaign(config)
    assert report.failed and report.violations["toolset_explained"] >= 1
    (path,) = report.counterexamples
    assert "already offered before they were injected" in report.failures[0]
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    # shrunk: one tool, one decision that triggers the strategy, then the answer
    universe = data["tools"][0]["harness.fuzz:universe_tools"]["universe"]
    assert len(universe.get("tools", [])) + len(universe.get("providers", [])) <= 1
    assert len(data["model"]["steps"]) == 2 and data["model"]["steps"][-1] == {"reply": "Done."}
    assert data["strategies"][-1] == "planted:offered_before_injected"
    assert data["expect"]["invariants"] is True

    # the file replays: harness run fails on the bug ...
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed and "toolset_explained" in (outcome.problem or "")
    result = CliRunner().invoke(app, ["run", path])
    assert result.exit_code == 1 and "[toolset_explained]" in result.output
    # ... and passes once the strategy is fixed
    data["strategies"][-1] = "planted:sound"
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert run_scenario(load_scenario(fixed)).passed


def test_a_core_that_drops_a_tool_message_is_found_and_shrunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planted import DropsSecondToolMessage

    config = CampaignConfig(kind="tools", examples=60, profile="ci", output=str(tmp_path))
    with monkeypatch.context() as patch:
        patch.setattr("harness.loop._drivers.LoopCore", DropsSecondToolMessage)
        report = run_campaign(config)
        assert report.failed and report.violations["calls_answered"] >= 1
        assert "(id 'call_2') has 0 tool messages" in report.failures[0]
        (path,) = report.counterexamples
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        # shrunk: one tool, one turn with two calls (the smallest that loses a message)
        universe = data["tools"][0]["harness.fuzz:universe_tools"]["universe"]
        assert len(universe["tools"]) == 1
        first, last = data["model"]["steps"]
        assert len(first["calls"]) == 2 and last == {"reply": "Done."}
        assert not run_scenario(load_scenario(path)).passed  # replays the bug
    assert run_scenario(load_scenario(path)).passed  # the real core keeps every message


def test_a_sound_strategy_passes_the_same_campaign(tmp_path: Path) -> None:
    config = CampaignConfig(
        kind="mixed", strategy="planted:sound", examples=25, profile="ci", output=str(tmp_path)
    )
    report = run_campaign(config)
    assert not report.failed and report.examples == 25
    assert not list(tmp_path.iterdir())


def test_the_state_machine_finds_the_planted_bug_on_a_bare_core() -> None:
    from planted import InjectsOfferedTool, Sound

    schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def tools() -> list[Tool]:
        return [Tool.from_schema(n, "t", schema, lambda a: 1) for n in ("a", "b")]

    # derandomized: the same examples every run (a bug-finding test must not depend on luck);
    # most drawn steps are filtered out by the machine's preconditions, by design
    quick = settings(
        max_examples=30,
        stateful_step_count=15,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.filter_too_much],
    )
    run_state_machine_as_test(loop_core_machine(lambda: [Sound()], tools=tools), settings=quick)
    buggy = loop_core_machine(lambda: [InjectsOfferedTool()], tools=tools, max_iterations=3)
    with pytest.raises(AssertionError, match="already offered before they were injected"):
        run_state_machine_as_test(buggy, settings=settings(quick, phases=[Phase.generate]))
