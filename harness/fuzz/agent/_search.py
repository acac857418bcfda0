"""The search behind ``fuzz_agent``: rounds of hypothesis runs, judged, guided, shrunk.

Each round is one hypothesis run of ``ROUND`` examples drawn by ``agent_runs`` and
judged by ``judge``. Guided search (``guidance="coverage"``, the default) gives each
round the corpus of runs that made progress before it (later examples replay their
prefixes) and the behaviour seen so far as the baseline of ``target()``; both stay
fixed within a round, so every example repeats exactly. The first failure ends the
search; its script is shrunk by replaying smaller ones on fresh agents and written as
a scenario file that ``harness run`` replays. One search runs in one process; workers
and Ray run several (``_parallel``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings
from hypothesis.errors import Flaky, Unsatisfiable

from harness._errors import ScriptError, UsageError
from harness.fuzz._loop_options import FUZZ_DEFAULTS
from harness.fuzz._watchdog import (
    WATCHDOG_SECONDS,
    WatchdogTimeout,
    signal_watchdog_available,
    watched,
)
from harness.fuzz.agent._corpus import Corpus
from harness.fuzz.agent._counterexample import write_agent_counterexample
from harness.fuzz.agent._database import ScriptDatabase
from harness.fuzz.agent._judge import (
    Finding,
    judge,
    judge_fuzzed,
    replay,
    replay_differs,
    run_shape,
)
from harness.fuzz.agent._player import ANSWER
from harness.fuzz.agent._report import AgentFuzzReport, counterexample_text
from harness.fuzz.agent._runs import (
    AgentAbort,
    FuzzedRun,
    new_extremes,
    run_features,
    target_runs,
)
from harness.fuzz.agent._shrink import TURN_PASSES, Shrunk, minimise, shrink_steps, step_calls
from harness.fuzz.agent._target import FuzzAgent, LoopTarget, Target, WireTarget
from harness.scenarios import resolve_import
from harness.scenarios._agent import AgentFactory, build_agent, describe_factory
from harness.scenarios._coverage import InjectionCoverage
from harness.scenarios._properties import AgentRun, Property
from harness.scenarios._wire_agent import WireFactory

__all__ = [
    "SHARED_STATE",
    "Guidance",
    "SearchConfig",
    "load_agent_factory",
    "load_property",
    "make_target",
    "search",
    "search_entry",
]

Guidance = Literal["coverage", "corpus", "target", "none"]
"""How the search is guided: ``coverage`` (a corpus of runs that did something new,
whose prefixes later examples replay before drawing on, plus ``target()`` of behaviour
new to the campaign), ``corpus`` (the corpus alone), ``target`` (``target()`` of the
run's own variety, no memory between rounds), ``none`` (plain random generation)."""


ROUND = 25
"""Examples per hypothesis run (a round); guidance renews its corpus and baseline
between rounds (within a round they stay fixed, so that examples repeat)."""
TRIM_TRIES = 8
"""Replays spent trimming one corpus entry (its turns that make no difference go)."""
TRIM_SECONDS = 30.0
"""A safety net only: trimming is bounded by ``TRIM_TRIES`` replays (a time bound would
make the corpus, and so the search, depend on the machine's load)."""
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
SHARED_STATE = (
    "the agent factory {name} shares state between examples (or the agent is not "
    "deterministic): the same calls on a fresh agent gave a different run ({detail}). "
    "Build the agent's world, ids and counters inside the factory, and seed any randomness: "
    "the fuzzer relies on every example starting fresh"
)


def load_agent_factory(
    spec: str | AgentFactory | WireFactory, *, command: str = "harness fuzz"
) -> tuple[Any, str]:
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Failure:
    """The first failing run: its script, the run, the agent it ran and the finding."""

    steps: list[dict[str, Any]]
    run: AgentRun
    agent: FuzzAgent
    finding: Finding
    moves: dict[str, int] = dataclasses.field(default_factory=dict)
    """How the player made the failing run's calls (``FuzzedRun.moves``)."""


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
    wire: str | None = None
    """The wire format the agent's framework calls (``None``: an agent on the harness's
    loop)."""
    hang_seconds: float = WATCHDOG_SECONDS
    """The watchdog: a call still running after this long is a hang (when the agent
    sets no ``tool_timeout``)."""
    stop_file: str | None = None
    """A file whose existence stops the search (another worker found a failure)."""
    import_paths: tuple[str, ...] = ()
    database: str | None = None
    """The example database folder (``None``: none): failing scripts of earlier
    campaigns are replayed first, and this one's is saved (``_database``)."""


class _Search:
    """One process's search: rounds of hypothesis runs until a failure or the budget."""

    def __init__(
        self,
        config: SearchConfig,
        target: Target,
        properties: Sequence[Property],
        *,
        property_names: Sequence[str] = (),
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.config = config
        self.target = target
        self.name = target.name
        self.properties = list(properties)
        self.property_names = list(property_names)
        self.progress = progress
        # a hang is a finding only when the agent has no timeout of its own
        self.watchdog: float | None = None
        self.signal_watchdog = False
        if isinstance(target, LoopTarget):
            probe = build_agent(target.factory, name=target.name)
            explicit = probe.explicit_options
            target.defaults = {k: v for k, v in FUZZ_DEFAULTS.items() if k not in explicit}
            if "tool_timeout" not in explicit:
                self.watchdog = config.hang_seconds
                self.signal_watchdog = signal_watchdog_available()
                if not self.signal_watchdog:  # a thread per call instead
                    target.defaults = {**target.defaults, "tool_timeout": config.hang_seconds}
        else:  # on the wire the run has a thread of its own, bounded by hang_seconds
            self.watchdog = config.hang_seconds
        self.defaults = dict(target.defaults)
        self.coverage = InjectionCoverage()
        target.declare(self.coverage)
        self.features: set[str] = set()
        self.extremes: dict[str, tuple[float, float]] = {}
        """The smallest and largest number under each key of each tool's results so far."""
        self.corpus = Corpus(CORPUS_SIZE)
        self.examples = 0
        self.failing: _Failure | None = None
        self.found_after: float | None = None
        self.examples_to_find: int | None = None
        self.rounds = 0
        self.flaky = 0
        self.replays = 0
        self.witness: tuple[list[dict[str, Any]], list[Any]] | None = None
        """The steps and run shape of the first example replayed that made calls."""
        self.started = time.perf_counter()
        self.cpu_started = time.process_time()
        self.found_cpu: float | None = None
        self.saved = (
            ScriptDatabase(
                config.database,
                agent=target.name,
                wire=target.wire,
                properties=self.property_names,
            )
            if config.database is not None
            else None
        )

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
        extremes = self._extremes(fuzzed)
        if self.config.guidance in ("coverage", "corpus"):
            self.corpus.seen(fuzzed.features)
            if new or extremes:
                self.corpus.add(fuzzed, frozenset(new) | extremes, trim=self._trim)
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
        self.failing = _Failure(
            steps=fuzzed.steps(),
            run=fuzzed.run,
            agent=fuzzed.agent,
            finding=finding,
            moves=fuzzed.moves(),
        )
        raise _found_class(finding.name)(str(finding))

    def _extremes(self, fuzzed: FuzzedRun) -> frozenset[str]:
        """The numbers of ``fuzzed``'s results beyond any seen before (a balance lower,
        a count higher), recorded; as progress of the corpus (``low:withdraw.balance``)."""
        known = self.extremes
        gained = frozenset(new_extremes(fuzzed.extremes, known))
        for name, (low, high) in fuzzed.extremes.items():
            before = known.get(name)
            known[name] = (
                (low, high) if before is None else (min(before[0], low), max(before[1], high))
            )
        return gained

    def _trim(self, steps: list[dict[str, Any]], brought: frozenset[str]) -> list[dict[str, Any]]:
        """The fewest turns of ``steps`` that still make the progress ``brought`` (its
        features; a new extreme is kept as it came)."""
        brought = frozenset(f for f in brought if not f.startswith(("low:", "high:")))
        if not brought:
            return steps

        def keeps(candidate: list[dict[str, Any]]) -> AgentRun | None:
            try:
                run, _agent, _definitions, _played = replay(
                    self.target, [*candidate, {"reply": ANSWER}], watchdog=self._signal_seconds()
                )
            except UsageError as exc:  # out of hypothesis, which would call it flaky
                raise AgentAbort(exc) from exc
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
        """Replay ``fuzzed`` on a fresh agent, and the first example that made calls (a
        world shared between examples drifts away from what that one saw, even once
        every example does the same in it)."""
        checks = [(fuzzed.steps(), run_shape(fuzzed.run))]
        if self.witness is None:
            if fuzzed.run.trace.iterations and any(i.calls for i in fuzzed.run.trace.iterations):
                self.witness = checks[0]
        elif self.replays > FIRST_REPLAYS:
            checks.append(self.witness)
        for steps, shape in checks:
            try:
                detail = replay_differs(self.target, steps, shape, watchdog=self._signal_seconds())
            except UsageError as exc:
                raise AgentAbort(exc) from exc
            if detail is not None:
                raise AgentAbort(UsageError(SHARED_STATE.format(name=self.name, detail=detail)))

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
            database=None,
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
            target_runs(
                self.target,
                max_turns=self.config.max_turns,
                swarm=self.config.swarm,
                baseline=baseline,
                extremes=dict(self.extremes) if guidance == "coverage" else None,
                stop=self._stop,
                watchdog=self._signal_seconds(),
                corpus=entries,  # fixed for the round: examples repeat
                weights=weights,
            )
        )
        def fuzz(fuzzed: FuzzedRun) -> None:
            self._example(fuzzed)

        fuzz()

    def _replay_saved(self) -> None:
        """Replay the scripts the database kept from earlier campaigns: the first that
        still fails is the failure; those that pass now are forgotten."""
        if self.saved is None:
            return
        for steps in self.saved.scripts():
            run, agent, definitions, played = replay(
                self.target, steps, watchdog=self._signal_seconds()
            )
            self.examples += 1
            found = judge(
                run,
                agent,
                self.properties,
                definitions=definitions,
                played=played,
                watchdog=self.watchdog,
            )
            if found is None or isinstance(run.error, ScriptError):
                self.saved.delete(steps)
                continue
            self.failing = _Failure(steps=steps, run=run, agent=agent, finding=found)
            self.found_after = time.perf_counter() - self.started
            self.found_cpu = time.process_time() - self.cpu_started
            self.examples_to_find = self.examples
            return

    def run(self) -> AgentFuzzReport:
        """Search until a failure, the example budget or the time budget."""
        interrupted = False
        try:
            self._replay_saved()
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
                            SHARED_STATE.format(name=self.name, detail=detail)
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
        run, agent, definitions, played = replay(
            self.target, steps, watchdog=self._signal_seconds()
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

    def _shrunk(self, failure: _Failure) -> Shrunk:
        """The failing run, shrunk (``steps``) or as hypothesis left it (a hang: cut after
        the turn that hung, as each replay of it waits out the watchdog)."""
        steps, finding = failure.steps, failure.finding
        if finding.name == "hang":
            cut = [*_up_to_first_hang(steps, failure.run), {"reply": ANSWER}]
            run, found = self._replay(cut)
            if found is not None and found.name == "hang":
                return Shrunk(steps=cut, run=run, finding=found, tries=1)
        if self.config.shrink == "steps" and finding.name != "hang":  # each try would wait
            shrunk = shrink_steps(steps, finding, self._replay, seconds=self.config.shrink_seconds)
            if shrunk is not None:
                return shrunk
        return Shrunk(steps=steps, run=failure.run, finding=finding, tries=0)

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
            failure = self.failing
            finding = failure.finding
            shrunk = self._shrunk(failure)
            if self.saved is not None:
                if shrunk.steps != failure.steps:
                    self.saved.delete(failure.steps)
                self.saved.save(shrunk.steps)
            report.examples += shrunk.tries
            report.finding = shrunk.finding
            report.found_after = self.found_after
            report.found_cpu = self.found_cpu
            report.moves = dict(failure.moves)
            report.examples_to_find = self.examples_to_find
            report.steps = len(shrunk.steps)
            report.counterexample_text = counterexample_text(
                shrunk.steps, shrunk.run, hidden=failure.agent.secret_values()
            )
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
                    wire=self.target.wire,
                    note=f"harness fuzz --agent {self.name}"
                    + (f" --wire {self.target.wire}" if self.target.wire else "")
                    + f" --seed {self.config.seed}",
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


def make_target(factory: Any, name: str, wire: str | None, hang_seconds: float) -> Target:
    """The target of a search: the factory (bounded by ``hang_seconds``: it is the
    agent's own code) on the harness's loop, or on ``wire``."""
    bounded = watched(factory, hang_seconds)
    if wire is not None:
        return WireTarget(bounded, name, wire, hang_seconds=hang_seconds)
    return LoopTarget(bounded, name)


def search(
    config: SearchConfig,
    target: Target,
    properties: Sequence[Property],
    *,
    property_names: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> AgentFuzzReport:
    """Run one search in this process (see the module docstring). The properties are
    the agent's own code: each call is bounded by ``hang_seconds``."""
    properties = [watched(p, config.hang_seconds) for p in properties]
    with _tool_failures_unlogged():
        return _Search(
            config, target, properties, property_names=property_names, progress=progress
        ).run()


class _BelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


@contextlib.contextmanager
def _tool_failures_unlogged() -> Iterator[None]:
    """The fuzzer makes calls fail on purpose (ids that do not exist, values out of
    range), thousands per campaign: their ``harness.tools`` warnings would bury a
    failing test's report under captured log lines. Errors still show."""
    log = logging.getLogger("harness.tools")
    quiet = _BelowError()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def search_entry(config: SearchConfig) -> AgentFuzzReport:
    """A worker's search (module level, so it pickles for processes and Ray)."""
    for entry in config.import_paths:
        if entry not in sys.path:
            sys.path.append(entry)
    assert config.factory_spec is not None
    factory, name = load_agent_factory(config.factory_spec)
    specs = config.properties_spec or ()
    props = [load_property(p) for p in specs]
    target = make_target(factory, name, config.wire, config.hang_seconds)
    # a worker's stdout may be the JSON report's (`harness fuzz --json`): the agent's
    # print() goes to stderr
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return search(config, target, props, property_names=list(specs))
    finally:
        target.close()
