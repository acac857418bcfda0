"""Per-request ``tool_choice`` decided by strategies: one hook, chained, checked, recorded."""

from __future__ import annotations

from typing import Any

import pytest

from harness import (
    InjectionContext,
    InjectionStrategy,
    StrategyError,
    ToolChoice,
    ToolChoiceSchedule,
    UsageError,
    run,
)
from harness.loop import choice_violation
from harness.messages import AssistantMessage, ToolCall
from harness.models import ScriptedModel, call, expect_tool_choice, reply
from harness.tools import Tool


def _tool(name: str) -> Tool:
    return Tool.from_schema(
        name, f"tool {name}", {"type": "object", "properties": {}}, lambda a: name
    )


TOOLS = [_tool("get_weather"), _tool("get_forecast")]


def test_a_schedule_forces_tools_then_lets_the_model_answer() -> None:
    """The shape of pydantic-ai's recorded forced/forced/auto schedule."""
    model = ScriptedModel(
        [
            expect_tool_choice("get_weather"),
            call("get_weather"),
            expect_tool_choice("get_forecast"),
            call("get_forecast"),
            expect_tool_choice("auto"),
            reply("sunny"),
        ]
    )
    schedule = ToolChoiceSchedule(["get_weather", "get_forecast", "auto"])
    result = run(model, "weather?", tools=TOOLS, strategies=[schedule])
    assert [it.tool_choice for it in result.trace] == [
        ToolChoice.tool("get_weather"),
        ToolChoice.tool("get_forecast"),
        ToolChoice.auto(),
    ]
    assert [r.settings.tool_choice for r in model.requests] == [
        it.tool_choice for it in result.trace
    ]
    assert result.trace.to_dict()["iterations"][0]["tool_choice"] == {
        "mode": "tool",
        "allowed": None,
        "name": "get_weather",
    }


@pytest.mark.parametrize(
    ("then", "expected"),
    [
        ("last", ["none", "required", "required", "required"]),
        ("repeat", ["none", "required", "none", "required"]),
        ("default", ["none", "required", "auto", "auto"]),
    ],
)
def test_what_follows_the_schedule(then: Any, expected: list[str]) -> None:
    schedule = ToolChoiceSchedule(["none", "required"], then=then)
    steps = [reply("x") if e == "none" else call("get_weather") for e in expected]
    model = ScriptedModel([*steps[:3], reply("done")], lenient=True)
    result = run(
        model,
        "q",
        tools=TOOLS,
        strategies=[schedule],
        tool_choice="auto",
        continuation=_continue_thoughts(),
    )
    assert [it.tool_choice.mode for it in result.trace] == expected  # type: ignore[union-attr]


def _continue_thoughts() -> Any:
    from harness import ReAct

    return ReAct()


def test_a_function_decides_from_the_context_and_the_first_strategy_that_decides_wins() -> None:
    seen: list[tuple[int, int]] = []

    def forecast_after_weather(context: InjectionContext) -> str | None:
        seen.append((context.turn, context.turn_iteration))
        if context.called.get("get_forecast"):
            return "auto"
        return "get_forecast" if context.called.get("get_weather") else None

    class Never(InjectionStrategy):
        def tool_choice(self, context: InjectionContext) -> Any:
            return None

    model = ScriptedModel([call("get_weather"), call("get_forecast"), reply("ok")])
    result = run(
        model,
        "q",
        tools=TOOLS,
        strategies=[
            Never(),
            ToolChoiceSchedule(forecast_after_weather),
            ToolChoiceSchedule(["required"]),
        ],
    )
    # the function decides nothing on request 1: the next strategy's "required" applies
    assert [it.tool_choice for it in result.trace] == [
        ToolChoice.required(),
        ToolChoice.tool("get_forecast"),
        ToolChoice.auto(),
    ]
    assert seen == [(1, 1), (1, 2), (1, 3)]


def test_options_tool_choice_is_the_default_when_no_strategy_decides() -> None:
    model = ScriptedModel([call("get_weather"), reply("ok")])
    result = run(
        model,
        "q",
        tools=TOOLS,
        tool_choice="required",
        strategies=[ToolChoiceSchedule(["required", "auto"])],
    )
    assert [it.tool_choice for it in result.trace] == [ToolChoice.required(), ToolChoice.auto()]


def test_a_schedule_naming_an_unoffered_tool_fails_the_run_naming_the_tool() -> None:
    model = ScriptedModel([reply("never")])
    with pytest.raises(StrategyError) as info:
        run(model, "q", tools=TOOLS, strategies=[ToolChoiceSchedule(["get_time"])])
    message = str(info.value)
    assert "strategy 'tool_choice_schedule' chose tool_choice tool 'get_time'" in message
    assert "not offered (offered: 'get_weather', 'get_forecast')" in message
    assert info.value.trace is not None and model.requests == []  # nothing was sent


