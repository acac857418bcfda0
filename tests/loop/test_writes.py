"""What the loop writes into the history between requests (harness/loop/_writes.py): tools
a strategy delivers by addition, messages a strategy writes, and the tools a starting
history already adds."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from harness import StrategyError, UsageError, run
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.loop._writes import HistoryWrites
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.models import ScriptedModel, call, reply, with_capabilities
from harness.tools import Toolset, as_tool, llm_tool


@llm_tool
def lookup(order: str) -> str:
    """Look an order up."""
    return "paid"


@llm_tool
def refund(order: str) -> str:
    """Refund an order."""
    return "refunded"


@llm_tool
def note(text: str) -> str:
    """Keep a note."""
    return "kept"


class After(InjectionStrategy):
    """Returns ``changes`` after a call of ``tool`` (once)."""

    def __init__(self, tool: str, *changes: ToolsetChange) -> None:
        self.tool, self.changes = tool, changes

    def on_tool_result(self, context: InjectionContext) -> list[ToolsetChange]:
        state = context.state_for(self)
        if context.call is None or context.call.name != self.tool or state.get("done"):
            return []
        state["done"] = True
        return list(self.changes)


def _run(
    strategies: Sequence[InjectionStrategy], steps: list, tools: Sequence = (lookup,)
) -> tuple[ScriptedModel, object]:
    model = ScriptedModel(steps)
    played = with_capabilities(model, tool_additions=True)  # a provider with additions
    result = run(played, "Refund A.", tools=list(tools), strategies=list(strategies))
    return model, result


def _kinds(messages: Sequence[Message]) -> list[str]:
    return [type(m).__name__.removesuffix("Message") for m in messages]


def test_an_addition_is_one_system_message_after_the_results_and_tools_stay_declared() -> None:
    addition = ToolsetChange(add=(refund,), via="addition", reason="after lookup")
    model, result = _run(
        [After("lookup", addition)],
        [call("lookup", {"order": "A"}), call("refund", {"order": "A"}), reply("done")],
    )
    second = model.requests[1]
    assert [d.name for d in second.tools] == ["lookup"]  # declared: unchanged
    assert second.tool_names == ("lookup", "refund")  # offered: the addition too
    assert _kinds(second.messages) == ["User", "Assistant", "Tool", "System"]
    added = second.messages[-1]
    assert isinstance(added, SystemMessage) and added.content == ""
    assert [d.name for d in added.tools] == ["refund"]
    first = result.trace.iterations[0]  # type: ignore[attr-defined]
    assert [(c.added, c.via) for c in first.changes] == [(("refund",), "addition")]
    assert first.changes[0].to_dict()["via"] == "addition"
    states = result.trace.iterations[1].tools  # type: ignore[attr-defined]
    assert states is not None and states.added == ("refund",)
    assert states.to_data()["added"] == ["refund"]


def test_an_edit_keeps_the_trace_shape_and_no_system_message_is_written() -> None:
    model, result = _run(
        [After("lookup", ToolsetChange(add=(refund,)))],
        [call("lookup", {"order": "A"}), call("refund", {"order": "A"}), reply("done")],
    )
    assert [d.name for d in model.requests[1].tools] == ["lookup", "refund"]
    assert not any(isinstance(m, SystemMessage) for m in model.requests[1].messages)
    change = result.trace.iterations[0].changes[0]  # type: ignore[attr-defined]
    assert change.via == "edit" and "via" not in change.to_dict()
    assert result.trace.iterations[1].tools is None  # type: ignore[attr-defined]


def test_two_additions_before_one_request_are_one_message() -> None:
    model, _ = _run(
        [
            After("lookup", ToolsetChange(add=(refund,), via="addition")),
            After("lookup", ToolsetChange(add=(note,), via="addition")),
        ],
        [call("lookup", {"order": "A"}), reply("done")],
    )
    systems = [m for m in model.requests[1].messages if isinstance(m, SystemMessage)]
    assert [[d.name for d in m.tools] for m in systems] == [["refund", "note"]]


def test_an_addition_reveals_a_deferred_tool_which_stays_declared() -> None:
    deferred = as_tool(refund).deferred()
    model, result = _run(
        [After("lookup", ToolsetChange(reveal=("refund",), via="addition"))],
        [call("lookup", {"order": "A"}), call("refund", {"order": "A"}), reply("done")],
        tools=(lookup, deferred),
    )
    second = model.requests[1]
    assert [(d.name, d.defer_loading) for d in second.tools] == [
        ("lookup", False),
        ("refund", True),
    ]
    assert isinstance(second.messages[-1], SystemMessage)
    assert [d.name for d in second.messages[-1].tools] == ["refund"]
    assert result.trace.iterations[0].changes[0].added == ("refund",)  # type: ignore[attr-defined]
    assert result.trace.iterations[0].changes[0].via == "addition"  # type: ignore[attr-defined]
    assert [c.name for c in result.trace.calls] == ["lookup", "refund"]  # type: ignore[attr-defined]


def test_an_addition_before_the_first_request_declares_the_tools() -> None:
    class SetUp(InjectionStrategy):
        def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
            if context.iteration == 1:
                return ToolsetChange(add=(refund,), via="addition")
            return None

    model, result = _run([SetUp()], [call("refund", {"order": "A"}), reply("done")])
    assert [d.name for d in model.requests[0].tools] == ["lookup", "refund"]
    assert not any(isinstance(m, SystemMessage) for m in model.requests[0].messages)
    change = result.trace.iterations[0].changes[0]  # type: ignore[attr-defined]
    assert change.initial and change.via == "edit"


def test_a_starting_history_that_adds_a_tool_offers_it_undeclared() -> None:
    history: list[Message] = [
        UserMessage(content="Refund A."),
        SystemMessage(
            content="",
            tools=(as_tool(refund).definition(), as_tool(lookup).deferred().definition()),
        ),
    ]
    writes = HistoryWrites(history, Toolset([refund, as_tool(lookup).deferred()]))
    assert writes.undeclared == {"refund"}  # a deferred tool stays declared: it is revealed
    model = ScriptedModel([call("refund", {"order": "A"}), reply("done")])
    start = [history[0], SystemMessage(content="", tools=(as_tool(refund).definition(),))]
    result = run(model, start, tools=[refund, note])
    assert [d.name for d in model.requests[0].tools] == ["note"]
    assert model.requests[0].tool_names == ("refund", "note")
    assert [c.name for c in result.trace.calls] == ["refund"]
    assert result.trace.iterations[0].tools is not None
    assert result.trace.iterations[0].tools.added == ("refund",)


def test_declared_definitions_are_cached_while_nothing_changes() -> None:
    toolset = Toolset([lookup, refund])
    writes = HistoryWrites([], toolset)
    assert writes.declared(toolset) is toolset.definitions()
    writes.undeclared.add("refund")
    first = writes.declared(toolset)
    assert [d.name for d in first] == ["lookup"] and writes.declared(toolset) is first
    toolset.add(note)
    assert [d.name for d in writes.declared(toolset)] == ["lookup", "note"]


# -- messages a strategy writes ----------------------------------------------------------


def test_written_messages_come_after_the_results_before_the_next_request() -> None:
    written = (
        SystemMessage(content="You are the refunds agent."),
        AssistantMessage(content="Now give your final answer."),
    )
    model, _ = _run(
        [After("lookup", ToolsetChange(messages=written, remove=("lookup",)))],
        [call("lookup", {"order": "A"}), reply("done")],
    )
    second = model.requests[1]
    assert list(second.messages[-2:]) == list(written)
    assert second.tools == () and second.tool_names == ()


def test_a_written_search_and_its_result_reveal_a_deferred_tool() -> None:
    search = ToolCall(id="w1", name="search_tools", arguments='{"query": "refund"}')
    written = (
        AssistantMessage(tool_calls=(search,)),
        ToolMessage(tool_call_id="w1", content="", tools=(as_tool(refund).definition(),)),
    )
    model, result = _run(
        [After("lookup", ToolsetChange(messages=written))],
        [call("lookup", {"order": "A"}), call("refund", {"order": "A"}), reply("done")],
        tools=(lookup, as_tool(refund).deferred()),
    )
    assert "refund" in model.requests[1].tool_names
    assert [c.name for c in result.trace.calls] == ["lookup", "refund"]  # type: ignore[attr-defined]
    assert "refund" in result.trace.iterations[1].offered  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        (
            (AssistantMessage(tool_calls=(ToolCall(id="w1", name="x", arguments="{}"),)),),
            r"calls \['w1'\] are not answered",
        ),
        (("just text",), "write harness messages"),
    ],
)
def test_written_messages_that_would_break_the_history_are_refused(
    written: tuple[object, ...], problem: str
) -> None:
    change = ToolsetChange(messages=written, strategy="w")  # type: ignore[arg-type]
    with pytest.raises(StrategyError, match=problem) as info:
        _run([After("lookup", change)], [call("lookup", {"order": "A"}), reply("done")])
    assert [c.name for c in info.value.trace.calls] == ["lookup"]  # the trace survives


def test_an_addition_naming_a_tool_with_no_definition_is_refused() -> None:
    addition = ToolsetChange(reveal=("undefined_tool",), via="addition", strategy="adds")
    with pytest.raises(
        StrategyError, match=r"'adds' adds \['undefined_tool'\] by addition"
    ) as info:
        _run([After("lookup", addition)], [call("lookup", {"order": "A"}), reply("done")])
    assert "give the Tool in add=" in str(info.value)
    assert [c.name for c in info.value.trace.calls] == ["lookup"]


def test_recorded_additions_need_a_definition() -> None:
    from harness.cassettes import RecordedTools

    with pytest.raises(UsageError, match=r"no definition for offered or added tool\(s\) \['x'\]"):
        RecordedTools([["a"], ["a"]], [{"name": "a"}], added=[[], ["x"]])
