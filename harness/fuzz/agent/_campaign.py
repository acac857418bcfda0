"""``fuzz_agent``: fuzz the user's own agent within a time and example budget.

The entry point: it checks every argument (and the factory: it must build, and two of
its agents must not share strategies or state) before anything runs, picks the
profile's budget and seed, then runs the search (``_search``) in this process
or on workers and Ray (``_parallel``).
"""

from __future__ import annotations

import dataclasses
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._validation import check_choice, check_output, is_int, is_number
from harness.fuzz._profiles import choose_profile
from harness.fuzz._watchdog import WATCHDOG_SECONDS, watched
from harness.fuzz.agent._player import ANSWER
from harness.fuzz.agent._report import AgentFuzzReport
from harness.fuzz.agent._search import (
    Guidance,
    SearchConfig,
    load_agent_factory,
    load_property,
    make_target,
    search,
)
from harness.fuzz.agent._target import Target, WireTarget
from harness.models import ScriptedModel, reply
from harness.scenarios._agent import AgentFactory, build_agent, describe_factory
from harness.scenarios._properties import Property
from harness.scenarios._wire_agent import WIRES, WireFactory, check_wire_factory

__all__ = ["AGENT_PROFILES", "AgentBudget", "Guidance", "fuzz_agent"]


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


def _check_budget(max_examples: Any, max_seconds: Any) -> None:
    if max_examples is not None and not (is_int(max_examples) and max_examples >= 1):
        raise UsageError(f"max_examples must be an int >= 1, got {max_examples!r}")
    if max_seconds is not None and not (
        is_number(max_seconds) and max_seconds > 0 and math.isfinite(max_seconds)
    ):
        raise UsageError(f"max_seconds must be a number of seconds > 0, got {max_seconds!r}")


def _profile_budget(profile: str | None) -> tuple[str, AgentBudget]:
    chosen = choose_profile(profile, AGENT_PROFILES)
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


def _check_wire_agent(target: WireTarget) -> None:
    """Two agents must not share their state; one run answered at once must call the
    endpoint, in the wire format named (a ``UsageError`` saying what it did instead)."""
    first, second = target.build(), target.build()
    if first.state is not None and first.state is second.state:
        raise UsageError(
            f"the wire agent factory {target.name} returns the same 'state' object on every "
            "call: make a new one inside the factory (examples would share it)"
        )
    target.play(first, ScriptedModel([reply(ANSWER)], require_exhausted=False), watchdog=None)


def _check_options(
    *,
    output: str | Path | None,
    hang_seconds: object,
    max_turns: object,
    workers: object,
    seed: object,
    guidance: str,
    wire: str | None,
    properties: object,
    database: object,
) -> str | None:
    """``UsageError`` for a bad option of ``fuzz_agent`` (before anything runs); the
    output folder, checked."""
    if not (is_number(hang_seconds) and 0 < hang_seconds < math.inf):  # type: ignore[operator]
        raise UsageError(f"hang_seconds must be a number of seconds > 0, got {hang_seconds!r}")
    if not (is_int(max_turns) and max_turns >= 1):
        raise UsageError(f"max_turns must be an int >= 1, got {max_turns!r}")
    if not (is_int(workers) and workers >= 1):
        raise UsageError(f"workers must be an int >= 1, got {workers!r}")
    if seed is not None and not (is_int(seed) and seed >= 0):
        raise UsageError(f"seed must be an int >= 0, got {seed!r}")
    check_choice(guidance, Guidance, name="guidance")
    if wire is not None:
        check_choice(wire, WIRES, name="wire")
    if isinstance(properties, (str, bytes)) or callable(properties):
        raise UsageError(
            f"properties must be a list of functions (or 'module:function' texts), "
            f"got {properties!r}"
        )
    if database is not None and not isinstance(database, (str, Path)):
        raise UsageError(f"database must be a folder path, got {database!r}")
    if database is not None and Path(database).exists() and not Path(database).is_dir():
        raise UsageError(f"database {str(database)!r} is a file: give a folder")
    return check_output(output)