def test_an_allowed_subset_must_be_offered_too() -> None:
    choice = ToolChoice.allowed_tools(["get_weather", "ghost"], mode="required")
    with pytest.raises(StrategyError, match="naming 'ghost', which is not offered"):
        run(
            ScriptedModel([reply("x")]), "q", tools=TOOLS, strategies=[ToolChoiceSchedule([choice])]
        )


def test_a_glob_resolves_against_the_offered_tools() -> None:
    model = ScriptedModel([call("get_forecast"), reply("ok")])
    result = run(model, "q", tools=TOOLS, strategies=[ToolChoiceSchedule(["*forecast", "auto"])])
    assert result.trace.iterations[0].tool_choice == ToolChoice.tool("get_forecast")
    with pytest.raises(StrategyError, match="matches 'get_weather', 'get_forecast'"):
        run(
            ScriptedModel([reply("x")]),
            "q",
            tools=TOOLS,
            strategies=[ToolChoiceSchedule(["get_*"])],
        )


@pytest.mark.parametrize("bad", [[], "none", {"type": "x"}, [""], [{"type": "bogus"}], 3])
def test_bad_schedules_are_refused_at_construction(bad: Any) -> None:
    with pytest.raises(UsageError, match="ToolChoiceSchedule"):
        ToolChoiceSchedule(bad)


def test_a_hook_that_raises_or_returns_junk_is_a_strategy_error() -> None:
    class Broken(InjectionStrategy):
        def tool_choice(self, context: InjectionContext) -> Any:
            return 42

    with pytest.raises(
        StrategyError, match="'Broken' in tool_choice at iteration 1 returned an invalid"
    ):
        run(ScriptedModel([reply("x")]), "q", strategies=[Broken()])


@pytest.mark.parametrize(
    ("choice", "calls", "problem"),
    [
        (ToolChoice.none(), ["a"], "tool_choice 'none' forbids tool calls, got a call of 'a'"),
        (ToolChoice.required(), [], "'required' forbids a plain text answer"),
        (ToolChoice.tool("a"), [], "forces 'a': the model must call it"),
        (ToolChoice.tool("a"), ["a", "b"], "forces 'a', got a call of 'b'"),
        (ToolChoice.allowed_tools(["a"]), ["b"], "allows only 'a', got a call of 'b'"),
        (ToolChoice.none(), [], None),
        (ToolChoice.required(), ["b"], None),
        (ToolChoice.allowed_tools(["a"], mode="required"), ["a"], None),
        (None, ["a"], None),
    ],
)
def test_choice_violation(choice: ToolChoice | None, calls: list[str], problem: str | None) -> None:
    message = AssistantMessage(
        content=None if calls else "text",
        tool_calls=tuple(ToolCall(id=f"c{i}", name=n, arguments="{}") for i, n in enumerate(calls)),
    )
    found = choice_violation(choice, message)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_allowed_tools_and_a_schedule_share_the_one_per_request_hook() -> None:
    """AllowedTools decides its subset in ``tool_choice(context)``, like a schedule: the
    first strategy with a choice wins per request, and the next one decides the rest."""
    from harness.injection import AllowedTools

    model = ScriptedModel([call("get_weather"), call("get_forecast"), reply("done")])
    allowed = AllowedTools(turns=[["get_weather"]], mode="required")
    schedule = ToolChoiceSchedule(["none", "required", "auto"])
    result = run(model, "weather?", tools=TOOLS, strategies=[allowed, schedule])
    assert [it.tool_choice for it in result.trace] == [
        ToolChoice.allowed_tools(["get_weather"], mode="required"),
        ToolChoice.required(),
        ToolChoice.auto(),
    ]
    assert [r.settings.tool_choice for r in model.requests] == [
        it.tool_choice for it in result.trace
    ]
    assert [r.tool_names for r in model.requests] == [("get_weather", "get_forecast")] * 3


def test_an_allowed_subset_naming_a_tool_not_offered_is_a_strategy_error() -> None:
    from harness.injection import AllowedTools

    model = ScriptedModel([reply("done")])
    with pytest.raises(StrategyError, match=r"'allowed_tools'.*'send_mail'.*not offered") as err:
        run(model, "hi", tools=TOOLS, strategies=[AllowedTools(turns=[["send_mail"]])])
    assert err.value.messages[0].content == "hi"
