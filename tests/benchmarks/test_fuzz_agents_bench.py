"""The agents of the fuzzing benchmark really have their bugs, and the benchmark runs.

Each agent's ``KNOWN_BAD`` script (the shortest path to its bug, with references to
earlier results) must fail on a fresh agent, and pass without its last call: the bug
is real, and it takes the whole path. No timing assertions (the numbers are the
benchmark's to print), and no time budgets either: the quick run and the walk stop after
a number of examples (runs), so a loaded machine finds what an idle one does.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(autouse=True)
def _benchmarks_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))


def _agents() -> list[object]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        agents = importlib.import_module("fuzz_agents").AGENTS
    finally:
        sys.path.remove(str(BENCHMARKS))
    return list(agents)


@pytest.mark.parametrize("agent", _agents(), ids=lambda a: a.name)  # type: ignore[attr-defined]
def test_the_known_path_reaches_the_bug_and_needs_its_last_call(agent: object) -> None:
    from harness.fuzz.agent._judge import judge, replay_steps
    from harness.fuzz.agent._search import load_agent_factory, load_property

    factory, name = load_agent_factory(agent.factory)  # type: ignore[attr-defined]
    props = [load_property(p) for p in agent.properties]  # type: ignore[attr-defined]
    module = importlib.import_module(agent.factory.split(":")[0])  # type: ignore[attr-defined]
    bad = module.KNOWN_BAD
    calls = sum(len(s.get("calls", [s])) for s in bad if "call" in s or "calls" in s)
    assert calls >= agent.depth >= 2  # type: ignore[attr-defined]

    def finding(steps: list[dict[str, object]]) -> object:
        run, built, definitions, played = replay_steps(factory, steps, name=name, defaults={})
        assert run.error is None, run.error
        return judge(run, built, props, definitions=definitions, played=played)

    found = finding(bad)
    assert found is not None
    expected = agent.properties[0] if agent.properties else "invariant:secrets"  # type: ignore[attr-defined]
    assert found.name == expected  # type: ignore[attr-defined]
    assert finding([*bad[:-2], bad[-1]]) is None


def test_the_benchmark_quick_run_finds_the_shallow_bugs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = importlib.util.spec_from_file_location(
        "fuzz_agents_bench", BENCHMARKS / "fuzz_agents_bench.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.main(["--quick", "--no-walk"])
    out = capsys.readouterr().out
    assert [r["agent"] for r in rows["harness"]] == ["mail", "bank"]
    assert all(r["found"] for r in rows["harness"])
    assert "harness          found 2/2" in out and "runs/CPU-s" in out


def test_the_quick_run_is_bounded_by_examples_not_seconds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under load a 10 s budget ran out before the bugs were found (the README command
    failed on a busy 2-core machine); a count of examples does not run out."""
    spec = importlib.util.spec_from_file_location(
        "fuzz_agents_bench", BENCHMARKS / "fuzz_agents_bench.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    budgets: list[tuple[float, int]] = []

    def record(agent: object, seed: int, seconds: float, guidance: str, examples: int) -> dict:  # type: ignore[type-arg]
        budgets.append((seconds, examples))
        return {
            "found": True,
            "wall": 1.0,
            "cpu": 1.0,
            "runs": 1,
            "steps": 3,
            "examples": 1,
            "rate": 1.0,
        }

    monkeypatch.setattr(module, "_harness", record)
    module.main(["--quick", "--no-walk"])
    capsys.readouterr()
    assert budgets == [(600.0, 500), (600.0, 500)]


def test_the_random_walk_copies_values_and_finds_a_shallow_bug() -> None:
    walk = importlib.import_module("fuzz_walk").walk

    found = walk(
        "fuzz_agents.bank:make",
        ["fuzz_agents.bank:no_overdraft"],
        seconds=600,  # only stops a walk that hangs: the runs bound it
        max_runs=2_000,
        seed=1,
    )
    assert found.found and found.finding is not None
    assert found.finding.name == "fuzz_agents.bank:no_overdraft"


def _wire_agents() -> list[object]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        agents = importlib.import_module("fuzz_agents").WIRE_AGENTS
    finally:
        sys.path.remove(str(BENCHMARKS))
    return list(agents)


@pytest.mark.slow
@pytest.mark.parametrize("agent", _wire_agents(), ids=lambda a: a.name)  # type: ignore[attr-defined]
def test_a_framework_agents_known_path_replays_with_harness_run(
    agent: object, tmp_path: Path
) -> None:
    """A scenario file naming the wire factory and the wire, with the agent's
    ``KNOWN_BAD`` script, fails its property under ``harness run`` (exit 1) on a fresh
    agent; without the last bad call it passes (exit 0)."""
    import yaml
    from typer.testing import CliRunner

    from harness.cli._app import app

    module = importlib.import_module(agent.factory.split(":")[0])  # type: ignore[attr-defined]
    bad = module.KNOWN_BAD

    def harness_run(steps: list[dict[str, object]], name: str) -> int:
        scenario = {
            "name": name,
            "agent": agent.factory,  # type: ignore[attr-defined]
            "wire": agent.wire,  # type: ignore[attr-defined]
            "model": {"steps": steps},
            "expect": {"properties": list(agent.properties)},  # type: ignore[attr-defined]
        }
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--path", str(BENCHMARKS)])
        return result.exit_code

    assert harness_run(bad, "bad") == 1
    assert harness_run([*bad[:-2], bad[-1]], "short") == 0


# pydantic-ai's credits agent is left out: its bug is not found within the budget at
# seed 1 (see benchmarks/fuzz_agents_bench.py and the closing note)
_FOUND_ON_THE_WIRE = [a for a in _wire_agents() if a.name != "credits"]  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("agent", _FOUND_ON_THE_WIRE, ids=lambda a: a.name)  # type: ignore[attr-defined]
def test_a_framework_agents_bug_is_found_through_the_wire_and_replays_on_a_fresh_agent(
    agent: object, tmp_path: Path
) -> None:
    """pydantic-ai, the OpenAI Agents SDK and a hand-written openai loop: the fuzzer
    plays the model on the agent's wire, and ``harness run`` replays the counterexample
    on a fresh agent from the same factory (exit 1, same property). Bounded by examples,
    not seconds (the 60 s target is the benchmark's to measure)."""
    from typer.testing import CliRunner

    from harness.cli._app import app
    from harness.fuzz import fuzz_agent

    report = fuzz_agent(
        agent.factory,  # type: ignore[attr-defined]
        list(agent.properties),  # type: ignore[attr-defined]
        wire=agent.wire,  # type: ignore[attr-defined]
        max_examples=3_000,
        max_seconds=600,  # bounded by examples: a loaded machine finds what an idle one does
        seed=1,
        output=tmp_path,
    )
    assert report.found and report.finding is not None, report.explain()
    assert report.finding.name == agent.properties[0]  # type: ignore[attr-defined]
    assert report.steps is not None and report.steps <= agent.turns + 2  # type: ignore[attr-defined]
    assert report.counterexample is not None
    replay = CliRunner().invoke(app, ["run", report.counterexample, "--path", str(BENCHMARKS)])
    assert replay.exit_code == 1, replay.output
    assert agent.properties[0] in replay.output  # type: ignore[attr-defined]
