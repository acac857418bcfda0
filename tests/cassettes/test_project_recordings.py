"""The project's real recordings (``cassettes/recorded``, SmolLM2-135M via llama.cpp)
replay through the cassette model with the scenario's real tools and strategies: the
loop offers, calls and injects exactly what the recording shows (not that the model
was smart). How they were made: ``cassettes/README.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cassettes import CassetteModel, trace_from_cassette
from harness.loop import run
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted((ROOT / "cassettes" / "recorded").glob("*.yaml"))
SCENARIO_OF = {  # recording stem (without _stream) -> the scenario it ran
    "entity_discovery": "scenarios/discovery/seed_average_spend.yaml",
    "unfolding_facade": "scenarios/unfolding/plain_facade.yaml",
    "playbook": "scenarios/playbook/hidden_research.yaml",
}


def test_every_recording_has_its_scenario() -> None:
    assert RECORDED
    stems = {p.stem.removesuffix("_stream") for p in RECORDED}
    assert stems == set(SCENARIO_OF)
    assert {p.stem.endswith("_stream") for p in RECORDED} == {True, False}


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_replays_with_the_real_tools_and_strategies(path: Path) -> None:
    scenario = load_scenario(ROOT / SCENARIO_OF[path.stem.removesuffix("_stream")])
    model = CassetteModel(path)
    assert model.capabilities.streaming == path.stem.endswith("_stream")
    result = run(
        model,
        scenario.build_prompt(),
        tools=scenario.build_tools(),
        strategies=scenario.build_strategies(),
        system=scenario.spec.system,
    )
    recorded = trace_from_cassette(path)
    assert [it.offered for it in result.trace] == [it.offered for it in recorded]
    assert [[(c.name, c.content) for c in it.calls] for it in result.trace] == [
        [(c.name, c.content) for c in it.calls] for it in recorded
    ]
    # what the wire shows gained between requests k and k+1, the loop injected after a
    # call of turn k or before turn k+1 (a turn hook, e.g. the playbook's iteration rule)
    ours = result.trace.iterations
    for k, wire in enumerate(recorded.iterations[:-1]):
        assert set(wire.injected) <= set(ours[k].injected) | set(ours[k + 1].injected)
    assert result.output == recorded.iterations[-1].answer
    assert any(it.injected for it in recorded), "each recording shows an injection"
