"""Fuzz campaigns: hypothesis runs generated scenarios, shrinks failures, writes them out.

One process (``run_campaign``), several (``workers=N``: a process pool, each chunk
with its own seed range, reports merged) or a Ray cluster (``ray="local"`` or an
address; the ``ray`` extra). A counterexample is shrunk where it was found and
written as a scenario file that ``harness run`` replays.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import gc
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)

from harness._errors import HarnessError, UsageError
from harness._validation import check_choice, check_choices, check_int, check_output
from harness.fuzz._profiles import choose_profile, profile_in_effect
from harness.fuzz._ray import connect_ray
from harness.fuzz.universe._execute import (
    FuzzOutcome,
    StrategyFactory,
    check_determinism,
    check_restart_equivalence,
    run_fuzz_scenario,
    write_counterexample,
)
from harness.fuzz.universe._generators import fuzz_scenarios
from harness.fuzz.universe._scenario import FuzzScenario
from harness.fuzz.universe._specs import FAULTS, UNIVERSE_KINDS
from harness.injection import InjectionStrategy
from harness.scenarios import STRATEGIES, resolve_import

__all__ = [
    "DATABASE_ENV",
    "HYPOTHESIS_PROFILES",
    "PROFILE_PREFIX",
    "CampaignConfig",
    "CampaignReport",
    "load_profile",
    "load_strategy",
    "run_campaign",
]

DATABASE_ENV = "HARNESS_FUZZ_DATABASE"
"""Environment variable with the example database folder of ``harness fuzz``."""
PROFILE_PREFIX = "harness-"
"""The profiles are registered with hypothesis as ``harness-dev``, ``harness-ci`` and
``harness-nightly`` (prefixed, so they never replace a project's own ``ci`` profile)."""

_SUPPRESS = (
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
)

HYPOTHESIS_PROFILES: dict[str, settings] = {
    "dev": settings(
        max_examples=200, deadline=None, suppress_health_check=_SUPPRESS, print_blob=False
    ),
    "ci": settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=_SUPPRESS,
        print_blob=False,
    ),
    "nightly": settings(
        max_examples=10_000, deadline=None, suppress_health_check=_SUPPRESS, print_blob=False
    ),
}
"""Hypothesis settings per profile: ``dev`` (quick), ``ci`` (bounded and derandomised),
``nightly`` (long). Registered with hypothesis under ``PROFILE_PREFIX + name``."""

for _name, _profile in HYPOTHESIS_PROFILES.items():
    settings.register_profile(PROFILE_PREFIX + _name, _profile)


def load_profile(name: str | None = None) -> str:
    """Make a harness profile hypothesis's default settings; return its registered name.

    ``name`` is ``dev``, ``ci`` or ``nightly`` (default: ``$HARNESS_FUZZ_PROFILE`` or
    ``dev``); an unknown name raises ``UsageError`` listing the valid ones. Call it in a
    ``conftest.py`` so that your own ``@given`` tests run under the same budget as
    ``harness fuzz`` (or pass ``--hypothesis-profile harness-ci`` to pytest after
    importing ``harness.fuzz``).
    """
    registered = PROFILE_PREFIX + choose_profile(name, HYPOTHESIS_PROFILES)
    settings.load_profile(registered)
    return registered


_DETERMINISM_EVERY = 8
"""One scenario in this many (chosen by what it did, so reruns agree) is run twice."""

