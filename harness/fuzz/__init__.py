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

from harness._deprecation import Renamed as _Renamed, deprecated_getattr as _deprecated_getattr
from harness._extras import require as _require
from harness._lazy import lazy_exports as _lazy_exports

# hypothesis (and faker) come with the ``fuzz`` extra; ``import harness`` never needs
# them, and without them this import says which extra to install.
_require("hypothesis", "harness.fuzz (fuzzing)")
_require("faker", "harness.fuzz (realistic generated names)")

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    # shared by both kinds of fuzzing
    from harness.fuzz._loop_options import FUZZ_DEFAULTS as FUZZ_DEFAULTS
    from harness.fuzz._profiles import PROFILE_ENV as PROFILE_ENV
    from harness.fuzz._watchdog import WATCHDOG_SECONDS as WATCHDOG_SECONDS

    # fuzzing your agent: harness/fuzz/agent/
    from harness.fuzz.agent._campaign import (
        AGENT_PROFILES as AGENT_PROFILES,
        Guidance as Guidance,
        fuzz_agent as fuzz_agent,
    )
    from harness.fuzz.agent._judge import Finding as Finding, no_timeouts as no_timeouts
    from harness.fuzz.agent._report import AgentFuzzReport as AgentFuzzReport
    from harness.fuzz.agent._runs import (
        FuzzedRun as FuzzedRun,
        agent_runs as agent_runs,
    )

    # injection strategies in generated universes: harness/fuzz/universe/
    from harness.fuzz.universe._campaign import (
        DATABASE_ENV as DATABASE_ENV,
        HYPOTHESIS_PROFILES as HYPOTHESIS_PROFILES,
        PROFILE_PREFIX as PROFILE_PREFIX,
        CampaignConfig as CampaignConfig,
        CampaignReport as CampaignReport,
        load_profile as load_profile,
        load_strategy as load_strategy,
        run_campaign as run_campaign,
    )
    from harness.fuzz.universe._decisions import (
        DECISION_KINDS as DECISION_KINDS,
        UNKNOWN_TOOL as UNKNOWN_TOOL,
        DecisionModel as DecisionModel,
        FuzzDecision as FuzzDecision,
        example_arguments as example_arguments,
        static_tools_model as static_tools_model,
    )
    from harness.fuzz.universe._execute import (
        SECRET as SECRET,
        FuzzOutcome as FuzzOutcome,
        StrategyFactory as StrategyFactory,
        check_determinism as check_determinism,
        check_restart_equivalence as check_restart_equivalence,
        counterexample_data as counterexample_data,
        run_fuzz_scenario as run_fuzz_scenario,
        write_counterexample as write_counterexample,
    )
    from harness.fuzz.universe._generators import (
        decisions as decisions,
        fuzz_scenarios as fuzz_scenarios,
        tool_specs as tool_specs,
        tool_universes as tool_universes,
    )
    from harness.fuzz.universe._machine import (
        loop_core_machine as loop_core_machine,
    )
    from harness.fuzz.universe._scenario import (
        FuzzScenario as FuzzScenario,
    )
    from harness.fuzz.universe._specs import (
        FAULTS as FAULTS,
        UNIVERSE_KINDS as UNIVERSE_KINDS,
        BuiltUniverse as BuiltUniverse,
        FacadeSpec as FacadeSpec,
        FuzzParamSpec as FuzzParamSpec,
        FuzzProviderSpec as FuzzProviderSpec,
        FuzzToolSpec as FuzzToolSpec,
        GroupSpec as GroupSpec,
        MachineSpec as MachineSpec,
        PlaybookSpec as PlaybookSpec,
        SectionSpec as SectionSpec,
        UniverseSpec as UniverseSpec,
        UnlockSpec as UnlockSpec,
        build_universe as build_universe,
        universe_strategies as universe_strategies,
        universe_tools as universe_tools,
    )

_lazy_getattr, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())

_RENAMED = {
    renamed.old: renamed
    for renamed in (
        # shadowed typing.ParamSpec in every module importing both
        _Renamed(
            old="ParamSpec",
            new="FuzzParamSpec",
            module="harness.fuzz.universe._specs",
            since="0.2.0",
            removal="0.3.0",
        ),
        # said neither what kind of profile nor which product (AGENT_PROFILES is the other)
        _Renamed(
            old="PROFILES",
            new="HYPOTHESIS_PROFILES",
            module="harness.fuzz.universe._campaign",
            since="0.2.0",
            removal="0.3.0",
        ),
    )
}
__getattr__ = _deprecated_getattr(__name__, _RENAMED, fallback=_lazy_getattr)
"""Lazy re-exports (PEP 562), and the renamed names with a ``DeprecationWarning``;
``__all__`` is the names imported above for type checkers (never the old names)."""
