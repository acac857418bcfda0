"""Scenario files: loading, running, and the compact injection timeline."""

from harness.scenarios._invariants import (
    INVARIANTS,
    Violation,
    check_invariants,
    format_violations,
)
from harness.scenarios._loader import (
    STRATEGIES,
    Scenario,
    discover_scenarios,
    load_scenario,
    register_strategy,
    resolve_import,
)
from harness.scenarios._runner import ScenarioOutcome, run_scenario
from harness.scenarios._spec import (
    CompletionExpect,
    ExpectSpec,
    ModelSpec,
    ScenarioSpec,
    TimelineStep,
)
from harness.scenarios._timeline import (
    Divergence,
    TimelineRow,
    check_timeline,
    format_timeline,
    timeline_rows,
)

__all__ = [
    "INVARIANTS",
    "STRATEGIES",
    "CompletionExpect",
    "Divergence",
    "ExpectSpec",
    "ModelSpec",
    "Scenario",
    "ScenarioOutcome",
    "ScenarioSpec",
    "TimelineRow",
    "TimelineStep",
    "Violation",
    "check_invariants",
    "check_timeline",
    "discover_scenarios",
    "format_timeline",
    "format_violations",
    "load_scenario",
    "register_strategy",
    "resolve_import",
    "run_scenario",
    "timeline_rows",
]
