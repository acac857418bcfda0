"""``harness run``: the main job's output, exit codes and listing."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

FAILING = """
name: failing
prompt: hi
tools: [fixtures.customers:search_customer]
model:
  steps:
    - {call: search_customer, args: {name: John Smith}}
    - {reply: done}
expect:
  timeline:
    - {calls: [search_customer], injected: [something_else]}
    - {answer: true}
"""


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_run_the_default_catalog_passes() -> None:
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 0, result.output
    assert "PASS seed_average_spend" in result.output
    assert "FAIL" not in result.output
    assert "customer_c123_get_average_spend" in result.output
    assert " 0 failed" in result.output


def test_run_one_file_quiet_hides_timelines() -> None:
    path = "scenarios/discovery/seed_average_spend.yaml"
    result = runner.invoke(app, ["run", path, "--quiet"])
    assert result.exit_code == 0
    assert "PASS seed_average_spend" in result.output
    assert "offered" not in result.output
    assert "1 passed, 0 failed" in result.output


def test_failure_prints_divergence_and_exits_1(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "failing.yaml").write_text(FAILING, encoding="utf-8")
    result = runner.invoke(app, ["run", str(folder)])
    assert result.exit_code == 1
    assert "FAIL failing" in result.output
    assert "first divergence at iteration 1" in result.output
    assert "injected=['something_else']" in result.output
    assert "0 passed, 1 failed" in result.output


def test_list_shows_names_and_descriptions() -> None:
    result = runner.invoke(app, ["run", "--list"])
    assert result.exit_code == 0
    assert "seed_average_spend" in result.output
    assert "PASS" not in result.output


def test_unloadable_files_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- not a mapping\n", encoding="utf-8")
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2
    assert "must hold a mapping" in result.output
    result = runner.invoke(app, ["run", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such scenario" in result.output


def test_empty_folder_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path)])
    assert result.exit_code == 2 and "no scenario files" in result.output


def test_scenario_that_fails_to_build_is_a_broken_file(tmp_path: Path) -> None:
    broken = FAILING.replace("fixtures.customers:search_customer", "fixtures.customers:missing")
    path = tmp_path / "broken.yaml"
    path.write_text(broken, encoding="utf-8")
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "has no attribute 'missing'" in result.output


def test_console_script_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import main

    monkeypatch.setattr("sys.argv", ["harness", "run", "--list"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code in (0, None)


def test_version() -> None:
    from harness import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"harness {__version__}"


def test_bracketed_text_in_errors_is_printed_as_is(tmp_path: Path) -> None:
    """Rich markup must not swallow user text such as YAML's "expected ',' or ']'"."""
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: [unclosed\nprompt: hi\n", encoding="utf-8")
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2
    assert "[unclosed" in result.output
    assert "']'" in result.output


def test_bracketed_scenario_text_is_printed_as_is(tmp_path: Path) -> None:
    scenario = tmp_path / "brackets.yaml"
    scenario.write_text(
        "name: '[bold]x[/bold]'\ndescription: 'uses [red]markup[/red]'\nprompt: hi\n"
        "model:\n  steps:\n    - {reply: done}\n",
        encoding="utf-8",
    )
    listed = runner.invoke(app, ["run", "--list", str(scenario)])
    assert "[bold]x[/bold]" in listed.output
    assert "uses [red]markup[/red]" in listed.output
    ran = runner.invoke(app, ["run", str(scenario)])
    assert "PASS [bold]x[/bold]" in ran.output


def test_run_marks_handoffs_to_nested_agents_in_the_timeline() -> None:
    result = runner.invoke(app, ["run", "scenarios/subagents/shared_blackboard.yaml"])
    assert result.exit_code == 0, result.output
    line = next(li for li in result.output.splitlines() if "researcher" in li)
    assert "(handoff)" in line
    assert "(handoff)" not in next(
        li for li in result.output.splitlines() if "blackboard_list" in li
    )
