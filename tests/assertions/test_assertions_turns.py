"""``turn=`` judges one user turn of a session's trace; ``tool_choices`` the choice of each
request. Over a real two-turn session: the seed flow, John Smith found in turn 1 (his
methods injected), his average spend asked in turn 2."""

from __future__ import annotations

import pytest

from fixtures.customers import search_customer
from harness import (
    ReAct,
    Session,
    ToolChoice,
    ToolChoiceSchedule,
    UsageError,
    return_direct,
    run,
)
from harness.assertions import (
    called,
    called_exactly,
    called_in_order,
    called_unordered,
    expect,
    has_injections,
    has_iterations,
    injected,
    never_called,
    never_offered,
    offered,
    removed,
    tool_choices,
)
from harness.injection import EntityDiscovery
from harness.loop import Trace
from harness.models import ScriptedModel, call, reply
from harness.tools import Tool

SPEND = "customer_*_get_average_spend"


@pytest.fixture(scope="module")
def session_trace() -> Trace:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            reply("Found John Smith."),
            call(SPEND),
            reply("He spends 42 on average."),
        ]
    )
    with Session(model, tools=[search_customer], strategies=[EntityDiscovery()]) as chat:
        chat.send("Find John Smith.")
        chat.send("What's his average spend?")
    return chat.trace


def test_turn_scopes_call_assertions(session_trace: Trace) -> None:
    assert session_trace == called(SPEND, turn=2)
    assert session_trace != called(SPEND, turn=1)
    assert session_trace == called_exactly("search_customer", turn=1)
    assert session_trace == called_in_order(SPEND, turn=2)
    assert session_trace == called_unordered(SPEND, only=True, turn=2)
    assert session_trace == never_called("search_customer", turn=2)
    assert session_trace != never_called("search_customer", turn=1)
    assert session_trace == called(SPEND)  # without turn=: the whole session


def test_turn_scopes_toolset_assertions_and_at_counts_the_turns_requests(
    session_trace: Trace,
) -> None:
    assert session_trace == injected("customer_*", after_call="search_customer", turn=1)
    assert session_trace != injected(turn=2)  # nothing new in turn 2
    assert session_trace == has_injections(0, turn=2)
    assert session_trace == offered(at=1, turn=2, includes=SPEND)  # the session's request 3
    assert session_trace != offered(at=1, turn=1, includes=SPEND)
    assert session_trace != never_offered(SPEND, turn=1)  # offered from its request 2 on
    assert session_trace == has_iterations(2, turn=1) and session_trace == has_iterations(4)
    assert session_trace != removed(turn=1)  # discovery only adds


def test_injected_at_counts_within_the_turn() -> None:
    model = ScriptedModel(
        [reply("Hello."), call("search_customer", name="John Smith"), reply("Found him.")]
    )
    with Session(model, tools=[search_customer], strategies=[EntityDiscovery()]) as chat:
        chat.send("Hi.")
        chat.send("Find John Smith.")
    assert [it.index for it in chat.trace if it.injected] == [2]  # the session's request 2
    assert chat.trace == injected("customer_*", at=1, turn=2)  # the turn's first request
    assert chat.trace != injected("customer_*", at=2, turn=2)
    assert chat.trace == injected("customer_*", at=2)  # the whole session's count
    assert chat.trace == offered(at=-1, turn=2, includes=SPEND)


def test_a_failure_in_a_turn_says_the_turn_and_marks_the_sessions_row(
    session_trace: Trace,
) -> None:
    verdict = expect(session_trace, offered(at=-1, turn=1, excludes=SPEND))
    assert not verdict.passed and verdict.failure is not None
    assert verdict.description == f"offered at iteration -1 excludes ['{SPEND}'] in turn 1"
    assert verdict.failure.iteration == 2  # the row in the session's table
    missing = expect(session_trace, called(SPEND, turn=3))
    assert missing.problem == "the trace has no user turn 3; its turns: [1, 2]"


@pytest.mark.parametrize("bad", [0, -1, "2", 1.5, True])
def test_turn_takes_a_turn_number(bad: object) -> None:
    with pytest.raises(UsageError, match="turn= takes a 1-based user turn number"):
        called("x", turn=bad)  # type: ignore[arg-type]


def _tool(name: str) -> Tool:
    return Tool.from_schema(
        name, f"tool {name}", {"type": "object", "properties": {}}, lambda a: name
    )


def test_tool_choices_reads_each_requests_choice() -> None:
    model = ScriptedModel(
        [reply("Thought: search."), call("search"), reply("Thought: done."), call("answer")]
    )
    answer = return_direct(_tool("answer"))
    result = run(
        model,
        "Capital of France?",
        tools=[_tool("search"), answer],
        strategies=[ToolChoiceSchedule(["none", "required"], then="repeat")],
        continuation=ReAct(),
    )
    assert result == tool_choices("none", "required", "none", "required")
    assert result == tool_choices(ToolChoice.none(), ToolChoice.required(), "none", "required")
    wrong = expect(result, tool_choices("none", "required", "required", "required"))
    assert wrong.problem == ("request 3 (iteration 3) was made with 'none', expected 'required'")
    assert wrong.failure is not None and wrong.failure.iteration == 3
    short = expect(result, tool_choices("none", "required"))
    assert short.problem == "4 requests were made, 2 tool choices expected"


def test_tool_choices_without_a_choice_is_none_and_a_tool_name_forces_it() -> None:
    result = run(
        ScriptedModel([call("search"), reply("ok")]),
        "go",
        tools=[_tool("search")],
        strategies=[ToolChoiceSchedule(["search"], then="default")],
    )
    assert result == tool_choices("search", None)
    assert result != tool_choices("required", None)


def test_tool_choices_in_one_turn() -> None:
    model = ScriptedModel([reply("one"), call("search"), reply("two")])
    schedule = ToolChoiceSchedule(["auto"], then="default")  # restarts every user turn
    with Session(model, tools=[_tool("search")], strategies=[schedule]) as chat:
        chat.send("a")
        chat.send("b")
    assert chat.trace == tool_choices("auto", turn=1)
    assert chat.trace == tool_choices("auto", None, turn=2)
    assert chat.trace != tool_choices("auto", turn=2)


def test_tool_choices_refuses_bad_choices() -> None:
    with pytest.raises(UsageError, match="each request"):
        tool_choices()
    with pytest.raises(UsageError, match="tool_choices\\(\\) choice 2"):
        tool_choices("none", 3)  # type: ignore[arg-type]
