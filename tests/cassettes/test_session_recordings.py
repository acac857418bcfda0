"""The project's real recordings of sessions (``cassettes/recorded/sessions``, SmolLM2-135M
via llama.cpp) replay through the cassette model under the strict matcher (tool_choice
included) with the scenario's schedule and continuation, and convert to a scenario that
replays every recorded request."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus import cost_recordings, ids

from harness import Session
from harness.cassettes import (
    CassetteModel,
    load_cassette,
    scenario_data,
    trace_from_cassette,
)
from harness.cassettes._model import llm_turns
from harness.scenarios import load_scenario, run_scenario
from harness.scenarios._session_files import continuation_from_data, schedule_from_data

ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted((ROOT / "cassettes" / "recorded" / "sessions").glob("*.yaml"))
SCENARIO = ROOT / "scenarios" / "sessions" / "react_forced_actions.yaml"
COST = cost_recordings()


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_replays_strictly_with_the_schedule_and_the_continuation(path: Path) -> None:
    scenario = load_scenario(SCENARIO)
    model = CassetteModel(path, match="strict")
    with Session(
        model,
        tools=scenario.build_tools(),
        strategies=[
            *scenario.build_strategies(),
            schedule_from_data(scenario.spec.tool_choice, ""),
        ],
        continuation=continuation_from_data(scenario.spec.continuation, ""),
    ) as session:
        result = session.send(scenario.build_prompt())  # type: ignore[arg-type]
    recorded = trace_from_cassette(path)
    assert model.position == len(llm_turns(load_cassette(path)))  # every request was made
    assert [it.tool_choice.mode for it in result.trace] == ["none", "tool", "none", "tool"]  # type: ignore[union-attr]
    assert [it.continued for it in result.trace] == [True, False, True, False]
    assert [[c.name for c in it.calls] for it in result.trace] == [
        [c.name for c in it.calls] for it in recorded
    ]


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_converts_to_a_react_scenario(path: Path, tmp_path: Path) -> None:
    data = scenario_data(path)
    assert data["continuation"] == {"react": {"nudge": "Now act."}}
    assert data["tool_choice"]["schedule"] == ["none", "search", "none", "final_answer"]
    target = tmp_path / "react.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    outcome = run_scenario(load_scenario(target))
    assert outcome.passed, outcome.problem


@pytest.mark.parametrize("path", COST, ids=ids(COST))
def test_cost_recordings_convert_and_replay_every_request(path: Path, tmp_path: Path) -> None:
    """The recordings kept for their cache figures hold a follow-up user turn (typed-JSON
    bodies), header-less JSON responses, and a tool search the client wrote into the
    history itself (a turn no model made: the replay writes it as the client did): one
    scenario replays every request of each."""
    data = scenario_data(path)
    target = tmp_path / "all.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    outcome = run_scenario(load_scenario(target))
    assert outcome.passed, outcome.problem
    assert outcome.model_requests == len(llm_turns(load_cassette(path)))
