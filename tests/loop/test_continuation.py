"""Turns that do not end the loop: continuation policies and user nudges."""

from __future__ import annotations

from typing import Any

import pytest

from harness import (
    ContinueUntilTool,
    ContinueWhile,
    MaxIterationsExceeded,
    NudgeAfterResults,
    ReAct,
    ScriptError,
    Session,
    StrategyError,
    ToolChoiceSchedule,
    UsageError,
    return_direct,
    run,
)
from harness.loop import ContinuationContext, LoopOptions
from harness.messages import UserMessage
from harness.models import ScriptedModel, call, expect_message, expect_tool_choice, reply
from harness.tools import Tool


def _tool(name: str) -> Tool:
    return Tool.from_schema(
        name, f"tool {name}", {"type": "object", "properties": {}}, lambda a: name
    )


def test_react_a_thought_under_none_then_the_action_under_required() -> None:
    model = ScriptedModel(
        [
            expect_tool_choice("none"),
            reply("Thought: I should search."),
            expect_message("Now act.", role="user"),
            expect_tool_choice("required"),
            call("search"),
            expect_tool_choice("none"),
            reply("Thought: I know the answer."),
            expect_tool_choice("required"),
            call("final_answer"),
        ]
    )
    result = run(
        model,
        "Capital of France?",
        tools=[_tool("search"), return_direct(_tool("final_answer"))],
        strategies=[ToolChoiceSchedule(["none", "required"], then="repeat")],
        continuation=ReAct(nudge="Now act."),
    )
    assert result.output == "final_answer" and result.iterations == 4
    assert [it.continued for it in result.trace] == [True, False, True, False]
    assert [it.answer for it in result.trace if it.continued] == [
        "Thought: I should search.",
        "Thought: I know the answer.",
    ]
    assert result.trace.to_dict()["iterations"][0]["continued"] is True


def test_without_a_policy_the_first_text_ends_the_run() -> None:
    model = ScriptedModel([reply("Thought: hmm"), call("search"), reply("x")])
    with pytest.raises(ScriptError, match="the run ended after 1 of 3 steps"):
        run(model, "q", tools=[_tool("search")], tool_choice="none")


def test_continue_until_tool_nudges_until_the_tool_is_called() -> None:
    model = ScriptedModel(
        [
            reply("I think it's Paris."),
            expect_message("Use final_answer.", role="user"),
            call("final_answer"),
            reply("done"),
        ]
    )
    result = run(
        model,
        "q",
        tools=[_tool("final_answer")],
        continuation=ContinueUntilTool("final_answer", nudge="Use final_answer."),
    )
    assert result.output == "done"
    assert [m.content for m in result.messages if isinstance(m, UserMessage)] == [
        "q",
        "Use final_answer.",
    ]


def test_max_iterations_still_bounds_a_turn_that_never_ends() -> None:
    model = ScriptedModel([reply("no")] * 3)
    with pytest.raises(MaxIterationsExceeded):
        run(model, "q", continuation=ContinueWhile(lambda c: True), max_iterations=3)


def test_continue_while_reads_the_context_and_may_nudge() -> None:
    seen: list[ContinuationContext] = []

    def until_done(context: ContinuationContext) -> bool | str:
        seen.append(context)
        return "Go on." if "done" not in (context.answer.content or "") else False  # type: ignore[union-attr]

    model = ScriptedModel([reply("working"), reply("done")])
    result = run(model, "q", continuation=ContinueWhile(until_done))
    assert result.output == "done"
    assert [(c.turn, c.turn_iteration, c.continued) for c in seen] == [(1, 1, 0), (1, 2, 1)]
    assert result.messages[-2] == UserMessage(content="Go on.")


def test_nudge_after_results_is_crewais_user_message_after_each_tool_result() -> None:
    nudge = "Analyze the tool result. If requirements are met, provide the Final Answer."
    model = ScriptedModel(
        [call("count"), expect_message(nudge, role="user"), call("count"), reply("2")]
    )
    result = run(
        model, "count twice", tools=[_tool("count")], continuation=NudgeAfterResults(nudge)
    )
    assert [m.role for m in result.messages] == [
        "user", "assistant", "tool", "user", "assistant", "tool", "user", "assistant",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "bad",
    [lambda c: 3, lambda c: "   ", lambda c: 1 / 0],
)
def test_a_policy_that_misbehaves_is_a_strategy_error(bad: Any) -> None:
    with pytest.raises(StrategyError, match="continuation 'ContinueWhile' in after_answer"):
        run(ScriptedModel([reply("x")]), "q", continuation=ContinueWhile(bad))


@pytest.mark.parametrize("bad", [object(), [ReAct(), 3], "react"])
def test_a_bad_continuation_option_is_refused_up_front(bad: Any) -> None:
    with pytest.raises(UsageError, match=r"continuation must be a harness\.Continuation"):
        LoopOptions(continuation=bad)


def test_bad_policy_arguments() -> None:
    with pytest.raises(UsageError, match="ContinueUntilTool needs a tool name"):
        ContinueUntilTool("")
    with pytest.raises(UsageError, match=r"ReAct\(nudge=\.\.\.\): a nudge must be a non-empty"):
        ReAct(nudge=" ")
    with pytest.raises(UsageError, match="ContinueWhile takes a function"):
        ContinueWhile("yes")  # type: ignore[arg-type]


def test_continue_until_tool_counts_the_calls_of_the_current_turn_only() -> None:
    model = ScriptedModel(
        [
            call("save"),
            reply("Saved."),  # turn 1 ends: save was called in it
            reply("Let me think."),  # turn 2: save not called in this turn yet
            expect_message("Call save.", role="user"),
            call("save"),
            reply("Saved again."),
        ]
    )
    with Session(
        model, tools=[_tool("save")], continuation=ContinueUntilTool("save", nudge="Call save.")
    ) as chat:
        assert chat.send("Save it.").output == "Saved."
        second = chat.send("Save it again.")
    assert second.output == "Saved again." and second.iterations == 3
    assert [it.continued for it in chat.trace.turn(2)] == [True, False, False]
