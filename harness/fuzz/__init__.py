"""Fuzzing: your own agent (``fuzz_agent``), and injection strategies in generated universes.

``fuzz_agent(factory, properties)`` plays the model against the agent a factory makes
(fresh per example): arguments copied from what the run showed or drawn from the
schemas, guided toward new behaviour; the first failure is shrunk and written as a
scenario file that ``harness run`` replays on a fresh agent. ``agent_runs(factory)``
is the same as a hypothesis strategy, for your own ``@given`` tests.

Hypothesis strategies also generate tool universes, model decisions (by index into
the offered tools) and faults (``run_campaign``, ``harness fuzz --universe``): each
generated scenario runs through the ordinary loop and is checked with
``harness.scenarios.check_invariants``.
"""

from __future__ import annotations

import typing

from harness._extras import require as _require
from harness._lazy import lazy_exports as _lazy_exports

# hypothesis (and faker) come with the ``fuzz`` extra; ``import harness`` never needs
# them, and without them this import says which extra to install.
_require("hypothesis", "harness.fuzz (fuzzing)")
_require("faker", "harness.fuzz (realistic generated names)")

if typing.TYPE_CHECKING:
    from harness.fuzz._agent_campaign import AGENT_PROFILES, Guidance, fuzz_agent
    from harness.fuzz._agent_report import AgentFuzzReport
    from harness.fuzz._campaign import (
        DATABASE_ENV,
        PROFILE_ENV,
        PROFILE_PREFIX,
        PROFILES,
        CampaignConfig,
        CampaignReport,
        load_profile,
        load_strategy,
        run_campaign,
    )
    from harness.fuzz._decisions import (
        DECISION_KINDS,
        UNKNOWN_TOOL,
        Decision,
        DecisionModel,
        example_arguments,
        static_tools_model,
    )
    from harness.fuzz._execute import (
        SECRET,
        FuzzOutcome,
        StrategyFactory,
        check_determinism,
        check_restart_equivalence,
        counterexample_data,
        run_fuzz_scenario,
        write_counterexample,
    )
    from harness.fuzz._generators import decisions, fuzz_scenarios, tool_specs, tool_universes
    from harness.fuzz._judge import Finding, no_timeouts
    from harness.fuzz._machine import loop_core_machine
    from harness.fuzz._runs import FUZZ_DEFAULTS, FuzzedRun, agent_runs
    from harness.fuzz._scenario import FuzzScenario
    from harness.fuzz._universe import (
        FAULTS,
        UNIVERSE_KINDS,
        BuiltUniverse,
        FacadeSpec,
        GroupSpec,
        MachineSpec,
        ParamSpec,
        PlaybookSpec,
        ProviderSpec,
        SectionSpec,
        ToolSpec,
        UniverseSpec,
        UnlockSpec,
        build_universe,
        universe_strategies,
        universe_tools,
    )
    from harness.fuzz._watchdog import WATCHDOG_SECONDS

