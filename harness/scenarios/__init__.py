"""Scenario files: loading, running, the compact injection timeline, and comparisons
(one task, several injection designs, what each costs: ``run_comparison``)."""

from harness.scenarios._compare import (
    ComparisonResult,
    ComparisonSpec,
    VariantResult,
    is_comparison,
    load_comparison,
    run_comparison,
)
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
    "ComparisonResult",
    "ComparisonSpec",
    "CompletionExpect",
    "Divergence",
    "ExpectSpec",
    "ModelSpec",
    "Scenario",
    "ScenarioOutcome",
    "ScenarioSpec",
    "TimelineRow",
    "TimelineStep",
    "VariantResult",
    "Violation",
    "check_invariants",
    "check_timeline",
    "discover_scenarios",
    "format_timeline",
    "format_violations",
    "is_comparison",
    "load_comparison",
    "load_scenario",
    "register_strategy",
    "resolve_import",
    "run_comparison",
    "run_scenario",
    "timeline_rows",
]
