"""``fuzz_agent(factory, wire=...)``: agents on any framework fuzzed through the wire.

The contract (factory ``(base_url, api_key) -> {run, prompt, state}``, properties
``(run) -> None`` on ``run.trace``/``output``/``state``/``error``), counterexamples that
``harness run`` replays on a fresh agent, framework failures judged as the run's error,
``tool_choice`` obeyed, and a clear ``UsageError`` for every broken factory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from harness import UsageError
from harness.cli._app import app
from harness.fuzz import fuzz_agent
from harness.scenarios import WireRun, load_scenario, run_scenario

QUICK: dict[str, Any] = {"max_examples": 200, "seed": 1}


@pytest.mark.parametrize(
    ("factory", "wire"),
    [
        ("wire_agents:notes_chat", "openai-chat"),
        ("wire_agents:notes_chat_async", "openai-chat"),
        ("wire_agents:notes_anthropic", "anthropic"),
    ],
)
def test_a_bug_is_found_through_the_wire_and_the_file_replays_on_a_fresh_agent(
    factory: str, wire: str, tmp_path: Path
) -> None:
    report = fuzz_agent(
        factory, ["wire_agents:pinned_notes_stay"], wire=wire, output=tmp_path, **QUICK
    )
    assert report.found and report.finding is not None
    assert report.finding.name == "wire_agents:pinned_notes_stay"
    assert report.steps == 3  # list, delete, answer
    assert report.counterexample is not None
    data = yaml.safe_load(Path(report.counterexample).read_text(encoding="utf-8"))
    assert data["agent"] == factory and data["wire"] == wire
    assert data["model"]["steps"][1]["args"]["note_id"]["$from"] == "call 1"
    outcome = run_scenario(load_scenario(report.counterexample))  # fresh ids, same bug
    assert not outcome.passed and "a pinned note was deleted" in (outcome.problem or "")
    replay = CliRunner().invoke(app, ["run", report.counterexample])
    assert replay.exit_code == 1 and "a pinned note was deleted" in replay.output


def test_properties_see_the_wire_run_trace_output_and_state() -> None:
    seen: list[WireRun] = []

    def record(run: Any) -> None:
        seen.append(run)

    report = fuzz_agent(
        "wire_agents:notes_chat", [record], wire="openai-chat", max_examples=15, seed=2
    )
    assert not report.found and len(seen) >= 15
    run = next(r for r in seen if r.trace.calls)
    assert isinstance(run, WireRun) and run.wire == "openai-chat" and run.error is None
    assert run.state.__class__.__name__ == "Notes"
    assert set(run.trace.offered_at_start) == {"list_notes", "delete_note"}
    assert run.trace.calls[0].name in {"list_notes", "delete_note"}
    finished = [r for r in seen if r.error is None and r.iterations < 8]  # not its own limit
    assert finished and all(isinstance(r.output, str) for r in finished)  # what run returned


def test_a_framework_failure_is_the_runs_error_not_a_crash() -> None:
    report = fuzz_agent(
        "wire_agents:gives_up", ["wire_agents:never_gives_up"], wire="openai-chat", **QUICK
    )
    assert report.found and report.finding is not None
    assert report.finding.name == "wire_agents:never_gives_up"
    assert "RetriesExhausted" in report.finding.message


def test_the_fuzzer_obeys_tool_choice() -> None:
    report = fuzz_agent(
        "wire_agents:forced_choice",
        ["wire_agents:tool_choice_obeyed"],
        wire="openai-chat",
        max_examples=60,
        seed=3,
    )
    assert not report.found, report.explain()
    assert report.examples == 60


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("wire_agents:one_argument", "is called as factory(base_url, api_key)"),
        ("wire_agents:no_prompt", "must return a 'prompt'"),
        ("wire_agents:run_not_callable", "must return 'run', a function taking the prompt"),
        ("wire_agents:not_a_dict", "return a dict"),
        ("wire_agents:never_calls", "never called the openai-chat endpoint"),
        (
            "wire_agents:calls_responses",
            "the agent called openai-responses (POST /v1/responses), but the wire is "
            "openai-chat: fuzz it with --wire openai-responses",
        ),
    ],
)
def test_a_broken_wire_factory_is_a_clear_usage_error(factory: str, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        fuzz_agent(factory, wire="openai-chat", max_examples=5, seed=1)
    assert message in " ".join(str(raised.value).split())


def test_an_unknown_wire_is_a_usage_error_naming_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="openai-chat"):
        fuzz_agent("wire_agents:notes_chat", wire="openai", max_examples=5)
