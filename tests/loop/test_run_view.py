"""The core's helpers read a narrow ``RunView``, not the ``LoopCore``: a plain object with
the run's attributes drives them."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.loop import (
    ContinueWhile,
    Event,
    LoopCore,
    LoopOptions,
    NudgeAfterResults,
    StrategyChain,
    ToolsetChange,
    ToolsInjected,
    ToolsRemoved,
    Usage,
)
from harness.loop._changes import apply_change
from harness.loop._run_view import RunView
from harness.loop._trace_builder import TraceBuilder
from harness.loop._turns import TurnControl
from harness.messages import AssistantMessage, Message, UserMessage
from harness.tools import Tool, Toolset

_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, f"tool {name}", _SCHEMA, lambda args: name)


@dataclasses.dataclass
class Run:
    """A run as its helpers see it, with no core, no phase and no protocol."""

    messages: list[Message] = dataclasses.field(default_factory=list)
    toolset: Toolset = dataclasses.field(default_factory=lambda: Toolset([_tool("a")]))
    state: dict[str, Any] = dataclasses.field(default_factory=dict)
    run_id: str = "run-1"
    iteration: int = 0
    called: dict[str, int] = dataclasses.field(default_factory=dict)
    injected: list[str] = dataclasses.field(default_factory=list)
    usage: Usage = dataclasses.field(default_factory=Usage)
    events: list[Event] = dataclasses.field(default_factory=list)

    def emit(self, event: Event) -> None:
        self.events.append(event)


def test_a_change_is_applied_to_any_run_view() -> None:
    run = Run()
    record = TraceBuilder(run.toolset.names, run.messages)
    record.open(1, run.toolset.names, 1, None)  # after the first request: an injection
    run.iteration = 1
    change = ToolsetChange(add=(_tool("b"),), remove=("a",), reason="why", strategy="s")
    apply_change(run, record, change)
    assert run.toolset.names == ("b",)
    assert run.injected == ["b"]
    assert [type(e) for e in run.events] == [ToolsRemoved, ToolsInjected]
    assert all(e.iteration == 1 for e in run.events)


def test_turns_read_the_run_view_for_the_continuation_and_the_next_turn() -> None:
    options = LoopOptions(
        continuation=ContinueWhile(lambda c: "go on" if c.iteration < 2 else False)
    )
    turns = TurnControl(options, StrategyChain(()))
    run = Run(iteration=1, called={"a": 2}, injected=["x"], usage=Usage(input_tokens=5))
    answer = AssistantMessage(content="thinking")
    assert turns.continuation(run, answer) == "go on"
    run.iteration = 2
    assert turns.continuation(run, answer) is None
    assert turns.continued == 1
    turns.next_turn(run)
    assert (turns.turn, turns.start, turns.injected_start) == (2, 2, 1)
    assert turns.called_before == {"a": 2} and turns.usage_start == run.usage
    nudging = TurnControl(
        LoopOptions(continuation=NudgeAfterResults("look again")), StrategyChain(())
    )
    nudging.after_results(run)
    assert run.messages == [UserMessage(content="look again")]


def test_the_core_is_a_run_view() -> None:
    core = LoopCore(
        messages=[UserMessage(content="hi")],
        toolset=Toolset([_tool("a")]),
        strategy=StrategyChain(()),
        options=LoopOptions(),
    )
    view: RunView = core  # checked by mypy: the core has every attribute the helpers read
    assert view.messages is core.messages and view.toolset is core.toolset