def _chosen_seed(seed: int | None, profile_seed: int | None) -> int:
    """The seed given, else the profile's, else a random one (printed in the report)."""
    if seed is not None:
        return seed
    return profile_seed if profile_seed is not None else random.randrange(1_000_000)


def fuzz_agent(
    factory: str | AgentFactory | WireFactory,
    properties: Sequence[str | Property] = (),
    *,
    wire: str | None = None,
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
    database: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> AgentFuzzReport:
    """Fuzz the agent ``factory`` makes, with the fuzzer playing the model.

    ``factory`` is a function with no arguments (or ``"module:function"``) returning
    the keyword arguments of ``harness.run`` without the model; it is called once per
    example. With ``wire`` (``openai-chat``, ``openai-responses``, ``anthropic``) the
    agent is built on any framework: ``factory(base_url, api_key)`` returns
    ``{"run": ..., "prompt": ..., "state": ...}``, ``run(prompt)`` runs the agent
    against ``base_url`` (sync or async), and the fuzzer answers there in that wire
    format; properties get a ``WireRun`` (the wire trace, ``output``, ``state``,
    ``error``). ``properties`` are functions ``(run) -> None`` raising ``AssertionError``
    (or ``"module:function"``); the built-in invariants run as well, and a strategy
    crash or a call that never returns is a finding by itself. The search ends at the
    first failure (shrunk, and written to ``output`` as a scenario file when given),
    after ``max_examples`` examples or ``max_seconds`` seconds (defaults: the
    profile's, see ``AGENT_PROFILES``). ``workers`` processes (or Ray: ``"local"`` or
    an address) search with distinct seeds; the first failure wins. A call still
    running after ``hang_seconds`` is a hang (when the agent sets no ``tool_timeout``);
    a factory or property call running that long is a ``UsageError`` naming it.
    ``hang_seconds`` is never more than ``max_seconds``.
    ``guidance`` picks the search (see ``Guidance``); ``replay_check`` replays an
    example now and then on a fresh agent to detect state shared between examples.
    ``database`` is a folder (a hypothesis example database) keeping the failing script
    of each agent: the next campaign replays it first, on a fresh agent.
    Bad input raises ``UsageError`` before the search starts.
    """
    from harness.fuzz.agent._parallel import run_parallel

    _check_budget(max_examples, max_seconds)
    folder = _check_options(
        output=output,
        hang_seconds=hang_seconds,
        max_turns=max_turns,
        workers=workers,
        seed=seed,
        guidance=guidance,
        wire=wire,
        properties=properties,
        database=database,
    )
    built, name = load_agent_factory(factory)
    if wire is not None:
        check_wire_factory(built, name)
    props = [load_property(p) for p in properties]
    names = [p if isinstance(p, str) else describe_factory(p) for p in properties]
    _profile, budget = _profile_budget(profile)
    seconds = float(max_seconds) if max_seconds is not None else budget.seconds
    # the agent's own code (tools, strategies, the factory, properties) never runs longer
    # than the whole search may
    hang_seconds = min(float(hang_seconds), seconds)
    if wire is None:
        _check_shared_instances(watched(built, hang_seconds), name)
    chosen_seed = _chosen_seed(seed, budget.seed)
    config = SearchConfig(
        factory_spec=factory if isinstance(factory, str) else None,
        properties_spec=tuple(p for p in properties if isinstance(p, str))
        if all(isinstance(p, str) for p in properties)
        else None,
        seed=chosen_seed,
        max_examples=max_examples if max_examples is not None else budget.examples,
        max_seconds=seconds,
        max_turns=max_turns,
        guidance=guidance,
        swarm=swarm,
        output=folder,
        replay_check=replay_check,
        hang_seconds=hang_seconds,
        import_paths=tuple(p for p in sys.path if p),
        wire=wire,
        database=str(database) if database is not None else None,
    )
    target: Target = make_target(built, name, wire, hang_seconds)
    try:
        if isinstance(target, WireTarget):
            _check_wire_agent(target)
        if workers > 1 or ray:
            return run_parallel(config, workers=workers, ray=ray, progress=progress)
        return search(config, target, props, property_names=names, progress=progress)
    finally:
        target.close()
