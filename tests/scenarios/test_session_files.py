"""Scenario files with turns, continuation, tool_choice schedules and several sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from harness import ScenarioError
from harness.cli._app import app
from harness.scenarios import load_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = sorted((ROOT / "scenarios" / "sessions").glob("*.yaml"))


def _write(tmp_path: Path, data: dict) -> Path:  # type: ignore[type-arg]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


TWO_TURNS = {
    "name": "two_turns",
    "tools": ["fixtures.sessions:search"],
    "turns": [
        {
            "prompt": "first",
            "steps": [{"call": "search", "args": {"query": "x"}}, {"reply": "one"}],
            "expect": {"output": "one", "timeline": [{"calls": ["search"]}, {"answer": True}]},
        },
        {"prompt": "second", "steps": [{"reply": "two"}], "expect": {"output": "two"}},
    ],
}


@pytest.mark.parametrize("path", SESSIONS, ids=[p.name for p in SESSIONS])
def test_the_session_catalog_passes(path: Path) -> None:
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, outcome.problem


def test_each_turn_is_judged_on_its_own(tmp_path: Path) -> None:
    outcome = run_scenario(load_scenario(_write(tmp_path, TWO_TURNS)))
    assert outcome.passed, outcome.problem
    assert (outcome.turns, outcome.model_requests, outcome.iterations) == (2, 3, 3)
    assert [row.turn for row in outcome.rows] == [1, 1, 2]
    wrong = json.loads(json.dumps(TWO_TURNS))
    wrong["turns"][1]["expect"]["output"] = "three"
    outcome = run_scenario(load_scenario(_write(tmp_path, wrong)))
    assert outcome.problem == "turn 2: expected output 'three', got 'two'"


def test_a_turn_that_answers_early_or_late_names_its_steps(tmp_path: Path) -> None:
    early = json.loads(json.dumps(TWO_TURNS))
    early["turns"][0]["steps"] = [{"reply": "one"}, {"reply": "spare"}]
    early["turns"][0]["expect"] = {}
    outcome = run_scenario(load_scenario(_write(tmp_path, early)))
    assert outcome.problem is not None
    assert "turn 1 ended after 1 of its 2 steps" in outcome.problem


def test_a_scenario_turn_without_steps_is_refused_at_load(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(TWO_TURNS))
    del bad["turns"][1]["steps"]
    with pytest.raises(ScenarioError, match="session 'two_turns': turn 2 has no steps"):
        load_scenario(_write(tmp_path, bad))
    bad["turns"][1]["steps"] = []
    with pytest.raises(ScenarioError, match="turn 2 has no steps"):
        load_scenario(_write(tmp_path, bad))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"prompt": "top"}, "remove the top-level prompt"),
        ({"model": {"steps": [{"reply": "x"}]}}, "give the steps under each turn"),
        ({"expect": {"output": "x"}}, "put expect \\['output'\\] under the turn"),
        ({"turns": []}, "turns is empty"),
        ({"continuation": "sometimes"}, "continuation 'sometimes' is not a policy"),
        ({"tool_choice": "none"}, "tool_choice must be a non-empty list"),
        ({"tool_choice": [""]}, "ToolChoiceSchedule entry 1"),
        ({"during": {"session": "x", "tool": "t"}}, "during/after place a session"),
        ({"agent": "fixtures.x:make"}, "agent is read by single-run scenarios only"),
        ({"expect": {"properties": ["fixtures.x:p"]}}, "expect properties is read by single-run"),
    ],
)
def test_bad_session_files_are_refused_at_load(tmp_path: Path, change: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ScenarioError, match=message):
        load_scenario(_write(tmp_path, {**TWO_TURNS, **change}))


def test_bad_sessions_lists(tmp_path: Path) -> None:
    one = {"name": "a", "prompt": "q", "model": {"steps": [{"reply": "x"}]}}
    cases = [
        ([one, one], "given twice: \\['a'\\]"),
        ([one, {**one, "name": "b", "during": {"session": "zz", "tool": "t"}}], "unknown session"),
        ([one, {**one, "name": "b", "after": {"session": "a"}}], "after needs the turn"),
        ([], "sessions is empty"),
    ]
    for sessions, message in cases:
        with pytest.raises(ScenarioError, match=message):
            load_scenario(_write(tmp_path, {"name": "f", "sessions": sessions}))


def test_the_request_order_of_a_sessions_file_is_checked(tmp_path: Path) -> None:
    data = yaml.safe_load(
        (ROOT / "scenarios/sessions/sampling_inside_a_tool_call.yaml").read_text()
    )
    data["expect"]["requests"] = ["agent", "agent", "sampling"]
    outcome = run_scenario(load_scenario(_write(tmp_path, data)))
    assert outcome.problem == (
        "expected the model requests of sessions ['agent', 'agent', 'sampling'], in order; "
        "made ['agent', 'sampling', 'agent']"
    )
    data["sessions"][1]["during"] = {"session": "agent", "tool": "joker", "call": 2}
    outcome = run_scenario(load_scenario(_write(tmp_path, data)))
    assert outcome.problem is not None and "never ran" in outcome.problem


def test_after_places_a_session_between_turns(tmp_path: Path) -> None:
    data = {
        "name": "f",
        "expect": {"requests": ["main", "main", "side", "main"]},
        "sessions": [
            {**TWO_TURNS, "name": "main"},
            {
                "name": "side",
                "after": {"session": "main", "turn": 1},
                "prompt": "aside",
                "model": {"steps": [{"reply": "ok"}]},
            },
        ],
    }
    outcome = run_scenario(load_scenario(_write(tmp_path, data)))
    assert outcome.passed, outcome.problem
    assert [row.session for row in outcome.rows] == ["main", "main", "main", "side"]


def test_harness_run_json_is_the_documented_contract(tmp_path: Path) -> None:
    failing = json.loads(json.dumps(TWO_TURNS))
    failing["name"] = "failing"
    failing["turns"][1]["expect"]["output"] = "three"
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(TWO_TURNS))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(failing))
    ran = CliRunner().invoke(app, ["run", "--json", str(tmp_path)])
    assert ran.exit_code == 1
    report = json.loads(ran.stdout)
    assert set(report) == {"scenarios", "passed", "failed"}
    assert all(s.pop("notes") == [] for s in report["scenarios"])  # an extra key
    assert (report["passed"], report["failed"]) == (1, 1)
    first, second = report["scenarios"]
    assert first == {
        "name": "two_turns",
        "path": str(tmp_path / "a.yaml"),
        "passed": True,
        "model_requests": 3,
        "turns": 2,
        "iterations": 3,
        "error": None,
    }
    assert (
        second["passed"] is False
        and second["error"] == "turn 2: expected output 'three', got 'two'"
    )
    broken = CliRunner().invoke(app, ["run", "--json", str(tmp_path / "missing.yaml")])
    assert broken.exit_code == 2
    assert json.loads(broken.stdout)["scenarios"] == []
