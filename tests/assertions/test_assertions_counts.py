"""Counts: iterations, restarts, injected tools, events of a type; subjects."""

from __future__ import annotations

import pytest

from harness import RunResult, ScenarioError, Usage, UsageError
from harness.assertions import (
    as_trace,
    has_events,
    has_injections,
    has_iterations,
    has_restarts,
)
from harness.loop import ToolsInjected, ToolsRemoved, Trace


def test_counts(shop_trace: Trace) -> None:
    assert shop_trace == has_iterations(4)
    assert shop_trace == has_iterations(at_least=2, at_most=4)
    assert shop_trace == has_restarts(1)
    assert shop_trace == has_injections(2)
    assert shop_trace != has_injections(at_most=1)
    verdict = has_iterations(at_least=5).check(shop_trace)
    assert verdict.problem == "expected at least 5 iterations, got 4"
    assert has_restarts(at_least=1, at_most=2).description == "at least 1 and at most 2 restarts"


def test_events_by_type_name_and_fields(shop_trace: Trace) -> None:
    assert shop_trace == has_events(ToolsInjected)
    assert shop_trace == has_events("ToolsRemoved", 1)
    assert shop_trace == has_events(ToolsInjected, strategy="Shop", after_call="search")
    assert shop_trace == has_events(ToolsInjected, tool_names=lambda names: "cart_add" in names)
    assert shop_trace != has_events(ToolsInjected, strategy="Other")
    assert shop_trace != has_events(ToolsRemoved, tool_names=lambda names: False)
    assert shop_trace == has_events(ToolsRemoved, at_most=1)
    assert shop_trace != has_events("RunFinished")
    verdict = has_events(ToolsInjected, 3).check(shop_trace)
    assert verdict.problem == "expected 3 ToolsInjected events, got 1"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: has_iterations(), "give a count for iterations"),
        (lambda: has_iterations(2, at_least=1), "not both"),
        (lambda: has_restarts(-1), "count >= 0"),
        (lambda: has_injections(at_most=True), "count >= 0"),
        (lambda: has_events(int), "an Event class or its name"),  # type: ignore[arg-type]
    ],
)
def test_bad_counts(build: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build()  # type: ignore[operator]


def test_subjects_run_results_and_errors(shop_trace: Trace) -> None:
    result = RunResult(
        output="x", messages=[], iterations=4, tools_injected=[], trace=shop_trace, usage=Usage()
    )
    assert as_trace(result) is shop_trace
    assert result == has_iterations(4)
    error = ScenarioError("boom")
    error.attach_run(shop_trace, [])
    assert as_trace(error) is shop_trace
    with pytest.raises(UsageError, match="expected a harness Trace"):
        as_trace("not a trace")
    assert (has_iterations(4) == "not a trace") is False
    assert has_iterations(4) != "not a trace"


def test_expectations_are_unhashable(shop_trace: Trace) -> None:
    with pytest.raises(TypeError):
        hash(has_iterations(1))