_LAZY: dict[str, str] = {
    "AGENT_PROFILES": "harness.fuzz._agent_campaign",
    "Guidance": "harness.fuzz._agent_campaign",
    "fuzz_agent": "harness.fuzz._agent_campaign",
    "AgentFuzzReport": "harness.fuzz._agent_report",
    "Finding": "harness.fuzz._judge",
    "no_timeouts": "harness.fuzz._judge",
    "FUZZ_DEFAULTS": "harness.fuzz._runs",
    "WATCHDOG_SECONDS": "harness.fuzz._watchdog",
    "FuzzedRun": "harness.fuzz._runs",
    "agent_runs": "harness.fuzz._runs",
    "DATABASE_ENV": "harness.fuzz._campaign",
    "PROFILE_ENV": "harness.fuzz._campaign",
    "PROFILE_PREFIX": "harness.fuzz._campaign",
    "load_profile": "harness.fuzz._campaign",
    "PROFILES": "harness.fuzz._campaign",
    "CampaignConfig": "harness.fuzz._campaign",
    "CampaignReport": "harness.fuzz._campaign",
    "load_strategy": "harness.fuzz._campaign",
    "run_campaign": "harness.fuzz._campaign",
    "DECISION_KINDS": "harness.fuzz._decisions",
    "UNKNOWN_TOOL": "harness.fuzz._decisions",
    "Decision": "harness.fuzz._decisions",
    "DecisionModel": "harness.fuzz._decisions",
    "example_arguments": "harness.fuzz._decisions",
    "static_tools_model": "harness.fuzz._decisions",
    "SECRET": "harness.fuzz._execute",
    "FuzzOutcome": "harness.fuzz._execute",
    "StrategyFactory": "harness.fuzz._execute",
    "check_determinism": "harness.fuzz._execute",
    "check_restart_equivalence": "harness.fuzz._execute",
    "counterexample_data": "harness.fuzz._execute",
    "run_fuzz_scenario": "harness.fuzz._execute",
    "write_counterexample": "harness.fuzz._execute",
    "decisions": "harness.fuzz._generators",
    "fuzz_scenarios": "harness.fuzz._generators",
    "tool_specs": "harness.fuzz._generators",
    "tool_universes": "harness.fuzz._generators",
    "loop_core_machine": "harness.fuzz._machine",
    "FuzzScenario": "harness.fuzz._scenario",
    "FAULTS": "harness.fuzz._universe",
    "UNIVERSE_KINDS": "harness.fuzz._universe",
    "BuiltUniverse": "harness.fuzz._universe",
    "FacadeSpec": "harness.fuzz._universe",
    "GroupSpec": "harness.fuzz._universe",
    "MachineSpec": "harness.fuzz._universe",
    "ParamSpec": "harness.fuzz._universe",
    "PlaybookSpec": "harness.fuzz._universe",
    "ProviderSpec": "harness.fuzz._universe",
    "SectionSpec": "harness.fuzz._universe",
    "ToolSpec": "harness.fuzz._universe",
    "UniverseSpec": "harness.fuzz._universe",
    "UnlockSpec": "harness.fuzz._universe",
    "build_universe": "harness.fuzz._universe",
    "universe_strategies": "harness.fuzz._universe",
    "universe_tools": "harness.fuzz._universe",
}

__all__ = [
    "AGENT_PROFILES",
    "DATABASE_ENV",
    "DECISION_KINDS",
    "FAULTS",
    "FUZZ_DEFAULTS",
    "PROFILES",
    "PROFILE_ENV",
    "PROFILE_PREFIX",
    "SECRET",
    "UNIVERSE_KINDS",
    "UNKNOWN_TOOL",
    "WATCHDOG_SECONDS",
    "AgentFuzzReport",
    "BuiltUniverse",
    "CampaignConfig",
    "CampaignReport",
    "Decision",
    "DecisionModel",
    "FacadeSpec",
    "Finding",
    "FuzzOutcome",
    "FuzzScenario",
    "FuzzedRun",
    "GroupSpec",
    "Guidance",
    "MachineSpec",
    "ParamSpec",
    "PlaybookSpec",
    "ProviderSpec",
    "SectionSpec",
    "StrategyFactory",
    "ToolSpec",
    "UniverseSpec",
    "UnlockSpec",
    "agent_runs",
    "build_universe",
    "check_determinism",
    "check_restart_equivalence",
    "counterexample_data",
    "decisions",
    "example_arguments",
    "fuzz_agent",
    "fuzz_scenarios",
    "load_profile",
    "load_strategy",
    "loop_core_machine",
    "no_timeouts",
    "run_campaign",
    "run_fuzz_scenario",
    "static_tools_model",
    "tool_specs",
    "tool_universes",
    "universe_strategies",
    "universe_tools",
    "write_counterexample",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
