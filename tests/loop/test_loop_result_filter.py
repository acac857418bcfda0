"""Result hooks with nothing to do are skipped: the loop builds no context for them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness import EntityDiscovery, llm_tool, tool_provider
from harness.loop import (
    DeclaredChanges,
    InjectionContext,
    InjectionStrategy,
    ToolsetChange,
    run,
)
from harness.loop._fast import result_filter
from harness.models import ScriptedModel, call, reply
from harness.tools import ToolResult


@tool_provider(prefix="account")
class Account:
    """An account whose tools appear once a tool returns it."""

    def __init__(self, name: str) -> None:
        self.id = name

    @llm_tool
    def balance(self) -> int:
        """The balance."""
        return 3


@llm_tool
def number() -> int:
    """A number."""
    return 7


@llm_tool
def account() -> Account:
    """An account."""
    return Account("main")


values = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
    st.just(Account("a")),
    st.lists(st.just(Account("b")), max_size=2),
)
results = st.builds(
    ToolResult,
    content=st.just("x"),
    value=values,
    is_error=st.booleans(),
    change=st.one_of(st.none(), st.just(ToolsetChange(reason="declared"))),
)


def _context(result: ToolResult) -> InjectionContext:
    return InjectionContext(history=(), offered=(), tools={}, iteration=1, state={}, result=result)


@given(result=results)
def test_a_filter_says_nothing_only_when_the_hook_returns_none(result: ToolResult) -> None:
    for strategy in (DeclaredChanges(), EntityDiscovery()):
        nothing_for = result_filter(strategy)
        assert nothing_for is not None
        if nothing_for(result):
            assert strategy.on_tool_result(_context(result)) is None


def test_the_filters_skip_errors_plain_values_and_results_without_a_change() -> None:
    discovery = result_filter(EntityDiscovery())
    declared = result_filter(DeclaredChanges())
    assert discovery is not None and declared is not None
    assert discovery(ToolResult(content="7", value=7))
    assert discovery(ToolResult.error("boom"))
    assert not discovery(ToolResult(content="[]", value=[Account("x")]))
    assert declared(ToolResult(content="7", value=7))
    assert not declared(ToolResult(content="7", change=ToolsetChange(reason="r")))


def test_a_subclass_overriding_the_hook_gets_no_filter_from_its_base() -> None:
    class Mine(EntityDiscovery):
        def on_tool_result(self, context: InjectionContext) -> None:
            return None

    class Same(EntityDiscovery):
        pass

    assert result_filter(Mine()) is None
    assert result_filter(Same()) is not None
    assert result_filter(InjectionStrategy()) is None


def _count_calls(monkeypatch: pytest.MonkeyPatch, cls: type[InjectionStrategy]) -> list[Any]:
    seen: list[Any] = []
    original = cls.on_tool_result

    def counting(self: Any, context: InjectionContext) -> Any:
        seen.append(context.result)
        return original(self, context)

    monkeypatch.setattr(cls, "on_tool_result", counting)
    return seen


def test_the_loop_skips_hooks_with_nothing_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    consulted = _count_calls(monkeypatch, EntityDiscovery)
    model = ScriptedModel([call("number"), call("number"), reply("done")])
    result = run(model, "go", tools=[number], strategies=[EntityDiscovery()])
    assert result.output == "done"
    assert consulted == []  # plain numbers: never asked, no context built


def test_hooks_with_something_to_do_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    consulted = _count_calls(monkeypatch, EntityDiscovery)
    model = ScriptedModel(
        [call("number"), call("account"), call("account_main_balance"), reply("ok")]
    )
    result = run(model, "go", tools=[number, account], strategies=[EntityDiscovery()])
    assert [r.value.id for r in consulted if isinstance(r.value, Account)] == ["main"]
    assert result.tools_injected == ["account_main_balance"]
    assert result.trace.calls[-1].value == 3


def test_a_strategy_without_a_filter_sees_every_result() -> None:
    seen: list[Any] = []

    class Watcher(InjectionStrategy):
        def on_tool_result(self, context: InjectionContext) -> None:
            assert context.result is not None
            seen.append(context.result.value)

    model = ScriptedModel([call("number"), call("number"), reply("done")])
    run(model, "go", tools=[number], strategies=[EntityDiscovery(), Watcher()])
    assert seen == [7, 7]
