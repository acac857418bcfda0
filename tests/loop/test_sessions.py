"""``Session``: several user turns over one history, toolset, strategy state and blackboard."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fixtures.customers import search_customer
from harness import (
    InjectionContext,
    InjectionStrategy,
    ProviderError,
    ScriptError,
    Session,
    ToolsetChange,
    UsageError,
)
from harness.injection import EntityDiscovery
from harness.loop import LoopPhase, Usage
from harness.messages import AssistantMessage, SystemMessage, UserMessage
from harness.models import ScriptedModel, call, expect_offered, raise_error, reply
from harness.tools import Tool


def _tool(name: str) -> Tool:
    return Tool.from_schema(
        name, f"tool {name}", {"type": "object", "properties": {}}, lambda a: name
    )


def test_tools_injected_in_turn_one_are_offered_in_turn_two() -> None:
    model = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            reply("Found John Smith."),
            expect_offered(includes=["customer_*_get_average_spend"]),
            call("customer_*_get_average_spend"),
            reply("He spends 42 on average."),
        ]
    )
    with Session(model, tools=[search_customer], strategies=[EntityDiscovery()]) as chat:
        first = chat.send("Find John Smith.")
        second = chat.send("What's his average spend?")
    assert first.output == "Found John Smith." and second.output == "He spends 42 on average."
    assert (first.turn, first.iterations, second.turn, second.iterations) == (1, 2, 2, 2)
    assert first.tools_injected and second.tools_injected == []
    assert [it.turn for it in chat.trace] == [1, 1, 2, 2]
    assert [it.index for it in chat.trace] == [1, 2, 3, 4]  # the session's requests
    assert [t.index for t in chat.trace.turns] == [1, 2]
    assert chat.trace.turns[1].answer == "He spends 42 on average."
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "assistant"] * 2
    assert second.messages is chat.messages and second.trace is chat.trace


def test_the_blackboard_strategy_state_and_usage_carry_over() -> None:
    class Counting(InjectionStrategy):
        def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
            state = context.state_for(self)
            state["requests"] = state.get("requests", 0) + 1
            context.state["seen"] = state["requests"]
            return None

    class PerTurn(Counting):
        resets_per_turn = True

    kept, reset = Counting(), PerTurn()
    usage = {"input_tokens": 10, "output_tokens": 2}
    model = ScriptedModel([reply("a", usage=usage), reply("b", usage=usage)])
    with Session(model, strategies=[kept, reset], state={"mine": 1}) as chat:
        first = chat.send("one")
        second = chat.send("two")
    assert chat.state["mine"] == 1 and chat.state["seen"] == 1  # PerTurn ran last, reset
    assert chat.core._strategy_state[id(kept)] == {"requests": 2}
    assert chat.core._strategy_state[id(reset)] == {"requests": 1}
    assert first.usage == second.usage == Usage(input_tokens=10, output_tokens=2, total_tokens=12)
    assert chat.usage.input_tokens == 20


def test_max_iterations_counts_each_turn() -> None:
    model = ScriptedModel([call("t"), reply("one"), call("t"), reply("two")])
    with Session(model, tools=[_tool("t")], max_iterations=2) as chat:
        chat.send("a")
        assert chat.send("b").output == "two"  # 4 requests in all, 2 per turn


def test_asend_runs_the_same_turns() -> None:
    async def chat() -> list[Any]:
        model = ScriptedModel([call("t"), reply("one"), reply("two")])
        with Session(model, tools=[_tool("t")]) as session:
            return [(await session.asend(text)).output for text in ("a", "b")]

    assert asyncio.run(chat()) == ["one", "two"]


def test_system_and_a_starting_history() -> None:
    model = ScriptedModel([reply("again")])
    earlier = [UserMessage(content="hi"), AssistantMessage(content="hello")]
    with Session(model, system="Be brief.", messages=earlier) as chat:
        chat.send("and now?")
    assert isinstance(chat.messages[0], SystemMessage)
    assert [m.role for m in chat.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert model.requests[0].messages[-1] == UserMessage(content="and now?")


def test_send_on_a_failed_session_is_a_clear_error_and_keeps_the_history() -> None:
    model = ScriptedModel([reply("fine"), raise_error("server_error")])
    chat = Session(model)
    chat.send("one")
    with pytest.raises(ProviderError) as failure:
        chat.send("two")
    kept = list(chat.messages)
    assert chat.failed and chat.core.phase is LoopPhase.FAILED and chat.error is failure.value
    assert [m.role for m in kept] == ["user", "assistant", "user"]
    with pytest.raises(
        UsageError, match="send\\(\\) on a failed session: turn 2 ended with"
    ) as info:
        chat.send("three")
    assert "session.messages" in str(info.value) and "start a new Session" in str(info.value)
    assert info.value.messages == kept and info.value.trace is chat.trace
    assert chat.messages == kept  # nothing was added by the refused send
    chat.close()  # the failed turn already told the model


def test_close_tells_the_model_once_and_a_short_script_fails_there() -> None:
    model = ScriptedModel([reply("one"), reply("never asked")])
    chat = Session(model)
    chat.send("a")
    with pytest.raises(ScriptError, match="the run ended after 1 of 2 steps") as info:
        chat.close()
    assert info.value.trace is chat.trace
    chat.close()  # once
    with pytest.raises(UsageError, match="send\\(\\) after close\\(\\)"):
        chat.send("b")


def test_end_run_is_not_called_between_turns() -> None:
    ended: list[bool] = []

    class Model(ScriptedModel):
        def end_run(self, *, completed: bool) -> None:
            ended.append(completed)

    with Session(Model([reply("a"), reply("b")])) as chat:
        chat.send("1")
        chat.send("2")
        assert ended == []
    assert ended == [True]


@pytest.mark.parametrize("bad", ["", [], [1], None])
def test_a_turn_needs_a_user_message(bad: Any) -> None:
    chat = Session(ScriptedModel([reply("x")]))
    with pytest.raises(UsageError, match="turn 1"):
        chat.send(bad)
    assert chat.messages == [] and not chat.failed


def test_trace_turn_reads_one_turn_and_names_the_turns_it_has() -> None:
    model = ScriptedModel([call("t"), reply("one"), reply("two")])
    with Session(model, tools=[_tool("t")]) as chat:
        chat.send("a")
        chat.send("b")
    second = chat.trace.turn(2)
    assert [it.index for it in second] == [3]
    assert all(e.iteration == 3 for e in second.events)
    assert [c.name for c in chat.trace.turn(1).calls] == ["t"]
    with pytest.raises(UsageError, match="no user turn 3; its turns: \\[1, 2\\]"):
        chat.trace.turn(3)
    data = chat.trace.to_dict()["iterations"]
    assert "turn" not in data[0] and data[2]["turn"] == 2


def test_a_plain_run_keeps_its_trace_shape() -> None:
    from harness import run

    result = run(ScriptedModel([reply("x")]), "q")
    assert result.turn == 1 and set(result.trace.to_dict()["iterations"][0]) == {
        "index",
        "offered",
        "calls",
        "changes",
        "answer",
        "finish_reason",
    }


def test_the_core_refuses_begin_turn_before_the_turn_finished() -> None:
    chat = Session(ScriptedModel([reply("x")]))
    with pytest.raises(UsageError, match="can't begin_turn\\(\\) while the run is ready"):
        chat.core.begin_turn([UserMessage(content="early")])
    chat.send("now")  # the core moved to finished: begin_turn is allowed there
    chat.core.begin_turn([UserMessage(content="next")])
    assert chat.core.phase is LoopPhase.READY
