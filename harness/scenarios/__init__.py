"""Scenario files: loading, running, the compact injection timeline, agent factories,
properties of whole runs, injection coverage, and comparisons (one task, several
injection designs, what each costs: ``run_comparison``)."""

from harness.scenarios._agent import AGENT_KEYS, Agent, AgentFactory, build_agent, run_agent
from harness.scenarios._compare import (
    ComparisonResult,
    ComparisonSpec,
    VariantResult,
    is_comparison,
    load_comparison,
    run_comparison,
)
from harness.scenarios._coverage import InjectionCoverage, name_pattern
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
from harness.scenarios._properties import (
    AgentRun,
    Finding,
    Property,
    WireRun,
    check_properties,
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
    "AGENT_KEYS",
    "INVARIANTS",
    "STRATEGIES",
    "Agent",
    "AgentFactory",
    "AgentRun",
    "ComparisonResult",
    "ComparisonSpec",
    "CompletionExpect",
    "Divergence",
    "ExpectSpec",
    "Finding",
    "InjectionCoverage",
    "ModelSpec",
    "Property",
    "Scenario",
    "ScenarioOutcome",
    "ScenarioSpec",
    "TimelineRow",
    "TimelineStep",
    "VariantResult",
    "Violation",
    "WireRun",
    "build_agent",
    "check_invariants",
    "check_properties",
    "check_timeline",
    "discover_scenarios",
    "format_timeline",
    "format_violations",
    "is_comparison",
    "load_comparison",
    "load_scenario",
    "name_pattern",
    "register_strategy",
    "resolve_import",
    "run_agent",
    "run_comparison",
    "run_scenario",
    "timeline_rows",
]
