"""The async-tools scenario: a follow-up reaches the next turn, an unanswered call is lost;
and the scenario expectations for async calls (``started``, ``follow_ups``, ``completions``)
report divergences clearly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.loop import CompletionLost, follow_up_source
from harness.messages import UserMessage
from harness.scenarios import format_timeline, load_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "channels" / "async_report_back.yaml"


@pytest.fixture(autouse=True)
def _project_root_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))


def test_the_scenario_passes_and_its_trace_tells_the_story() -> None:
    outcome = run_scenario(load_scenario(SCENARIO))
    assert outcome.passed, outcome.problem
    assert outcome.result is not None and outcome.trace is not None
    follow_ups = [
        m.content
        for m in outcome.result.messages
        if isinstance(m, UserMessage) and follow_up_source(m.content)
    ]
    assert follow_ups == [
        "[Async result] tool 'start_export' (call call_1) reported back:\n"
        "Report 'sales' exported to sales.csv."
    ]
    export, backup = outcome.trace.completions
    assert (export.call_id, export.started_iteration, export.iteration) == ("call_1", 1, 3)
    assert (backup.call_id, backup.status, backup.reason) == ("call_2", "lost", "deadline")
    [lost] = outcome.trace.events_of(CompletionLost)
    assert isinstance(lost, CompletionLost) and lost.name == "start_backup"
    text = format_timeline(outcome.rows)
    assert "#1 offered=3 calls=start_export,start_backup" in text
    assert "started=start_export,start_backup" in text
    assert "#3 offered=3 follow_ups=start_export answer=" in text


def test_harness_run_shows_async_calls_and_follow_ups() -> None:
    result = CliRunner().invoke(app, ["run", str(SCENARIO)])
    assert result.exit_code == 0, result.output
    assert "PASS async_report_back" in result.output
    assert "(async)" in result.output
    assert "<- start_export" in result.output


BASE = (ROOT / "scenarios" / "channels" / "async_report_back.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (
            "- {tool: start_backup, status: lost, reason: deadline}",
            "- {tool: start_backup, status: lost, reason: run_ended}",
            "expected completions [{'tool': 'start_export', 'status': 'delivered'}, "
            "{'tool': 'start_backup', 'status': 'lost', 'reason': 'run_ended'}], "
            "got ['start_export delivered', 'start_backup lost (deadline)']",
        ),
        (
            "- {follow_ups: [start_export], answer: true}",
            "- {follow_ups: [], answer: true}",
            "first divergence at iteration 3: expected follow_ups=[], "
            "got follow_ups=['start_export']",
        ),
        (
            "started: [start_export, start_backup], to_user",
            "started: [start_export], to_user",
            "first divergence at iteration 1: expected started=['start_export'], "
            "got started=['start_export', 'start_backup']",
        ),
    ],
)
def test_divergences_name_what_happened(tmp_path: Path, old: str, new: str, problem: str) -> None:
    assert old in BASE
    path = tmp_path / "async.yaml"
    path.write_text(BASE.replace(old, new), encoding="utf-8")
    outcome = run_scenario(load_scenario(path))
    assert not outcome.passed
    assert outcome.problem == problem


def test_the_lost_policy_scenario_does_not_wait() -> None:
    begin = time.monotonic()
    outcome = run_scenario(load_scenario(SCENARIO.with_name("async_lost_policy.yaml")))
    assert outcome.passed, outcome.problem
    assert time.monotonic() - begin < 20  # the 30 s deadline never applies
    assert outcome.trace is not None
    [lost] = outcome.trace.events_of(CompletionLost)
    assert isinstance(lost, CompletionLost)
    assert (lost.call_id, lost.reason) == ("call_2", "run_ended")
