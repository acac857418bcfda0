"""``fuzz_agent``: fuzz the user's own agent within a time and example budget.

The search runs in rounds of hypothesis runs (``agent_runs`` examples judged by
``judge``). Guided search (``guidance="coverage"``, the default) gives each round the
behaviour seen in the rounds before it as the baseline of ``target()``, so hypothesis's
optimiser climbs toward runs that do something new; the pareto front of earlier rounds
is replayed from an in-memory example database. The first failure stops the search
and is shrunk by hypothesis; the shrunk run is written as a scenario file that
``harness run`` replays on a fresh agent.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings
from hypothesis.database import InMemoryExampleDatabase
from hypothesis.errors import Flaky, Unsatisfiable

from harness._errors import ScriptError, UsageError
from harness._validation import check_choice, is_int, is_number
from harness.fuzz._agent_report import AgentFuzzReport, counterexample_text
from harness.fuzz._corpus import Corpus
from harness.fuzz._counterexample import write_agent_counterexample
from harness.fuzz._judge import Finding, judge, judge_fuzzed, replay_differs, replay_steps
from harness.fuzz._player import ANSWER
from harness.fuzz._runs import (
    FUZZ_DEFAULTS,
    AgentAbort,
    FuzzedRun,
    agent_runs,
    run_features,
)
from harness.fuzz._shrink import TURN_PASSES, Shrunk, minimise, shrink_steps, step_calls
from harness.fuzz._validation import check_choice as check_profile
from harness.fuzz._watchdog import WATCHDOG_SECONDS, WatchdogTimeout, signal_watchdog_available
from harness.scenarios import resolve_import
from harness.scenarios._agent import AgentFactory, build_agent, describe_factory
from harness.scenarios._coverage import InjectionCoverage
from harness.scenarios._properties import AgentRun, Property

__all__ = ["AGENT_PROFILES", "Guidance", "fuzz_agent", "load_agent_factory", "load_property"]

Guidance = Literal["coverage", "corpus", "target", "none"]
"""How the search is guided: ``coverage`` (a corpus of runs that did something new,
whose prefixes later examples replay before drawing on, plus ``target()`` of behaviour
new to the campaign), ``corpus`` (the corpus alone), ``target`` (``target()`` of the
run's own variety, no memory between rounds), ``none`` (plain random generation)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AgentBudget:
    """The default budget of a profile."""

    seconds: float
    examples: int
    seed: int | None
    """A fixed seed (reproducible runs), or ``None`` for a random one (printed)."""


AGENT_PROFILES: dict[str, AgentBudget] = {
    "dev": AgentBudget(seconds=30.0, examples=5_000, seed=None),
    "ci": AgentBudget(seconds=60.0, examples=3_000, seed=0),
    "nightly": AgentBudget(seconds=600.0, examples=200_000, seed=None),
}
"""Budgets of ``fuzz_agent`` per profile (``$HARNESS_FUZZ_PROFILE``, default ``dev``):
whichever of seconds and examples runs out first ends the search. ``ci`` is
reproducible through a fixed seed, not through fewer examples: a derandomised run of
60 examples misses bugs that random search finds in a hundred."""

ROUND = 25
"""Examples per hypothesis run (a round); guidance renews its corpus and baseline
between rounds (within a round they stay fixed, so that examples repeat)."""
TRIM_TRIES = 24
"""Replays spent trimming one corpus entry (its turns that make no difference go)."""
TRIM_SECONDS = 1.0
CORPUS_SIZE = 48
"""Scripts kept in the corpus (the lightest go first, see ``_corpus``)."""
MAX_FLAKY_ROUNDS = 3
"""Rounds that may end because an example did not repeat itself before the agent is
called nondeterministic (a usage error)."""
REPLAY_EVERY = 16
"""Every this many examples one is replayed on a fresh agent (shared state shows)."""
FIRST_REPLAYS = 3
"""The first examples that made calls are replayed too (state shared between examples
shows early: a later world may have nothing left to change)."""
_SHARED_STATE = (
    "the agent factory {name} shares state between examples (or the agent is not "
    "deterministic): the same calls on a fresh agent gave a different run ({detail}). "
    "Build the agent's world, ids and counters inside the factory, and seed any randomness: "
    "the fuzzer relies on every example starting fresh"
)


def load_agent_factory(
    spec: str | AgentFactory, *, command: str = "harness fuzz"
) -> tuple[AgentFactory, str]:
    """The factory for ``module:function`` (or a callable) and its name."""
    if isinstance(spec, str):
        if ":" not in spec:
            raise UsageError(f"--agent takes MODULE:FACTORY, got {spec!r}")
        factory = resolve_import(spec, command=command)
        if not callable(factory):
            raise UsageError(f"agent factory {spec!r} is not callable")
        return factory, spec
    if not callable(spec):
        raise UsageError(f"an agent factory must be a function with no arguments, got {spec!r}")
    return spec, describe_factory(spec)


def load_property(spec: str | Property, *, command: str = "harness fuzz") -> Property:
    """The property for ``module:function`` (or a callable)."""
    found = resolve_import(spec, command=command) if isinstance(spec, str) else spec
    if not callable(found):
        raise UsageError(f"property {spec!r} is not callable: give a function (run) -> None")
    return found


class _Found(AssertionError):
    """Raised inside hypothesis for a finding, so that it shrinks the run."""


_FOUND_CLASSES: dict[str, type[_Found]] = {}


def _found_class(name: str) -> type[_Found]:
    """One exception class per finding name: hypothesis shrinks each kind on its own."""
    cls = _FOUND_CLASSES.get(name)
    if cls is None:
        cls = _FOUND_CLASSES[name] = type("Found", (_Found,), {"finding": name})
    return cls


@dataclasses.dataclass(kw_only=True)
class SearchConfig:
    """One process's search (``fuzz_agent`` makes it; workers get a copy each)."""

    factory_spec: str | None
    properties_spec: tuple[str, ...] | None
    seed: int
    max_examples: int
    max_seconds: float
    max_turns: int = 12
    guidance: Guidance = "coverage"
    swarm: bool = True
    output: str | None = None
    replay_check: bool = True
    shrink: Literal["steps", "hypothesis"] = "steps"
    """``steps``: shrink the failing script by replaying smaller ones (``_shrink``);
    ``hypothesis``: hypothesis's own shrinker on the choice sequence."""
    shrink_seconds: float = 20.0
    hang_seconds: float = WATCHDOG_SECONDS
    """The watchdog: a call still running after this long is a hang (when the agent
    sets no ``tool_timeout``)."""
    stop_file: str | None = None
    """A file whose existence stops the search (another worker found a failure)."""
    import_paths: tuple[str, ...] = ()


class _Search:
    """One process's search: rounds of hypothesis runs until a failure or the budget."""

    def __init__(
        self,
        config: SearchConfig,
        factory: AgentFactory,
        name: str,
        properties: Sequence[Property],
        *,
        property_names: Sequence[str] = (),
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.config = config
        self.factory = factory
        self.name = name
        self.properties = list(properties)
        self.property_names = list(property_names)
        self.progress = progress
        probe = build_agent(factory, name=name)
        self.defaults = {k: v for k, v in FUZZ_DEFAULTS.items() if k not in probe.explicit_options}
        # a hang is a finding only when the agent has no timeout of its own
        self.watchdog: float | None = None
        self.signal_watchdog = False
        if "tool_timeout" not in probe.explicit_options:
            self.watchdog = config.hang_seconds
            self.signal_watchdog = signal_watchdog_available()
            if not self.signal_watchdog:  # a thread per call instead
                self.defaults["tool_timeout"] = config.hang_seconds
        self.coverage = InjectionCoverage()
        self.coverage.declare(probe.tools, probe.strategies)
        self.features: set[str] = set()
        self.corpus = Corpus(CORPUS_SIZE)
        self.examples = 0
        self.failing: tuple[FuzzedRun, Finding] | None = None
        self.found_after: float | None = None
        self.examples_to_find: int | None = None
        self.rounds = 0
        self.flaky = 0
        self.replays = 0
        self.started = time.perf_counter()
        self.cpu_started = time.process_time()
        self.found_cpu: float | None = None
        self.database = InMemoryExampleDatabase()

    # -- the budget -------------------------------------------------------------------

    def _stop(self) -> bool:
        if self.failing is not None:
            return False  # shrinking: let hypothesis finish
        if time.perf_counter() - self.started >= self.config.max_seconds:
            return True
        stop_file = self.config.stop_file
        return stop_file is not None and os.path.exists(stop_file)

    # -- one example ------------------------------------------------------------------

    def _example(self, fuzzed: FuzzedRun) -> None:
        self.examples += 1
        if self.progress is not None:
            self.progress(1)
        new = fuzzed.features - self.features
        self.features |= new
        self.coverage.add_run(fuzzed.run.trace)
        if self.config.guidance in ("coverage", "corpus"):
            self.corpus.seen(fuzzed.features)
            if new:
                self.corpus.add(fuzzed, frozenset(new), trim=self._trim)
        if self.failing is None and self._replay_due(fuzzed):
            self.replays += 1
            self._check_replay(fuzzed)
        try:
            finding = judge_fuzzed(fuzzed, self.properties, watchdog=self.watchdog)
        except UsageError as exc:
            raise AgentAbort(exc) from exc
        if finding is None:
            return
        if self.found_after is None:
            self.found_after = time.perf_counter() - self.started
            self.found_cpu = time.process_time() - self.cpu_started
            self.examples_to_find = self.examples
        self.failing = (fuzzed, finding)
        raise _found_class(finding.name)(str(finding))

    def _trim(self, steps: list[dict[str, Any]], brought: frozenset[str]) -> list[dict[str, Any]]:
        """The fewest turns of ``steps`` that still make the progress ``brought``."""

        def keeps(candidate: list[dict[str, Any]]) -> AgentRun | None:
            run, _agent, _definitions, _played = replay_steps(
                self.factory,
                [*candidate, {"reply": ANSWER}],
                name=self.name,
                defaults=self.defaults,
                watchdog=self._signal_seconds(),
            )
            if isinstance(run.error, ScriptError):
                return None
            return run if brought <= run_features(run.trace, run.error) else None

        found = minimise(
            steps, keeps, passes=TURN_PASSES, seconds=TRIM_SECONDS, max_tries=TRIM_TRIES
        )
        return found[0] if found is not None else steps

    def _replay_due(self, fuzzed: FuzzedRun) -> bool:
        """Replay the first examples that made calls, then one in ``REPLAY_EVERY``; never
        one the watchdog stopped (its replay would wait as long again)."""
        if not self.config.replay_check:
            return False
        made = [c for i in fuzzed.run.trace.iterations for c in i.calls]
        if any(isinstance(c.exception, WatchdogTimeout) or c.error_kind == "timeout" for c in made):
            return False
        if made and self.replays < FIRST_REPLAYS:
            return True
        return self.examples % REPLAY_EVERY == 0

    def _check_replay(self, fuzzed: FuzzedRun) -> None:
        try:
            detail = replay_differs(
                self.factory,
                fuzzed,
                name=self.name,
                defaults=self.defaults,
                watchdog=self._signal_seconds(),
            )
        except UsageError as exc:
            raise AgentAbort(exc) from exc
        if detail is not None:
            raise AgentAbort(UsageError(_SHARED_STATE.format(name=self.name, detail=detail)))

    # -- rounds -----------------------------------------------------------------------

    def _round(self, index: int, size: int) -> None:
        guidance = self.config.guidance
        baseline: frozenset[str] | None = {
            "coverage": frozenset(self.features),
            "target": frozenset(),
            "corpus": None,
            "none": None,
        }[guidance]
        entries, weights = self.corpus.frozen()
        phases = [Phase.reuse, Phase.generate]
        if baseline is not None:
            phases.append(Phase.target)
        if self.config.shrink == "hypothesis":
            phases.append(Phase.shrink)

        @settings(
            max_examples=size,
            database=self.database,
            deadline=None,
            derandomize=False,
            phases=phases,
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        @hypothesis_seed(self.config.seed + index)
        @given(
            agent_runs(
                self.factory,
                name=self.name,
                max_turns=self.config.max_turns,
                swarm=self.config.swarm,
                defaults=self.defaults,
                baseline=baseline,
                stop=self._stop,
                watchdog=self._signal_seconds(),
                corpus=entries,  # fixed for the round: examples repeat
                weights=weights,
            )
        )
        def fuzz(fuzzed: FuzzedRun) -> None:
            self._example(fuzzed)

        fuzz()

    def run(self) -> AgentFuzzReport:
        """Search until a failure, the example budget or the time budget."""
        interrupted = False
        try:
            while self.failing is None and self.examples < self.config.max_examples:
                if self._stop():
                    break
                size = min(ROUND, self.config.max_examples - self.examples)
                try:
                    self._round(self.rounds, size)
                except Unsatisfiable:
                    break  # every example was refused: the budget ran out
                except _Found:
                    break
                except AgentAbort as abort:
                    raise abort.error from None
                except Flaky as exc:
                    # an example did not repeat itself (a value seen that differs from run
                    # to run changed a choice): the round ends; what it found is kept
                    self.flaky += 1
                    if self.failing is None and self.flaky > MAX_FLAKY_ROUNDS:
                        detail = str(exc).splitlines()[0]
                        raise UsageError(
                            _SHARED_STATE.format(name=self.name, detail=detail)
                        ) from None
                    if self.failing is not None:
                        break
                finally:
                    self.rounds += 1
        except KeyboardInterrupt:
            interrupted = True
        return self._report(interrupted)

    def _signal_seconds(self) -> float | None:
        """The signal watchdog's limit for a run, or ``None`` when it is not used."""
        return self.watchdog if self.signal_watchdog else None

    def _replay(self, steps: list[dict[str, Any]]) -> tuple[AgentRun, Finding | None]:
        run, agent, definitions, played = replay_steps(
            self.factory,
            steps,
            name=self.name,
            defaults=self.defaults,
            watchdog=self._signal_seconds(),
        )
        found = judge(
            run,
            agent,
            self.properties,
            definitions=definitions,
            played=played,
            watchdog=self.watchdog,
        )
        return run, found

    def _shrunk(self, fuzzed: FuzzedRun, finding: Finding) -> Shrunk:
        """The failing run, shrunk (``steps``) or as hypothesis left it (a hang: cut after
        the turn that hung, as each replay of it waits out the watchdog)."""
        steps = fuzzed.steps()
        if finding.name == "hang":
            steps = [*_up_to_first_hang(steps, fuzzed.run), {"reply": ANSWER}]
            run, found = self._replay(steps)
            if found is not None and found.name == "hang":
                return Shrunk(steps=steps, run=run, finding=found, tries=1)
            steps = fuzzed.steps()
        if self.config.shrink == "steps" and finding.name != "hang":  # each try would wait
            shrunk = shrink_steps(steps, finding, self._replay, seconds=self.config.shrink_seconds)
            if shrunk is not None:
                return shrunk
        return Shrunk(steps=steps, run=fuzzed.run, finding=finding, tries=0)

    def _report(self, interrupted: bool) -> AgentFuzzReport:
        report = AgentFuzzReport(
            agent=self.name,
            examples=self.examples,
            seed=self.config.seed,
            rounds=self.rounds,
            coverage=self.coverage,
            behaviours=len(self.features),
            interrupted=interrupted,
        )
        if self.failing is not None:
            fuzzed, finding = self.failing
            shrunk = self._shrunk(fuzzed, finding)
            report.examples += shrunk.tries
            report.finding = shrunk.finding
            report.found_after = self.found_after
            report.found_cpu = self.found_cpu
            report.examples_to_find = self.examples_to_find
            report.steps = len(shrunk.steps)
            report.counterexample_text = counterexample_text(shrunk.steps, shrunk.run)
            if self.config.output is not None:
                options = dict(self.defaults)
                if finding.name == "hang":  # so that `harness run` does not hang on it
                    options["tool_timeout"] = self.watchdog
                path = write_agent_counterexample(
                    shrunk.steps,
                    shrunk.finding,
                    self.config.output,
                    error=shrunk.run.error,
                    agent=self.name,
                    properties=self.property_names,
                    options=options,
                    note=f"harness fuzz --agent {self.name} --seed {self.config.seed}",
                )
                report.counterexample = str(path)
        report.seconds = report.busy = time.perf_counter() - self.started
        host = f"{socket.gethostname()}:{os.getpid()}"
        report.by_worker = {host: (report.examples, report.busy)}
        return report


def _up_to_first_hang(steps: list[dict[str, Any]], run: AgentRun) -> list[dict[str, Any]]:
    """The turns of ``steps`` up to the one whose call the watchdog stopped."""
    made = [call for iteration in run.trace.iterations for call in iteration.calls]
    hung = next(
        (
            number
            for number, call in enumerate(made, start=1)
            if call.error_kind == "timeout" or isinstance(call.exception, WatchdogTimeout)
        ),
        None,
    )
    count = 0
    for index, step in enumerate(steps):
        count += len(step_calls(step))
        if hung is not None and count >= hung:
            return steps[: index + 1]
    return [s for s in steps if step_calls(s)]


def _check_budget(max_examples: Any, max_seconds: Any) -> None:
    if max_examples is not None and not (is_int(max_examples) and max_examples >= 1):
        raise UsageError(f"max_examples must be an int >= 1, got {max_examples!r}")
    if max_seconds is not None and not (
        is_number(max_seconds) and max_seconds > 0 and math.isfinite(max_seconds)
    ):
        raise UsageError(f"max_seconds must be a number of seconds > 0, got {max_seconds!r}")


def check_output(output: str | Path | None) -> str | None:
    """The output folder as text; a path naming an existing file is a ``UsageError``."""
    if output is None:
        return None
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"--output {str(folder)!r} is an existing file; counterexamples go in a folder: "
            "name a folder (it is created when needed)"
        )
    return str(folder)


def _profile_budget(profile: str | None) -> tuple[str, AgentBudget]:
    from harness.fuzz._campaign import PROFILE_ENV

    chosen = profile or os.environ.get(PROFILE_ENV) or "dev"
    check_profile(f"profile (or ${PROFILE_ENV})", chosen, tuple(AGENT_PROFILES))
    return chosen, AGENT_PROFILES[chosen]


def _check_shared_instances(factory: AgentFactory, name: str) -> None:
    """Two agents from the factory must not share strategy instances or a state dict."""
    first, second = build_agent(factory, name=name), build_agent(factory, name=name)
    shared = [s for s in first.strategies if any(s is t for t in second.strategies)]
    if shared:
        raise UsageError(
            f"the agent factory {name} returns the same strategy instance(s) "
            f"{[s.name for s in shared]} on every call: strategies keep per-run state, so "
            "examples would share it. Build them inside the factory"
        )
    if first.state is not None and first.state is second.state:
        raise UsageError(
            f"the agent factory {name} returns the same 'state' dict on every call: make a "
            "new dict inside the factory (examples would share it)"
        )


def fuzz_agent(
    factory: str | AgentFactory,
    properties: Sequence[str | Property] = (),
    *,
    max_examples: int | None = None,
    max_seconds: float | None = None,
    seed: int | None = None,
    output: str | Path | None = None,
    profile: str | None = None,
    max_turns: int = 12,
    guidance: Guidance = "coverage",
    swarm: bool = True,
    workers: int = 1,
    ray: str | None = None,
    replay_check: bool = True,
    hang_seconds: float = WATCHDOG_SECONDS,
    progress: Callable[[int], None] | None = None,
) -> AgentFuzzReport:
    """Fuzz the agent ``factory`` makes, with the fuzzer playing the model.

    ``factory`` is a function with no arguments (or ``"module:function"``) returning
    the keyword arguments of ``harness.run`` without the model; it is called once per
    example. ``properties`` are functions ``(run) -> None`` raising ``AssertionError``
    (or ``"module:function"``); the built-in invariants run as well, and a strategy
    crash or a call that never returns is a finding by itself. The search ends at the
    first failure (shrunk, and written to ``output`` as a scenario file when given),
    after ``max_examples`` examples or ``max_seconds`` seconds (defaults: the
    profile's, see ``AGENT_PROFILES``). ``workers`` processes (or Ray: ``"local"`` or
    an address) search with distinct seeds; the first failure wins. A call still
    running after ``hang_seconds`` is a hang (when the agent sets no ``tool_timeout``).
    ``guidance`` picks the search (see ``Guidance``); ``replay_check`` replays an
    example now and then on a fresh agent to detect state shared between examples.
    Bad input raises ``UsageError`` before the search starts.
    """
    from harness.fuzz._agent_parallel import run_parallel

    _check_budget(max_examples, max_seconds)
    if not (is_number(hang_seconds) and 0 < hang_seconds < math.inf):
        raise UsageError(f"hang_seconds must be a number of seconds > 0, got {hang_seconds!r}")
    if not (is_int(max_turns) and max_turns >= 1):
        raise UsageError(f"max_turns must be an int >= 1, got {max_turns!r}")
    if not (is_int(workers) and workers >= 1):
        raise UsageError(f"workers must be an int >= 1, got {workers!r}")
    if seed is not None and not (is_int(seed) and seed >= 0):
        raise UsageError(f"seed must be an int >= 0, got {seed!r}")
    check_choice(guidance, Guidance, name="guidance")
    if isinstance(properties, (str, bytes)) or callable(properties):
        raise UsageError(
            f"properties must be a list of functions (or 'module:function' texts), "
            f"got {properties!r}"
        )
    folder = check_output(output)
    built, name = load_agent_factory(factory)
    props = [load_property(p) for p in properties]
    names = [p if isinstance(p, str) else describe_factory(p) for p in properties]
    _check_shared_instances(built, name)
    _profile, budget = _profile_budget(profile)
    chosen_seed = seed if seed is not None else budget.seed
    if chosen_seed is None:
        chosen_seed = random.randrange(1_000_000)
    config = SearchConfig(
        factory_spec=factory if isinstance(factory, str) else None,
        properties_spec=tuple(p for p in properties if isinstance(p, str))
        if all(isinstance(p, str) for p in properties)
        else None,
        seed=chosen_seed,
        max_examples=max_examples if max_examples is not None else budget.examples,
        max_seconds=float(max_seconds) if max_seconds is not None else budget.seconds,
        max_turns=max_turns,
        guidance=guidance,
        swarm=swarm,
        output=folder,
        replay_check=replay_check,
        hang_seconds=float(hang_seconds),
        import_paths=tuple(p for p in sys.path if p),
    )
    if workers > 1 or ray:
        return run_parallel(config, workers=workers, ray=ray, progress=progress)
    return _Search(config, built, name, props, property_names=names, progress=progress).run()


def search_entry(config: SearchConfig) -> AgentFuzzReport:
    """A worker's search (module level, so it pickles for processes and Ray)."""
    for entry in config.import_paths:
        if entry not in sys.path:
            sys.path.append(entry)
    assert config.factory_spec is not None
    factory, name = load_agent_factory(config.factory_spec)
    specs = config.properties_spec or ()
    props = [load_property(p) for p in specs]
    return _Search(config, factory, name, props, property_names=list(specs)).run()
