"""Our own strategies, fuzzed (the ``ci`` profile, bounded), and the checks around a run."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings

from harness.fuzz import (
    PROFILE_PREFIX,
    SECRET,
    UNIVERSE_KINDS,
    FuzzDecision,
    FuzzParamSpec,
    FuzzScenario,
    FuzzToolSpec,
    SectionSpec,
    UniverseSpec,
    check_determinism,
    check_restart_equivalence,
    fuzz_scenarios,
    run_fuzz_scenario,
)
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.scenarios import format_violations
from harness.tools import Tool

CI = settings(settings.get_profile(PROFILE_PREFIX + "ci"), max_examples=10, database=None)
"""The registered ``harness-ci`` profile (derandomised, no deadline), fewer examples."""


@pytest.mark.parametrize("kind", UNIVERSE_KINDS)
def test_our_strategies_keep_every_invariant(kind: str) -> None:
    seen = {"runs": 0, "errors": 0}

    @CI
    @given(scenario=fuzz_scenarios(kind, max_tools=15, max_turns=10))
    def fuzz(scenario: FuzzScenario) -> None:
        outcome = run_fuzz_scenario(scenario)
        violations = [*outcome.violations, *check_restart_equivalence(outcome)]
        assert not violations, format_violations(violations)
        seen["runs"] += 1
        seen["errors"] += outcome.error is not None

    fuzz()
    assert seen["runs"] >= 10


def _scenario(decisions: list[FuzzDecision], **universe: Any) -> FuzzScenario:
    return FuzzScenario(universe=UniverseSpec(**universe), decisions=decisions)


def test_faults_become_error_results_and_the_secret_stays_hidden() -> None:
    tools = [
        FuzzToolSpec(name="crash", fault="raise"),
        FuzzToolSpec(name="slow", fault="timeout"),
        FuzzToolSpec(name="huge", fault="huge"),
        FuzzToolSpec(name="weird", fault="unserializable"),
        FuzzToolSpec(name="keyed", fault="context", params=[FuzzParamSpec(name="q")]),
    ]
    moves = [FuzzDecision(kind="parallel", index=0, more=(1, 2, 3, 4))]
    outcome = run_fuzz_scenario(_scenario(moves, kind="tools", tools=tools))
    assert outcome.ok, format_violations(outcome.violations)
    calls = {c.name: c for c in outcome.trace.calls}  # type: ignore[union-attr]
    assert calls["crash"].is_error and "failed on purpose" in calls["crash"].content
    assert calls["slow"].error_kind == "timeout"
    assert len(calls["huge"].content) >= 200_000
    assert calls["keyed"].content.endswith(f"{len(SECRET)}-character key")
    assert SECRET not in str([m.model_dump() for m in outcome.messages])


def test_provider_errors_and_limits_end_runs_with_typed_errors() -> None:
    error = run_fuzz_scenario(
        _scenario([FuzzDecision(kind="provider_error", status=429)], tools=[FuzzToolSpec(name="t")])
    )
    assert type(error.error).__name__ == "RateLimited" and error.ok
    looping = FuzzScenario(
        universe=UniverseSpec(tools=[FuzzToolSpec(name="t")]),
        decisions=[FuzzDecision()] * 5,
        max_iterations=3,
    )
    limited = run_fuzz_scenario(looping)
    assert type(limited.error).__name__ == "MaxIterationsExceeded" and limited.ok
    assert limited.steps[-1]["call"] == "t"


class Nondeterministic(InjectionStrategy):
    """Injects a tool with a fresh name each run: two runs differ."""

    counter = itertools.count()

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        name = f"fresh_{next(self.counter)}"
        if name in context.offered:
            return None
        schema = {"type": "object", "properties": {}}
        return ToolsetChange(add=(Tool.from_schema(name, "new", schema, lambda a: 1),), reason="r")


def test_determinism_is_checked() -> None:
    scenario = _scenario([FuzzDecision()], tools=[FuzzToolSpec(name="t")])
    assert check_determinism(scenario) == []
    (violation,) = check_determinism(scenario, strategies=lambda: [Nondeterministic()])
    assert violation.invariant == "determinism"
    # a run made already counts as the first of the two
    made = run_fuzz_scenario(scenario, strategies=lambda: [Nondeterministic()])
    (again,) = check_determinism(scenario, strategies=lambda: [Nondeterministic()], first=made)
    assert again.invariant == "determinism"
    assert check_determinism(scenario, first=run_fuzz_scenario(scenario)) == []


def test_dynamic_and_restart_paths_end_equal() -> None:
    sections = [
        SectionSpec(
            key="orders",
            text="Orders.",
            tools=[FuzzToolSpec(name="refund")],
            children=[SectionSpec(key="more", text="More.", tools=[FuzzToolSpec(name="audit")])],
        )
    ]
    scenario = _scenario(
        [FuzzDecision(index=0, args="valid"), FuzzDecision(index=0)],
        kind="sections",
        sections=sections,
    )
    outcome = run_fuzz_scenario(scenario)
    assert outcome.ok and outcome.result is not None
    assert outcome.trace is not None and "refund" in outcome.trace.iterations[-1].offered
    assert check_restart_equivalence(outcome) == []

    class HidesRefund(InjectionStrategy):
        """Differs on the restart path only: removes refund when tools cannot change."""

        def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
            if not context.capabilities.supports_dynamic_tools and "refund" in context.offered:
                return ToolsetChange(remove=("refund",), reason="static only")
            return None

    found = check_restart_equivalence(outcome, strategies=lambda: [HidesRefund()])
    assert [v.invariant for v in found] == ["restart_equivalence"]
    assert "the restart path ended with StaticToolsChanged" in found[0].message
