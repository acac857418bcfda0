"""Tools, definitions and toolsets are built once and reused while nothing changes."""

from __future__ import annotations

import gc
import weakref

import pytest
from hypothesis import given, strategies as st

from harness import DuplicateToolName, Tool, Toolset, as_tool, llm_tool, run
from harness.models import ScriptedModel, call, reply


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@llm_tool
def sub(a: int, b: int) -> int:
    """Subtract two integers."""
    return a - b


def _fillers(count: int) -> list[object]:
    def make(i: int) -> object:
        def filler(x: int) -> int:
            """A filler."""
            return x

        return llm_tool(name=f"filler_{i}")(filler)

    return [make(i) for i in range(count)]


def test_a_decorated_function_becomes_one_tool() -> None:
    assert as_tool(add) is as_tool(add)
    assert as_tool(add).offered_definition is as_tool(add).offered_definition
    assert as_tool(add).offered_definition == as_tool(add).definition()


def test_overrides_build_new_tools() -> None:
    assert as_tool(add, name="plus") is not as_tool(add, name="plus")
    assert as_tool(add, name="plus").name == "plus"
    assert as_tool(add, description="d").description == "d"
    assert as_tool(add).name == "add"  # the remembered tool is untouched


def test_redecorating_a_function_rebuilds_its_tool() -> None:
    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    first = as_tool(llm_tool(mul))
    assert as_tool(mul) is first
    llm_tool(name="times")(mul)
    assert as_tool(mul).name == "times"


def test_plain_functions_and_bound_methods_are_not_remembered_on_the_object() -> None:
    def plain(a: int) -> int:
        """Plain."""
        return a

    class Calc:
        @llm_tool
        def double(self, a: int) -> int:
            """Double."""
            return 2 * a

    assert as_tool(plain) is not as_tool(plain)
    calc = Calc()
    assert as_tool(calc.double) is not as_tool(calc.double)
    assert as_tool(calc.double).handler(2) == 4


def test_toolset_of_the_same_tools_shares_what_it_built() -> None:
    tools = [add, sub, *_fillers(50)]
    first, second = Toolset.of(tools), Toolset.of(list(tools))
    assert first is not second
    assert first.definitions() is second.definitions()
    assert first["add"] is second["add"] is as_tool(add)
    assert first.names == second.names == ("add", "sub", *(f"filler_{i}" for i in range(50)))


def test_copies_do_not_see_each_others_changes() -> None:
    tools = [add, sub]
    first, second = Toolset.of(tools), Toolset.of(tools)
    view = first.view()
    first.remove("add")
    assert "add" not in view  # the view is live
    second.add(as_tool(add, name="plus"))
    second.replace(as_tool(sub, description="minus"))
    third = Toolset.of(tools)
    assert first.names == ("sub",)
    assert second.names == ("add", "sub", "plus")
    assert second["sub"].description == "minus"
    assert third.names == ("add", "sub")
    assert third["sub"].description == "Subtract two integers."


def test_toolset_of_still_reports_problems() -> None:
    for _ in range(2):  # also when the list was seen before
        with pytest.raises(DuplicateToolName):
            Toolset.of([add, as_tool(add, name="add")])


def test_bound_methods_are_not_kept_alive_by_the_toolset_cache() -> None:
    class Calc:
        @llm_tool
        def double(self, a: int) -> int:
            """Double."""
            return 2 * a

    calc = Calc()
    gone = weakref.ref(calc)
    Toolset.of([calc.double])
    del calc
    gc.collect()
    assert gone() is None


def test_only_a_few_tool_lists_are_remembered() -> None:
    for i in range(3 * Toolset._MAX_TEMPLATES):
        Toolset.of(_fillers(1 + i % 3))
    assert len(Toolset._TEMPLATES) == Toolset._MAX_TEMPLATES


_OPS = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "replace"]), st.integers(0, 5)), max_size=12
)


@given(ops=_OPS)
def test_changes_to_a_copy_never_reach_the_original(ops: list[tuple[str, int]]) -> None:
    base = [as_tool(add, name=f"t{i}") for i in range(3)]
    original = Toolset(base)
    names_before, definitions_before = original.names, original.definitions()
    copy = original.copy()
    for op, i in ops:
        name = f"t{i}"
        if op == "add" and name not in copy:
            copy.add(as_tool(add, name=name))
        elif op == "remove" and name in copy:
            copy.remove(name)
        elif op == "replace":
            copy.replace(as_tool(sub, name=name))
    assert original.names == names_before
    assert original.definitions() == definitions_before
    assert [t.handler for t in original] == [add] * 3


def test_runs_reuse_the_tools_of_a_decorated_toolset() -> None:
    tools = [add, *_fillers(20)]
    for _ in range(2):
        result = run(
            ScriptedModel([call("add", {"a": 1, "b": 2}), reply("done")]), "go", tools=tools
        )
        assert result.trace.calls[0].value == 3
    assert Toolset.of(tools)["add"] is as_tool(add)
    assert isinstance(Toolset.of(tools)["filler_3"], Tool)