_CHUNK = 50
"""Examples per task when a campaign is split across workers."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class CampaignConfig:
    """What to fuzz and how long; ``validate()`` checks it all before anything runs."""

    kind: str = "mixed"
    """The universe kind (one of ``UNIVERSE_KINDS``)."""
    strategy: str | None = None
    """The strategy under test: a name from ``harness.scenarios.STRATEGIES`` or an import
    path ``module:factory`` (called with no arguments per run)."""
    examples: int | None = None
    """Scenarios to generate (default: the profile's ``max_examples``)."""
    seed: int = 0
    """Seed of the first (or only) worker; worker ``i`` uses ``seed + i``."""
    profile: str | None = None
    """``dev``, ``ci`` or ``nightly`` (default: ``$HARNESS_FUZZ_PROFILE`` or ``dev``)."""
    max_tools: int = 20
    max_depth: int = 2
    max_fan_out: int = 3
    max_turns: int = 20
    max_iterations: int = 20
    faults: tuple[str, ...] = FAULTS
    database: str | None = None
    """Hypothesis example database folder; ``None`` for none (``":memory:"`` in memory)."""
    output: str = "fuzz-counterexamples"
    """Where counterexample scenario files are written."""
    workers: int = 1
    """Processes on this machine."""
    ray: str | None = None
    """``"local"`` or a Ray cluster address (``ray://host:10001``, ``auto``)."""

    def profile_name(self) -> str:
        """The profile in effect."""
        return profile_in_effect(self.profile)

    def hypothesis_settings(self) -> settings:
        """The registered hypothesis profile in effect (``harness-<profile>``)."""
        return settings.get_profile(
            PROFILE_PREFIX + choose_profile(self.profile, HYPOTHESIS_PROFILES)
        )

    def example_count(self) -> int:
        """How many examples the campaign runs in total."""
        if self.examples is not None:
            return self.examples
        return int(HYPOTHESIS_PROFILES[self.profile_name()].max_examples)

    def validate(self) -> None:
        """Raise ``UsageError`` naming the first bad parameter (the strategy is built once)."""
        check_choice(self.kind, UNIVERSE_KINDS, name="universe kind")
        choose_profile(self.profile, HYPOTHESIS_PROFILES)
        if self.examples is not None:
            check_int(self.examples, name="examples", minimum=1)
        check_int(self.seed, name="seed", minimum=0)
        check_int(self.max_tools, name="max_tools", minimum=1)
        check_int(self.max_depth, name="max_depth", minimum=1)
        check_int(self.max_fan_out, name="max_fan_out", minimum=1)
        check_int(self.max_turns, name="max_turns", minimum=0)
        check_int(self.max_iterations, name="max_iterations", minimum=1)
        check_choices(self.faults, FAULTS, name="faults")
        check_int(self.workers, name="workers", minimum=1)
        if self.ray is not None and not self.ray.strip():
            raise UsageError("ray must be 'local' or a cluster address, got an empty string")
        check_output(self.output)
        if self.strategy is not None:
            check_strategies(load_strategy(self.strategy), self.strategy)


def check_strategies(factory: Any, name: str = "strategies") -> list[InjectionStrategy]:
    """Build ``factory`` once: a list of fresh strategies, else a ``UsageError`` saying
    what it raised or returned (``SystemExit`` included: a factory must not end the
    process, and a campaign must never end in silence with status 0)."""
    if not callable(factory):
        raise UsageError(
            f"{name} must be a factory (a function with no arguments returning strategies), "
            f"got {factory!r}"
        )
    try:
        made = factory()
    except HarnessError:
        raise
    except (Exception, SystemExit) as exc:
        what = (
            f"SystemExit({exc.code!r}) when built: a factory returns the strategies, it must "
            "not end the process"
            if isinstance(exc, SystemExit)
            else f"{type(exc).__name__} when built: {exc}"
        )
        raise UsageError(f"strategy {name!r} raised {what}") from exc
    items = list(made) if isinstance(made, (list, tuple)) else [made]
    bad = [i for i in items if not isinstance(i, InjectionStrategy)]
    if bad:
        raise UsageError(
            f"strategy {name!r} gave {bad!r}, not InjectionStrategy instances; return a list "
            "of fresh strategies (e.g. [EntityDiscovery()])"
        )
    return items


def load_strategy(name: str) -> StrategyFactory:
    """A factory of fresh strategy instances for a registry name or ``module:factory``."""
    if ":" not in name:
        factory = STRATEGIES.get(name)
        if factory is None:
            raise UsageError(
                f"unknown strategy {name!r}; known: {sorted(STRATEGIES)} "
                "(or give an import path 'module:factory')"
            )
        registered = factory
        return lambda: [registered()]
    try:
        target = resolve_import(name, command="harness fuzz")
    except HarnessError as exc:
        raise UsageError(f"strategy {name!r}: {exc}") from None

    def build() -> list[InjectionStrategy]:
        made = (
            target() if callable(target) and not isinstance(target, InjectionStrategy) else target
        )
        items = list(made) if isinstance(made, (list, tuple)) else [made]
        bad = [i for i in items if not isinstance(i, InjectionStrategy)]
        if bad:
            raise UsageError(f"strategy {name!r} gave {bad!r}, not InjectionStrategy instances")
        return items

    return build


@dataclasses.dataclass(kw_only=True)
class CampaignReport:
    """What a campaign did; reports of workers merge into one."""

    examples: int = 0
    """Scenarios run (shrinking included)."""
    timelines: set[str] = dataclasses.field(default_factory=set)
    """Digests of the distinct injection timelines seen."""
    injections: int = 0
    """Tools injected over all runs."""
    errors: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """How runs ended: ``finished`` or the error class name."""
    violations: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """Runs that broke each invariant."""
    counterexamples: list[str] = dataclasses.field(default_factory=list)
    """Scenario files written (one per failing task, shrunk)."""
    failures: list[str] = dataclasses.field(default_factory=list)
    """The broken invariants of each counterexample, as text."""
    elapsed: float = 0.0
    """Wall-clock seconds."""
    busy: float = 0.0
    """Seconds spent in the tasks (summed over workers)."""
    tasks: int = 0
    """Tasks (seed ranges) that ran."""
    workers: int = 1
    interrupted: bool = False
    """The campaign was stopped (Ctrl-C) before the end."""
    sizes: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    """Universes run, by size (tools defined, as ``UniverseSpec.size()``)."""
    by_worker: dict[str, tuple[int, float]] = dataclasses.field(default_factory=dict)
    """Per worker process (``host:pid``): scenarios run and seconds busy."""

    @property
    def failed(self) -> bool:
        """Some invariant was broken."""
        return bool(self.counterexamples or self.failures)

    @property
    def per_second(self) -> float:
        """Scenarios per wall-clock second, all workers together."""
        return self.examples / self.elapsed if self.elapsed else 0.0

    @property
    def per_worker_second(self) -> float:
        """Scenarios per second of one worker."""
        return self.examples / self.busy if self.busy else 0.0

    def worker_rates(self) -> dict[str, float]:
        """Scenarios per busy second of each worker process."""
        return {name: n / busy if busy else 0.0 for name, (n, busy) in self.by_worker.items()}

    @property
    def injections_per_run(self) -> float:
        """Average tools injected per run."""
        return self.injections / self.examples if self.examples else 0.0

    def merge(self, other: CampaignReport) -> None:
        """Add ``other`` (another worker's report) to this one."""
        self.examples += other.examples
        self.timelines |= other.timelines
        self.injections += other.injections
        self.errors.update(other.errors)
        self.violations.update(other.violations)
        self.counterexamples += other.counterexamples
        self.failures += other.failures
        self.busy += other.busy
        self.tasks += other.tasks
        self.interrupted = self.interrupted or other.interrupted
        self.sizes.update(other.sizes)
        for name, (examples, busy) in other.by_worker.items():
            before = self.by_worker.get(name, (0, 0.0))
            self.by_worker[name] = (before[0] + examples, before[1] + busy)

    def record(self, outcome: FuzzOutcome) -> None:
        """Count one run."""
        self.examples += 1
        self.timelines.add(outcome.timeline_key())
        self.injections += outcome.injections
        self.errors[type(outcome.error).__name__ if outcome.error else "finished"] += 1
        self.sizes[outcome.scenario.universe.size()] += 1
        for name in sorted({v.invariant for v in outcome.violations}):
            self.violations[name] += 1


class _Violated(AssertionError):
    """Raised inside the hypothesis test so that it shrinks the scenario."""


class _Hung(BaseException):
    """Ends the hypothesis run at once: shrinking a hang would wait out every replay."""


def _database(location: str | None) -> ExampleDatabase | None:
    if location is None:
        return None
    if location == ":memory:":
        return InMemoryExampleDatabase()
    return DirectoryBasedExampleDatabase(location)


def _check(outcome: FuzzOutcome, factory: StrategyFactory | None) -> FuzzOutcome:
    scenario = outcome.scenario
    if outcome.ok and outcome.result is not None and scenario.universe.sections:
        outcome.violations += check_restart_equivalence(outcome, strategies=factory)
    if outcome.ok and outcome.content_digest()[0] % _DETERMINISM_EVERY == 0:
        outcome.violations += check_determinism(scenario, strategies=factory, first=outcome)
    return outcome


def _run_task(
    config: CampaignConfig,
    seed: int,
    examples: int,
    *,
    factory: StrategyFactory | None = None,
    progress: Callable[[int], None] | None = None,
) -> CampaignReport:
    """One hypothesis run of ``examples`` scenarios from ``seed``; failures are written."""
    if factory is None and config.strategy is not None:
        factory = load_strategy(config.strategy)
    report = CampaignReport(tasks=1)
    failing: list[FuzzOutcome] = []
    started = time.perf_counter()

    @settings(
        config.hypothesis_settings(),
        max_examples=examples,
        database=_database(config.database),
        report_multiple_bugs=False,
        derandomize=False,  # the explicit seed below makes tasks reproducible and distinct
    )
    @hypothesis_seed(seed)
    @given(
        fuzz_scenarios(
            config.kind,
            max_tools=config.max_tools,
            max_depth=config.max_depth,
            max_fan_out=config.max_fan_out,
            max_turns=config.max_turns,
            max_iterations=config.max_iterations,
            faults=config.faults,
        )
    )
    def campaign(scenario: FuzzScenario) -> None:
        outcome = _check(run_fuzz_scenario(scenario, strategies=factory), factory)
        report.record(outcome)
        if progress is not None:
            progress(1)
        if not outcome.ok:
            failing.append(outcome)
            if any(v.invariant == "hang" for v in outcome.violations):
                raise _Hung
            raise _Violated("; ".join(str(v) for v in outcome.violations))

    try:
        with _fewer_collections():
            campaign()
    except _Hung:
        pass  # written below as it was found
    except KeyboardInterrupt:
        report.interrupted = True
    except Exception:
        if not failing:  # not ours: hypothesis itself or the generator failed
            raise
    if failing:
        smallest = failing[-1]  # hypothesis replays the shrunk example last
        strategy_entries = [config.strategy] if config.strategy else []
        path = write_counterexample(
            smallest,
            config.output,
            strategy_entries=strategy_entries,
            note=f"harness fuzz --universe {config.kind} --seed {seed}: "
            + "; ".join(str(v) for v in smallest.violations),
        )
        report.counterexamples.append(str(path))
        report.failures.append("; ".join(str(v) for v in smallest.violations))
    report.busy = report.elapsed = time.perf_counter() - started
    report.by_worker = {f"{socket.gethostname()}:{os.getpid()}": (report.examples, report.busy)}
    return report


_GC_THRESHOLD = 10_000
"""Allocations between young-generation collections while a campaign task runs.

Generating and running scenarios allocates many short-lived objects; at Python's
default (700) the collector runs some 200 times per 300 scenarios, about a tenth of
the CPU time. Objects still die as their references go: only cycles wait longer."""


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Raise the young-generation GC threshold for the task; restore it afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], _GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _chunks(config: CampaignConfig) -> Iterator[tuple[int, int]]:
    """``(seed, examples)`` per task: consecutive seeds, ``_CHUNK`` examples each."""
    total = config.example_count()
    size = max(1, min(_CHUNK, -(-total // config.workers)))
    seed = config.seed
    while total > 0:
        count = min(size, total)
        yield seed, count
        seed += 1
        total -= count


def _task_entry(config: CampaignConfig, seed: int, examples: int) -> CampaignReport:
    """Process-pool / Ray entry point (module level, so it pickles)."""
    return _run_task(config, seed, examples)


def run_campaign(
    config: CampaignConfig,
    *,
    strategies: StrategyFactory | None = None,
    progress: Callable[[int], None] | None = None,
) -> CampaignReport:
    """Run a whole campaign; ``progress(n)`` is told as scenarios complete.

    ``strategies`` (in-process only) overrides ``config.strategy`` with a factory of
    your own. On Ctrl-C the report so far is returned with ``interrupted`` set, and
    every counterexample found so far is kept on disk.
    """
    config.validate()
    if strategies is not None and (config.workers > 1 or config.ray):
        raise UsageError(
            "a strategies= factory runs in this process only; with workers or Ray name the "
            "strategy by import path (config.strategy='module:factory')"
        )
    if strategies is not None:
        check_strategies(strategies, getattr(strategies, "__qualname__", "strategies"))
    started = time.perf_counter()
    if config.ray:
        report = _run_on_ray(config, progress)
    elif config.workers > 1:
        report = _run_on_processes(config, progress)
    else:
        report = _run_task(
            config, config.seed, config.example_count(), factory=strategies, progress=progress
        )
    report.elapsed = time.perf_counter() - started
    return report


def _run_on_processes(
    config: CampaignConfig, progress: Callable[[int], None] | None
) -> CampaignReport:
    report = CampaignReport(workers=config.workers, tasks=0)
    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=config.workers, mp_context=context)
    try:
        futures = {
            pool.submit(_task_entry, config, seed, count): count for seed, count in _chunks(config)
        }
        for future in concurrent.futures.as_completed(futures):
            part = future.result()
            report.merge(part)
            if progress is not None:
                progress(part.examples)
    except KeyboardInterrupt:
        report.interrupted = True
        pool.shutdown(wait=False, cancel_futures=True)
        _collect_written(config, report)
        return report
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return report


def _collect_written(config: CampaignConfig, report: CampaignReport) -> None:
    """After an interrupt, list counterexample files workers wrote but could not report."""
    folder = Path(config.output)
    if folder.is_dir():
        known = set(report.counterexamples)
        report.counterexamples += sorted(
            str(p) for p in folder.glob("fuzz_*.yaml") if str(p) not in known
        )


def _run_on_ray(config: CampaignConfig, progress: Callable[[int], None] | None) -> CampaignReport:
    ray, started_here = connect_ray(str(config.ray), config.workers)
    report = CampaignReport(workers=config.workers, tasks=0)
    remote = ray.remote(_task_entry)
    pending = [remote.remote(config, seed, count) for seed, count in _chunks(config)]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                part = ray.get(ref)
                report.merge(part)
                if progress is not None:
                    progress(part.examples)
    except KeyboardInterrupt:
        report.interrupted = True
        for ref in pending:
            ray.cancel(ref)
        _collect_written(config, report)
    finally:
        if started_here:
            ray.shutdown()
    return report
