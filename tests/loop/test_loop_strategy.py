"""The injection strategy interface: contexts, changes, chains, declared changes."""

from __future__ import annotations

from typing import Any

import pytest
from loop_helpers import Recorder, echo, extra

from harness.loop import (
    DeclaredChanges,
    HistoryView,
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    StrategyWarning,
    ToolsetChange,
    ToolsInjected,
    default_strategy,
    run,
)
from harness.messages import UserMessage
from harness.models import ScriptedModel, call, reply
from harness.tools import Tool, ToolResult, as_tool, llm_tool


class Counter(InjectionStrategy):
    """Counts its consultations in per-run state and in shared state."""

    def on_tool_result(self, context: InjectionContext) -> None:
        mine = context.state_for(self)
        mine["calls"] = mine.get("calls", 0) + 1
        context.state["seen"] = context.state.get("seen", 0) + 1


def test_state_for_is_private_per_run_and_per_strategy() -> None:
    counter, other = Counter(), Counter()
    captured: list[dict[int, dict[str, Any]]] = []

    class Peek(InjectionStrategy):
        def on_tool_result(self, context: InjectionContext) -> None:
            captured.append(context.strategy_state)

    for _ in range(2):
        model = ScriptedModel([call("echo", text="a"), call("echo", text="b"), reply("x")])
        result = run(model, "go", tools=[echo], strategies=[counter, other, Peek()])
        assert result.state["seen"] == 4
    assert captured[0][id(counter)] == {"calls": 2} and captured[0][id(other)] == {"calls": 2}
    assert captured[2][id(counter)] == {"calls": 2}  # the second run started fresh
    assert captured[0] is not captured[2]


def test_chain_runs_strategies_in_order_and_labels_changes() -> None:
    class Adds(InjectionStrategy):
        def __init__(self, tool: Tool, label: str = "") -> None:
            self.tool = tool
            self.label = label

        @property
        def name(self) -> str:
            return self.label or super().name

        def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
            if self.tool.name in context.tools:
                return []
            return [ToolsetChange(add=(self.tool,), reason=f"add {self.tool.name}")]

    second = as_tool(extra).with_name("extra2")
    chain = StrategyChain([Adds(as_tool(extra), "first"), Adds(second)])
    model = ScriptedModel([call("echo", text="a"), reply("x")])
    result = run(model, "go", tools=[echo], strategies=[chain])
    changes = result.trace.changes
    assert [(c.strategy, c.added) for c in changes] == [
        ("first", ("extra",)),
        ("Adds", ("extra2",)),  # a strategy of yours without a name: its class name
    ]


def test_default_strategy_puts_declared_changes_first_once() -> None:
    mine = Counter()
    chain = default_strategy([DeclaredChanges(), mine])
    assert isinstance(chain, StrategyChain)
    assert [type(s) for s in chain.strategies] == [DeclaredChanges, Counter]
    assert [type(s) for s in default_strategy(None).strategies] == [DeclaredChanges]  # type: ignore[attr-defined]
    assert [type(s) for s in default_strategy([]).strategies] == [DeclaredChanges]  # type: ignore[attr-defined]


def test_an_empty_strategy_list_still_applies_declared_changes() -> None:
    """The documented decision: ``strategies=[]`` means no strategy of yours; changes a
    tool declares in its own result (a facade unfolding) still apply."""
    change = ToolsetChange(add=(as_tool(extra),), reason="declared")
    model = ScriptedModel([call("unfold"), reply("ok")])
    result = run(model, "go", tools=[_declaring(change)], strategies=[])
    assert result.tools_injected == ["extra"]


def _declaring(change: Any, *, error: bool = False) -> Tool:
    def handler(args: dict[str, Any]) -> ToolResult:
        return ToolResult(
            content="unfolded", change=change, is_error=error, error_kind="x" if error else None
        )

    return Tool.from_schema("unfold", "Unfold more tools.", {"type": "object"}, handler)


def test_a_tool_can_declare_its_own_change() -> None:
    change = ToolsetChange(add=(as_tool(extra),), remove=("unfold",), reason="unfolded")
    model = ScriptedModel([call("unfold"), call("extra"), reply("x")])
    result = run(model, "go", tools=[_declaring(change)])
    assert model.requests[1].tool_names == ("extra",)
    record = result.trace.changes[0]
    assert (record.strategy, record.added, record.removed) == (
        "declared",
        ("extra",),
        ("unfold",),
    )


