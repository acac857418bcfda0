"""``loop_core_machine``: each call makes a machine class with its own strategies, tools, limit."""

from __future__ import annotations

import pytest
from hypothesis.stateful import RuleBasedStateMachine
from planted import Sound

from harness import HarnessError, UsageError
from harness.fuzz import loop_core_machine
from harness.loop import LoopCore, StrategyChain
from harness.tools import Tool

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def tools() -> list[Tool]:
    return [Tool.from_schema(n, "t", SCHEMA, lambda a: 1) for n in ("a", "b")]


def core_of(machine: RuleBasedStateMachine) -> LoopCore:
    """The core the machine drives now."""
    core = vars(machine)["core"]
    assert isinstance(core, LoopCore)
    return core


def test_each_run_gets_fresh_strategies_and_tools_and_the_limit_asked_for() -> None:
    made: list[Sound] = []

    def strategies() -> list[Sound]:
        made.append(Sound())
        return made[-1:]

    machine = loop_core_machine(strategies, tools=tools, max_iterations=2)()
    first = core_of(machine)
    assert first.options.max_iterations == 2
    assert first.toolset.names == ("a", "b")
    machine.start_over()  # type: ignore[attr-defined]
    assert len(made) == 2 and made[0] is not made[1]
    chain = core_of(machine).strategy
    assert isinstance(chain, StrategyChain) and chain.strategies == (made[1],)
    assert core_of(machine).toolset is not first.toolset


def test_two_machines_keep_their_own_settings() -> None:
    short = loop_core_machine(lambda: [Sound()], tools=tools, max_iterations=2)
    long = loop_core_machine(lambda: [], max_iterations=7)
    assert short is not long
    assert core_of(short()).options.max_iterations == 2
    assert core_of(long()).options.max_iterations == 7
    assert core_of(long()).toolset.names == ()


def test_bad_arguments_are_refused_when_the_class_is_made() -> None:
    with pytest.raises(HarnessError, match="strategies must be a factory"):
        loop_core_machine([Sound()])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="max_iterations"):
        loop_core_machine(lambda: [], max_iterations=0)
