"""What the fuzzer plays the model against: an agent on the harness's loop, or any
framework's agent on the wire.

A ``Target`` builds a fresh agent per example and runs it with a given model (the
fuzzer's player, or a scripted replay): ``LoopTarget`` through ``harness.run``,
``WireTarget`` by serving the model on a loopback endpoint in one wire format
(``harness.scenarios._wire_agent``) while the factory's ``run`` talks to it. Both give
the run as properties see it (an ``AgentRun``; a ``WireRun`` on the wire), so the
search, the judge, the shrinker and the counterexample do not ask which it was.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import weakref
from collections.abc import Mapping
from typing import Any

from hypothesis.errors import HypothesisException

from harness._errors import ScriptError, UsageError
from harness.fuzz._watchdog import watchdog as guard
from harness.loop import Model
from harness.scenarios._agent import Agent, AgentFactory, build_agent, run_agent
from harness.scenarios._coverage import InjectionCoverage
from harness.scenarios._properties import AgentRun
from harness.scenarios._wire_agent import (
    WireAgent,
    WireEndpoint,
    WireFactory,
    check_wire_factory,
)

__all__ = ["FuzzAgent", "LoopTarget", "Target", "WireTarget"]

FuzzAgent = Agent | WireAgent
"""One fresh agent of either kind."""

_RETRY_AFTER = 0.001
"""Seconds a provider error played on the wire asks the SDK to wait before its retry
(``retry-after``): an SDK's own backoff would sleep half a second per error."""


class Target(abc.ABC):
    """Builds fresh agents and runs them with a model (see the module docstring)."""

    name: str
    """The factory (``module:qualname``)."""
    wire: str | None = None
    """The wire format, or ``None`` for an agent on the harness's loop."""
    defaults: Mapping[str, Any] = {}
    """Loop options set for fuzzing (written into counterexamples)."""
    retry_after: float | None = None
    """The ``retry_after`` of the provider errors the fuzzer plays."""

    @abc.abstractmethod
    def build(self) -> FuzzAgent:
        """A fresh agent (``UsageError`` when the factory is broken)."""

    @abc.abstractmethod
    def play(self, agent: FuzzAgent, model: Model, *, watchdog: float | None) -> AgentRun:
        """Run ``agent`` against ``model``; the run's ending is its ``error`` (hypothesis's
        own exceptions pass through; ``UsageError`` when the run says nothing about the
        agent). ``watchdog`` arms the signal watchdog (``None``: not)."""

    def limit(self, agent: FuzzAgent) -> int | None:
        """Model turns the player may take before it answers (``None``: the agent's own
        limits, unknown to the fuzzer, end the run)."""
        return None

    def max_iterations(self, agent: FuzzAgent) -> int | None:
        """The agent's request limit, for the invariants (``None``: unknown)."""
        return None

    def declare(self, coverage: InjectionCoverage) -> None:
        """Record the tools and strategy states the agent declares (an agent on the wire
        declares nothing the fuzzer can read: its calls still count)."""
        return None

    def close(self) -> None:
        """Release what the target holds (a listening endpoint)."""
        return None


@dataclasses.dataclass(eq=False)
class LoopTarget(Target):
    """An agent factory of ``harness.run`` keyword arguments, run on the harness loop."""

    factory: AgentFactory
    name: str
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def build(self) -> Agent:
        return build_agent(self.factory, name=self.name).with_defaults(**self.defaults)

    def play(self, agent: FuzzAgent, model: Model, *, watchdog: float | None) -> AgentRun:
        assert isinstance(agent, Agent)
        try:
            with guard(watchdog) if watchdog is not None else contextlib.nullcontext():
                result = run_agent(model, agent)
            return AgentRun.from_result(result)
        except HypothesisException:
            raise
        except Exception as exc:  # the run's ending is judged like any other
            return AgentRun.from_error(exc)

    def limit(self, agent: FuzzAgent) -> int | None:
        assert isinstance(agent, Agent)
        return agent.options.max_iterations - 1  # answer before the limit, as a model would

    def max_iterations(self, agent: FuzzAgent) -> int | None:
        assert isinstance(agent, Agent)
        return agent.options.max_iterations

    def declare(self, coverage: InjectionCoverage) -> None:
        probe = build_agent(self.factory, name=self.name)
        coverage.declare(probe.tools, probe.strategies)


class WireTarget(Target):
    """A wire factory ``(base_url, api_key) -> {run, prompt, state}``: its agent runs on
    any framework, against the model served on a loopback endpoint in ``wire``."""

    retry_after = _RETRY_AFTER

    def __init__(
        self, factory: WireFactory, name: str, wire: str, *, hang_seconds: float | None = None
    ) -> None:
        check_wire_factory(factory, name)
        self.factory = factory
        self.name = name
        self.hang_seconds = hang_seconds
        """A run that neither calls the endpoint nor returns for this long has hung."""
        self.endpoint = WireEndpoint(wire)
        self.wire = self.endpoint.wire
        # a strategy handed to a user's @given test has no end to close it at: the
        # endpoint stops when the target is collected, or at exit
        self._closer = weakref.finalize(self, _stop, self.endpoint)

    def build(self) -> WireAgent:
        return self.endpoint.build(self.factory, name=self.name)

    def play(self, agent: FuzzAgent, model: Model, *, watchdog: float | None) -> AgentRun:
        """(The run is on a thread of its own, bounded by ``hang_seconds``: ``watchdog``
        is not used.)"""
        assert isinstance(agent, WireAgent)
        outcome = self.endpoint.run(agent, model, timeout=self.hang_seconds)
        failure = outcome.failure
        if failure is not None and not isinstance(failure, ScriptError):
            raise failure  # hypothesis stopping the example, or a fault of the player's
        problem = outcome.problem(self.endpoint.wire)
        if problem is not None:
            raise UsageError(problem)
        if failure is not None:  # the script no longer fits: the run says so, as on the loop
            return dataclasses.replace(outcome.run, error=failure)
        return outcome.run

    def close(self) -> None:
        self._closer()


def _stop(endpoint: WireEndpoint) -> None:
    endpoint.close()