def test_a_declared_change_on_an_error_result_is_ignored() -> None:
    change = ToolsetChange(add=(as_tool(extra),))
    model = ScriptedModel([call("unfold"), reply("x")])
    result = run(model, "go", tools=[_declaring(change, error=True)])
    assert result.trace.changes == [] and model.requests[-1].tool_names == ("unfold",)


def test_replace_remove_notes_events_and_section_keys() -> None:
    @llm_tool(name="echo")
    def loud_echo(text: str) -> str:
        """Echo, loudly."""
        return text.upper()

    class Everything(InjectionStrategy):
        def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
            if context.iteration != 1:
                return []
            warn = StrategyWarning(iteration=context.iteration, strategy="me", message="careful")
            return [
                ToolsetChange(replace=(as_tool(loud_echo),), reason="louder"),
                ToolsetChange(remove=("not_offered",), events=(warn,)),
                ToolsetChange(
                    add=(as_tool(extra),), result_note="[extra is ready]", section_key="s1"
                ),
                ToolsetChange(result_note="[second note]"),
            ]

    rec = Recorder()
    model = ScriptedModel([call("echo", text="a"), call("echo", text="b"), reply("x")])
    result = run(model, "go", tools=[echo], strategies=[Everything()], observers=[rec])
    first, second = result.trace.calls
    assert first.content == "a\n\n[extra is ready]\n\n[second note]"
    assert result.messages[2].content == first.content  # type: ignore[union-attr]
    assert second.content == "B"  # the replacement handles the next call
    changes = result.trace.iterations[0].changes
    assert [(c.replaced, c.removed, c.added) for c in changes] == [
        (("echo",), (), ()),
        ((), (), ("extra",)),
    ]
    assert "StrategyWarning" in rec.kinds and "ToolsRemoved" not in rec.kinds
    injected = [e for e in rec.events if isinstance(e, ToolsInjected)]
    assert injected[0].section_key == "s1"


def test_toolset_change_is_empty() -> None:
    assert ToolsetChange().is_empty
    assert not ToolsetChange(result_note="x").is_empty
    assert not ToolsetChange(remove=("a",)).is_empty


def test_history_view_is_a_fixed_length_window() -> None:
    items: list[Any] = [UserMessage(content=str(i)) for i in range(3)]
    view = HistoryView(items)
    items.append(UserMessage(content="later"))
    assert len(view) == 3 and list(view) == items[:3]
    assert view[-1] == items[2] and view[0] == items[0]
    assert list(view[1:]) == items[1:3]
    with pytest.raises(IndexError):
        view[3]
    with pytest.raises(IndexError):
        view[-4]
    assert repr(view) == "HistoryView(3 messages)"
    assert len(HistoryView(items, 1)) == 1


def test_a_declared_change_may_be_computed_from_the_context() -> None:
    seen: list[tuple[str, ...]] = []

    def later(context: InjectionContext) -> ToolsetChange | None:
        seen.append(context.offered)
        if "extra" in context.offered:
            return None
        return ToolsetChange(add=(as_tool(extra),), reason="deferred")

    model = ScriptedModel([call("unfold"), call("unfold"), reply("x")])
    result = run(model, "go", tools=[_declaring(later)])
    assert seen == [("unfold",), ("unfold", "extra")]
    assert [c.added for c in result.trace.changes] == [("extra",)]


def test_base_strategy_hooks_change_nothing() -> None:
    class OnlyBeforeTurn(InjectionStrategy):
        def before_turn(self, context: InjectionContext) -> None:
            return None

    model = ScriptedModel([call("echo", text="a"), reply("x")])
    result = run(model, "go", tools=[echo], strategies=[OnlyBeforeTurn(), InjectionStrategy()])
    assert result.trace.changes == []
    assert InjectionStrategy().name == "InjectionStrategy"


def test_hooks_are_found_in_nested_chains_subclasses_and_instance_attributes() -> None:
    class TurnTwo(InjectionStrategy):
        def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
            if context.iteration == 2 and "extra" not in context.tools:
                return ToolsetChange(add=(as_tool(extra),))
            return None

    patched = InjectionStrategy()
    seen: list[str] = []
    patched.on_tool_result = lambda context: seen.append(context.call.name)  # type: ignore[method-assign, assignment, union-attr, func-returns-value]
    nested = StrategyChain([StrategyChain([]), StrategyChain([TurnTwo()])])
    model = ScriptedModel([call("echo", text="a"), reply("x")])
    run(model, "go", tools=[echo], strategies=[nested, patched])
    assert model.requests[1].tool_names == ("echo", "extra")
    assert seen == ["echo"]
