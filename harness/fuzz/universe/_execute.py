"""Running a fuzz scenario through the ordinary loop, checking it, and writing it as a scenario."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import HarnessError, StrategyError, UsageError, VisibilityExpansionRequired
from harness.fuzz._loop_options import FUZZ_DEFAULTS
from harness.fuzz._scenario_file import write_scenario_file
from harness.fuzz._watchdog import WATCHDOG_SECONDS
from harness.fuzz.universe._decisions import DecisionModel
from harness.fuzz.universe._scenario import FuzzScenario
from harness.fuzz.universe._specs import TIMEOUT, UniverseSpec, build_universe
from harness.injection import InjectionStrategy, run_with_sections
from harness.loop import LoopOptions, RunResult, Trace, run
from harness.messages import Message
from harness.models import Model, ScriptedModel, StaticToolsModel, steps_from_data
from harness.scenarios import Violation, check_invariants

__all__ = [
    "SECRET",
    "FuzzOutcome",
    "StrategyFactory",
    "check_determinism",
    "check_restart_equivalence",
    "counterexample_data",
    "run_fuzz_scenario",
    "write_counterexample",
]

SECRET = "sk-fuzz-7f3a9c2e51d04b86"
"""The call-context secret (``api_key``) of every fuzzed run; it must never reach the model."""

StrategyFactory = Callable[[], Sequence[InjectionStrategy]]
"""Makes fresh instances of the strategies under test (one call per run)."""


@dataclasses.dataclass(kw_only=True)
class FuzzOutcome:
    """What one fuzzed run did and which invariants it broke."""

    scenario: FuzzScenario
    result: RunResult | None
    error: BaseException | None
    trace: Trace | None
    messages: list[Message]
    steps: list[dict[str, Any]]
    """The concrete scripted steps the model played (for replay)."""
    violations: list[Violation] = dataclasses.field(default_factory=list)
    _timeline: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """No invariant was broken."""
        return not self.violations

    @property
    def injections(self) -> int:
        """Tools injected during the run."""
        return len(self.trace.injected) if self.trace is not None else 0

    def timeline_key(self) -> str:
        """A short digest of the injection timeline (equal timelines, equal keys)."""
        if self._timeline is None:
            rows = [
                (len(it.offered), [c.name for c in it.calls], list(it.injected), list(it.removed))
                for it in (self.trace or ())
            ]
            self._timeline = hashlib.sha1(json.dumps(rows).encode()).hexdigest()[:12]
        return self._timeline

    def content_digest(self) -> bytes:
        """A digest of what the run did: the model's concrete steps and the timeline.

        Equal scenarios give equal digests (runs are deterministic), in any process;
        far cheaper than serialising the whole scenario.
        """
        played = json.dumps(self.steps, default=str, sort_keys=True)
        return hashlib.sha1(f"{played}\n{self.timeline_key()}".encode()).digest()


def _options(universe: UniverseSpec, max_iterations: int) -> LoopOptions:
    # without the timeout fault the watchdog's limit: a tool the strategy under test
    # injects that never returns is then a finding ("hang"), not a campaign that hangs
    timeout = TIMEOUT if "timeout" in universe.faults() else WATCHDOG_SECONDS
    return LoopOptions(
        max_iterations=max_iterations,
        tool_timeout=timeout,
        context={"api_key": SECRET},
        # async calls a strategy under test starts are lost when the model answers, not
        # waited for (up to 30 s a run): the campaign's speed does not depend on them
        pending_completions=FUZZ_DEFAULTS["pending_completions"],
    )


def _under_test(strategies: StrategyFactory | None) -> list[InjectionStrategy]:
    """Fresh strategies under test; a factory that raises (or exits) is a ``UsageError``."""
    if strategies is None:
        return []
    try:
        made = strategies()
    except HarnessError:
        raise
    except (Exception, SystemExit) as exc:
        raise UsageError(
            f"the strategy factory raised {type(exc).__name__}: {exc} while the campaign ran"
        ) from exc
    items: list[Any] = list(made) if isinstance(made, (list, tuple)) else [made]
    bad = [i for i in items if not isinstance(i, InjectionStrategy)]
    if bad:
        raise UsageError(f"the strategy factory gave {bad!r}, not InjectionStrategy instances")
    return items


def _chain(
    universe: list[InjectionStrategy], tested: list[InjectionStrategy]
) -> list[InjectionStrategy]:
    """The universe's strategies, then those under test; one of a class the universe
    brings too replaces the universe's (two would offer the same tools twice and end the
    run with ``DuplicateToolName``, which is no bug of either)."""
    kinds = {type(s) for s in tested}
    return [*(s for s in universe if type(s) not in kinds), *tested]


def _drive(
    model: Model,
    scenario: FuzzScenario,
    strategies: StrategyFactory | None,
) -> tuple[RunResult | None, BaseException | None, Trace | None, list[Message]]:
    built = build_universe(scenario.universe)
    chosen = _chain(list(built.strategies), _under_test(strategies))
    runner = run_with_sections if built.sections else run
    try:
        result = runner(
            model,
            scenario.prompt,
            tools=built.tools,
            strategies=chosen,
            options=_options(scenario.universe, scenario.max_iterations),
        )
    except HarnessError as exc:
        trace = exc.trace if isinstance(exc.trace, Trace) else None
        return None, exc, trace, list(exc.messages or [])
    except Exception as exc:  # an untyped error is itself a finding: keep the run
        trace = getattr(exc, "harness_trace", None)
        return None, exc, trace, list(getattr(exc, "harness_messages", []))
    return result, None, result.trace, list(result.messages)


def run_fuzz_scenario(
    scenario: FuzzScenario, *, strategies: StrategyFactory | None = None
) -> FuzzOutcome:
    """Run ``scenario`` (plus the strategies under test) and check every invariant."""
    model = DecisionModel(scenario.decisions)
    driven: Model = StaticToolsModel(model) if scenario.static_tools else model
    result, error, trace, messages = _drive(driven, scenario, strategies)
    outcome = FuzzOutcome(
        scenario=scenario,
        result=result,
        error=error,
        trace=trace,
        messages=messages,
        steps=model.steps,
    )
    if trace is None:
        outcome.violations.append(
            Violation(
                invariant="limits",
                message=f"the run ended with {type(error).__name__}: {error} and left no trace",
            )
        )
        return outcome
    outcome.violations = check_invariants(
        trace,
        messages,
        error=error,
        max_iterations=scenario.max_iterations,
        secrets=[SECRET],
        definitions=model.definitions,
    )
    outcome.violations += _crash_and_hang(scenario, error, trace)
    return outcome


def _crash_and_hang(
    scenario: FuzzScenario, error: BaseException | None, trace: Trace
) -> list[Violation]:
    """A strategy that crashed (``StrategyError``) and a call the watchdog stopped are
    violations too: a campaign must not call either a pass."""
    found = []
    if isinstance(error, StrategyError):
        cause = error.__cause__
        shown = cause is None or str(cause) in str(error)
        detail = "" if shown else f" ({type(cause).__name__}: {cause})"
        found.append(
            Violation(invariant="crash", message=f"an injection strategy crashed: {error}{detail}")
        )
    if "timeout" not in scenario.universe.faults():
        for iteration in trace.iterations:
            for call in iteration.calls:
                if call.error_kind == "timeout":
                    found.append(
                        Violation(
                            invariant="hang",
                            message=f"(iteration {iteration.index}) tool {call.name!r} did not "
                            f"return within {WATCHDOG_SECONDS:g}s (the fuzzer's watchdog)",
                        )
                    )
    return found


def check_determinism(
    scenario: FuzzScenario,
    *,
    strategies: StrategyFactory | None = None,
    first: FuzzOutcome | None = None,
) -> list[Violation]:
    """Run ``scenario`` twice: the traces and histories must be equal.

    ``first`` is a run of ``scenario`` made already (with the same strategies), which
    then counts as the first of the two.
    """
    if first is None or first.scenario is not scenario:
        first = run_fuzz_scenario(scenario, strategies=strategies)
    second = run_fuzz_scenario(scenario, strategies=strategies)
    a = first.trace.to_dict() if first.trace else None
    b = second.trace.to_dict() if second.trace else None
    if a != b or first.messages != second.messages:
        return [
            Violation(
                invariant="determinism",
                message="two runs of the same scenario gave different traces or histories",
            )
        ]
    return []


def check_restart_equivalence(
    outcome: FuzzOutcome, *, strategies: StrategyFactory | None = None
) -> list[Violation]:
    """Replay a finished dynamic run on a model without dynamic tools (restart path).

    Both must end with the same tools offered and the same expanded sections. Only
    universes with prompt sections are compared (``run_with_sections`` is the path
    that restarts); runs that did not finish, or ran on a static model already, are
    not compared either.
    """
    if outcome.result is None or outcome.scenario.static_tools:
        return []
    if not outcome.scenario.universe.sections:
        return []
    if outcome.trace is not None and _changed_by_others(outcome.trace):
        return []  # only section changes have a restart fallback (others end the static run)
    replay = StaticToolsModel(ScriptedModel(steps_from_data(outcome.steps), lenient=True))
    result, error, trace, _ = _drive(replay, outcome.scenario, strategies)
    if isinstance(error, VisibilityExpansionRequired):
        return []  # more expansions than run_with_sections restarts for: a limit, not a bug
    if error is not None:
        return [
            Violation(
                invariant="restart_equivalence",
                message=f"the dynamic run finished, but the restart path ended with "
                f"{type(error).__name__}: {error}",
            )
        ]
    # Narrowing only: with no error _drive returns a result and its trace, and an
    # outcome with a result has a trace.
    if result is None or trace is None or outcome.trace is None:  # pragma: no cover - see above
        return []
    dynamic_tools = set(outcome.trace.iterations[-1].offered)
    static_tools = set(trace.iterations[-1].offered)
    problems = []
    if dynamic_tools != static_tools:
        problems.append(
            f"final tools differ: dynamic only {sorted(dynamic_tools - static_tools)}, "
            f"restart only {sorted(static_tools - dynamic_tools)}"
        )
    key = "harness.sections"
    a = getattr(outcome.result.state.get(key), "overrides", None)
    b = getattr(result.state.get(key), "overrides", None)
    if a != b:
        problems.append(f"expanded sections differ: dynamic {a}, restart {b}")
    return [Violation(invariant="restart_equivalence", message=p) for p in problems]


def _changed_by_others(trace: Trace) -> bool:
    """Whether a strategy other than the sections changed the tools after the first request."""
    return any(
        change.strategy != "sections"  # SectionDisclosure's name in the trace
        for it in trace.iterations
        for change in it.changes
        if change.after_call is not None or it.index > 1
    )


def counterexample_data(
    outcome: FuzzOutcome,
    *,
    name: str = "fuzz_counterexample",
    strategy_entries: Sequence[str | Mapping[str, Any]] = (),
    note: str = "",
) -> dict[str, Any]:
    """The scenario-file data that replays ``outcome`` with ``harness run``."""
    scenario = outcome.scenario
    universe = scenario.universe.model_dump(mode="json", exclude_defaults=True)
    options = _options(scenario.universe, scenario.max_iterations)
    data: dict[str, Any] = {
        "name": name,
        "description": note
        or "A shrunk counterexample found by harness fuzz: "
        + "; ".join(str(v) for v in outcome.violations),
        "prompt": scenario.prompt,
        "tools": [{"harness.fuzz:universe_tools": {"universe": universe}}],
        "strategies": [
            {"harness.fuzz:universe_strategies": {"universe": universe}},
            *strategy_entries,
        ],
        "options": {
            "max_iterations": scenario.max_iterations,
            "pending_completions": options.pending_completions,
        }
        | ({"tool_timeout": options.tool_timeout} if options.tool_timeout else {}),
        "context": {"api_key": SECRET},
        "model": {"steps": outcome.steps, "lenient": True}
        | ({"factory": "harness.fuzz:static_tools_model"} if scenario.static_tools else {}),
        "expect": _expect(outcome),
        "tags": ["fuzz"],
    }
    return data


def _expect(outcome: FuzzOutcome) -> dict[str, Any]:
    """What the replay checks: the invariants; the run's error when it is a typed ending
    (a crashed strategy is not: the replay fails on it); no timeout after a hang."""
    expect: dict[str, Any] = {"invariants": True}
    error = outcome.error
    if isinstance(error, HarnessError) and not isinstance(error, StrategyError):
        expect["error"] = type(error).__name__
    if any(v.invariant == "hang" for v in outcome.violations):
        expect["properties"] = ["harness.fuzz:no_timeouts"]
    return expect


def write_counterexample(
    outcome: FuzzOutcome,
    directory: str | Path,
    *,
    strategy_entries: Sequence[str | Mapping[str, Any]] = (),
    note: str = "",
) -> Path:
    """Write ``outcome`` as a scenario YAML file under ``directory``; return its path."""
    digest = hashlib.sha1(outcome.scenario.model_dump_json().encode()).hexdigest()[:10]
    name = f"fuzz_{digest}"
    data = counterexample_data(outcome, name=name, strategy_entries=strategy_entries, note=note)
    return write_scenario_file(data, directory, name)
