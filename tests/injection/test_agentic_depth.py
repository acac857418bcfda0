"""Agentic recursion: depth cannot be forged below zero and max_depth stops cleanly."""

from __future__ import annotations

from typing import Any

import pytest

from harness import UsageError
from harness.injection import agent_tool
from harness.injection._agentic import DEPTH_KEY, MAX_AGENT_DEPTH
from harness.loop import LoopOptions, Trace, run
from harness.models import ScriptedModel, call, reply
from harness.tools import Tool


def _chain(levels: int, max_depth: int, context: dict[str, Any] | None = None) -> Tool:
    """Agents a0 -> a1 -> ... each delegating to the next; the nested runs carry ``context``."""
    tools: dict[int, Tool] = {}
    options = LoopOptions(context=context or {})
    for i in reversed(range(levels)):
        inner = tools.get(i + 1)
        steps = [call(f"a{i + 1}", {"task": "go"})] if inner else []
        tools[i] = agent_tool(
            f"a{i}",
            "Delegate.",
            model=lambda steps=steps, i=i: ScriptedModel([*steps, reply(f"a{i} done")]),
            tools=[inner] if inner else [],
            max_depth=max_depth,
            options=options,
        )
    return tools[0]


def _deepest(trace: Trace) -> tuple[int, Trace]:
    depth = 0
    while trace.children:
        trace, depth = trace.children[0], depth + 1
    return depth, trace


def test_max_depth_stops_the_recursion_with_an_error_result() -> None:
    top = _chain(MAX_AGENT_DEPTH + 5, MAX_AGENT_DEPTH)
    result = run(ScriptedModel([call("a0", {"task": "go"}), reply("x")]), "go", tools=[top])
    depth, innermost = _deepest(result.trace)
    assert depth == MAX_AGENT_DEPTH
    (stopped,) = innermost.calls
    assert stopped.error_kind == "max_depth"
    assert f"nesting depth {MAX_AGENT_DEPTH} reached max_depth={MAX_AGENT_DEPTH}" in (
        stopped.content
    )
    assert result.output == "x"


@pytest.mark.parametrize("bad", [0, -1, MAX_AGENT_DEPTH + 1, 10_000, True, 2.0])
def test_max_depth_is_bounded_at_construction(bad: Any) -> None:
    with pytest.raises(UsageError, match=f"max_depth must be an int from 1 to {MAX_AGENT_DEPTH}"):
        agent_tool("a", "A.", model=ScriptedModel([reply("x")]), max_depth=bad)


def test_a_negative_depth_in_the_context_counts_as_zero() -> None:
    top = _chain(10, 2)
    result = run(
        ScriptedModel([call("a0", {"task": "go"}), reply("x")]),
        "go",
        tools=[top],
        context={DEPTH_KEY: -100},  # used to allow 102 levels
    )
    depth, innermost = _deepest(result.trace)
    assert depth == 2
    assert innermost.calls[0].error_kind == "max_depth"


@pytest.mark.parametrize("forged", ["0", 1.5, None, True])
def test_a_non_int_depth_in_the_context_is_an_error_result(forged: Any) -> None:
    top = _chain(3, 2)
    result = run(
        ScriptedModel([call("a0", {"task": "go"}), reply("x")]),
        "go",
        tools=[top],
        context={DEPTH_KEY: forged},
    )
    record = result.trace.calls[0]
    assert record.is_error
    assert f"call context {DEPTH_KEY!r}={forged!r} must be a non-negative int" in record.content
