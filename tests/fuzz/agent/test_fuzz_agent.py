"""``fuzz_agent``: finds planted bugs in the user's agent, shrinks them, writes replayable files,
judges runs that end in errors, and refuses bad input with a clear ``UsageError``."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

import planted_agents
import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.reporting import with_reporter

from harness import UsageError
from harness.fuzz import (
    FUZZ_DEFAULTS,
    AgentFuzzReport,
    FuzzedRun,
    agent_runs,
    fuzz_agent,
)
from harness.scenarios import Agent, AgentRun, load_scenario, run_scenario

QUICK: dict[str, Any] = {"max_examples": 300, "seed": 1}


def test_a_two_call_bug_is_found_shrunk_and_written(tmp_path: Path) -> None:
    report = fuzz_agent(
        "planted_agents:notes",
        ["planted_agents:pinned_notes_stay"],
        output=tmp_path,
        **QUICK,
    )
    assert report.found and report.finding is not None
    assert report.finding.name == "planted_agents:pinned_notes_stay"
    assert "pinned notes deleted" in report.finding.message
    assert report.steps == 3  # list, delete, answer
    assert report.examples_to_find is not None and report.examples >= report.examples_to_find
    text = report.counterexample_text or ""
    assert "1. list_notes()" in text
    assert "2. delete_note(note_id=" in text and "<- call 1 .[1].note_id" in text
    assert "timeline:" in text

    assert report.counterexample is not None
    data = yaml.safe_load(Path(report.counterexample).read_text(encoding="utf-8"))
    assert data["agent"] == "planted_agents:notes"
    assert data["expect"] == {
        "invariants": True,
        "properties": ["planted_agents:pinned_notes_stay"],
    }
    assert data["options"] == dict(FUZZ_DEFAULTS)
    delete = data["model"]["steps"][1]
    assert delete["args"]["note_id"] == {"$from": "call 1", "path": "[1].note_id"}
    # the file replays on a fresh agent (new ids): the bug shows again
    outcome = run_scenario(load_scenario(report.counterexample))
    assert not outcome.passed and "pinned notes deleted" in (outcome.problem or "")


def test_the_json_of_a_report_has_exactly_the_documented_keys() -> None:
    report = fuzz_agent("planted_agents:notes", ["planted_agents:pinned_notes_stay"], **QUICK)
    data = report.to_json()
    assert list(data) == [
        "found",
        "property",
        "message",
        "examples",
        "seconds",
        "steps",
        "counterexample",
    ]
    assert data["found"] is True and data["counterexample"] is None  # no output folder
    clean = fuzz_agent("planted_agents:sound", max_examples=30, seed=1).to_json()
    assert clean == {**clean, "found": False, "property": None, "message": None, "steps": None}
    assert clean["examples"] == 30 and isinstance(clean["seconds"], float)


def test_a_sound_agent_passes_and_its_coverage_is_reported() -> None:
    report = fuzz_agent("planted_agents:sound", max_examples=40, seed=2)
    assert not report.found and report.examples == 40
    assert report.coverage.runs == 40
    assert report.coverage.called_ok["weather"] > 0
    assert "no failure in 40 runs" in report.explain()
    report.raise_for_failure()  # nothing to raise


def test_a_crashing_strategy_is_a_finding() -> None:
    report = fuzz_agent("planted_agents:crashing", **QUICK)
    assert report.finding is not None and report.finding.name == "crash"
    assert "StrategyError" in report.finding.message and "planted crash" in report.finding.message


def test_a_tool_that_never_returns_is_a_hang_not_a_hung_campaign(tmp_path: Path) -> None:
    report = fuzz_agent(
        "planted_agents:hangs", max_examples=20, seed=1, hang_seconds=0.1, output=tmp_path
    )
    assert report.finding is not None and report.finding.name == "hang"
    assert "did not return within 0.1s" in report.finding.message
    assert report.steps == 2  # cut after the call that hung
    assert report.counterexample is not None
    data = yaml.safe_load(Path(report.counterexample).read_text(encoding="utf-8"))
    assert data["options"]["tool_timeout"] == 0.1  # `harness run` does not hang on it
    assert data["expect"]["properties"] == ["harness.fuzz:no_timeouts"]
    outcome = run_scenario(load_scenario(report.counterexample))
    assert not outcome.passed and "did not return in time" in (outcome.problem or "")


def test_a_preset_secret_reaching_the_model_breaks_the_secrets_invariant() -> None:
    report = fuzz_agent("planted_agents:leaky", **QUICK)
    assert report.finding is not None and report.finding.name == "invariant:secrets"


def test_properties_see_runs_that_end_in_errors_with_their_state() -> None:
    planted_agents.SEEN.clear()
    report = fuzz_agent("planted_agents:to_the_limit", ["planted_agents:records_errors"], **QUICK)
    assert not report.found
    limited = [r for r in planted_agents.SEEN if type(r.error).__name__ == "MaxIterationsExceeded"]
    assert limited, "no run hit max_iterations=2"
    run = limited[0]
    assert isinstance(run, AgentRun) and not run.finished and run.output is None
    assert len(run.trace.iterations) == 2 and run.messages
    assert isinstance(run.state, dict)


def test_the_agent_s_own_options_win_over_the_fuzzer_s_defaults() -> None:
    def make() -> dict[str, Any]:
        return {**planted_agents.sound(), "pending_completions": "wait"}

    @given(agent_runs(make))
    @settings(max_examples=3, database=None, suppress_health_check=list(HealthCheck))
    def check(fuzzed: FuzzedRun) -> None:
        assert isinstance(fuzzed.agent, Agent)
        assert fuzzed.agent.options.pending_completions == "wait"
        assert fuzzed.agent.options.parallel_tool_calls is False  # the fuzzer's default

    check()


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("planted_agents:raises", "raised ConnectionError: the agent's database is down"),
        ("planted_agents:exits", "raised SystemExit(0): a factory must return the agent"),
        ("planted_agents:wrong_shape", "returned list"),
        ("planted_agents:unknown_key", "unknown key(s) 'tool' (did you mean 'tools'?)"),
        ("planted_agents:same_strategy", "returns the same strategy instance(s)"),
        ("planted_agents:shares_state", "shares state between examples"),
        ("no_such_module:make", "'harness fuzz --path FOLDER'"),
        ("planted_agents", "takes MODULE:FACTORY"),
    ],
)
def test_bad_agents_are_clear_usage_errors(factory: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        fuzz_agent(factory, max_examples=100, seed=1)
    assert message in str(caught.value)


def test_a_property_raising_something_else_than_assertion_error_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"raised KeyError: 'missing'.*assert / AssertionError"):
        fuzz_agent("planted_agents:notes", ["planted_agents:property_with_a_bug"], **QUICK)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_examples": 0}, "max_examples must be an int >= 1"),
        ({"max_seconds": -1}, "max_seconds must be a number of seconds > 0"),
        ({"seed": -2}, "seed must be an int >= 0"),
        ({"workers": 0}, "workers must be an int >= 1"),
        ({"guidance": "magic"}, "guidance must be one of"),
        ({"profile": "weekly"}, "must be one of 'dev', 'ci', 'nightly'"),
        ({"properties": "planted_agents:pinned_notes_stay"}, "properties must be a list"),
    ],
)
def test_bad_parameters_are_refused_before_the_search(
    changes: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"max_examples": 5, **changes}
    properties = arguments.pop("properties", [])
    with pytest.raises(UsageError) as caught:
        fuzz_agent("planted_agents:sound", properties, **arguments)
    assert message in str(caught.value)


def test_an_output_that_is_a_file_is_refused(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("", encoding="utf-8")
    with pytest.raises(UsageError, match="is an existing file"):
        fuzz_agent("planted_agents:sound", max_examples=1, output=taken)


def test_hypothesis_shows_a_failing_run_as_the_calls_it_made() -> None:
    lines: list[object] = []

    @given(fuzzed=agent_runs(planted_agents.notes))
    @settings(
        max_examples=300,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],  # found as generated: the report is what is checked
    )
    def check(fuzzed: FuzzedRun) -> None:
        planted_agents.pinned_notes_stay(fuzzed.run)

    with with_reporter(lines.append), pytest.raises(AssertionError) as caught:
        check()
    shown = "\n".join(map(str, [*lines, *getattr(caught.value, "__notes__", [])]))
    # "Failing test case: check(fuzzed=FuzzedRun(list_notes(); delete_note(note_id='n-…'
    # <- call 1 .[1].note_id); answer('Done.')))": the calls, and where each id came from
    assert "Failing test case" in shown and "fuzzed=FuzzedRun(" in shown
    assert "list_notes()" in shown and "delete_note(note_id='n-" in shown
    assert re.search(r"<- call \d+ \.\[\d\]\.note_id", shown)


def test_a_report_explains_itself_and_raises_for_pytest() -> None:
    report = AgentFuzzReport(agent="x:y", examples=3, seconds=0.5)
    assert report.explain().startswith("no failure in 3 runs of x:y")
    failing = fuzz_agent("planted_agents:notes", ["planted_agents:pinned_notes_stay"], **QUICK)
    with pytest.raises(AssertionError, match="FAIL \\[planted_agents:pinned_notes_stay\\]"):
        failing.raise_for_failure()


def test_reports_of_workers_merge() -> None:
    first = AgentFuzzReport(agent="a:b", examples=10, busy=1.0, by_worker={"h:1": (10, 1.0)})
    found = fuzz_agent("planted_agents:notes", ["planted_agents:pinned_notes_stay"], **QUICK)
    first.merge(found)
    assert first.found and first.examples == 10 + found.examples
    assert first.steps == found.steps and first.counterexample_text == found.counterexample_text
    later = dataclasses.replace(found, steps=99)
    first.merge(later)  # the first finding stays
    assert first.steps == found.steps


def test_workers_search_with_distinct_seeds_and_the_first_failure_wins(tmp_path: Path) -> None:
    report = fuzz_agent(
        "planted_agents:notes",
        ["planted_agents:pinned_notes_stay"],
        workers=2,
        max_examples=400,
        seed=1,
        output=tmp_path,
    )
    assert report.workers == 2 and report.found
    assert report.finding is not None and report.finding.name == "planted_agents:pinned_notes_stay"
    assert report.steps == 3 and report.counterexample is not None
    assert Path(report.counterexample).is_file()
    assert sum(n for n, _ in report.by_worker.values()) == report.examples
    with pytest.raises(UsageError, match="name the agent factory and the properties by import"):
        fuzz_agent(planted_agents.notes, workers=2, max_examples=10)


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray is not installed (pip install 'tool-loop-harness[ray]')",
)
def test_a_search_on_a_local_ray_instance(tmp_path: Path) -> None:
    report = fuzz_agent(
        "planted_agents:notes",
        ["planted_agents:pinned_notes_stay"],
        workers=2,
        ray="local",
        max_examples=400,
        seed=1,
        output=tmp_path,
    )
    assert report.found and report.steps == 3
    assert report.counterexample is not None and Path(report.counterexample).is_file()


@pytest.mark.parametrize("agent", ["forced_ping", "only_ping_allowed"])
def test_the_fuzzer_obeys_the_agent_s_tool_choice_as_a_model_does(agent: str) -> None:
    report = fuzz_agent(f"planted_agents:{agent}", ["planted_agents:never_reset"], **QUICK)
    assert not report.found, report.finding
    never_called = report.coverage.never_called
    assert "reset" in never_called and "ping" not in never_called


def _tickets_campaign(tmp_path: Path) -> tuple[AgentFuzzReport, list[dict[str, Any]]]:
    report = fuzz_agent(
        "planted_agents:tickets",
        ["planted_agents:vip_tickets_stay_open"],
        max_examples=500,
        seed=0,
        output=tmp_path,
    )
    assert report.found and report.counterexample is not None, report.explain()
    data = yaml.safe_load(Path(report.counterexample).read_text(encoding="utf-8"))
    return report, data["model"]["steps"]


def test_seed_0_is_reproducible_on_uuid_ids_shrunk_and_readable(tmp_path: Path) -> None:
    """The same counterexample at every run (ids differ per run, the references to
    them do not), shrunk to the bug's path (no trailing provider error), its texts
    readable."""
    first, steps = _tickets_campaign(tmp_path / "one")
    again, steps_again = _tickets_campaign(tmp_path / "two")
    assert steps == steps_again
    assert (first.examples_to_find, first.steps) == (again.examples_to_find, again.steps)
    assert first.steps == 3  # list, close, answer
    close = steps[1]
    assert close["call"] == "close_ticket"
    assert close["args"]["ticket_id"] == {"$from": "call 1", "path": "[1].ticket_id"}
    resolution = close["args"]["resolution"]
    assert isinstance(resolution, str) and resolution.isprintable() and resolution.isascii()
    assert all("error" not in s for s in steps)  # no provider error left in it


def test_a_failing_campaign_logs_no_flood_of_tool_failures(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The tool failures the fuzzer causes on purpose are not logged during the search
    (a failing test would print hundreds of captured WARNING lines)."""
    caplog.set_level("WARNING")
    _tickets_campaign(tmp_path)
    tool_warnings = [r for r in caplog.records if r.name.startswith("harness.tools")]
    assert len(tool_warnings) <= 3, [r.getMessage() for r in tool_warnings[:5]]


@pytest.mark.parametrize(
    "factory", ["planted_agents:searched_auto", "planted_agents:searched_never"]
)
def test_an_agent_using_tool_search_can_be_fuzzed(factory: str) -> None:
    """The fuzzer's model and its replay pick the same search kind (no false "shares
    state between examples"), and tools found by search are not unexplained
    (``invariant:toolset_explained``)."""
    report = fuzz_agent(factory, max_examples=80, seed=1)
    assert not report.found, report.explain()
    assert report.examples == 80
    assert report.coverage.runs == 80
