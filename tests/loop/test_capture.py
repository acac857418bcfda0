"""capture_run and override_model: seeing and steering runs made by code under test."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness import (
    MaxIterationsExceeded,
    ScriptedModel,
    UsageError,
    agent_tool,
    arun,
    call,
    capture_run,
    llm_tool,
    override_model,
    reply,
    run,
)
from harness.assertions import called
from harness.loop import Model
from harness.models import CallbackModel


@llm_tool
def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


class WeatherAgent:
    """Code under test: builds its own model and never returns the run's result."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def ask(self, question: str) -> str:
        return str(run(self.model, question, tools=[lookup]).output)

    async def aask(self, question: str) -> str:
        return str((await arun(self.model, question, tools=[lookup])).output)


def _production_model() -> Model:
    def refuse(_request: Any) -> Any:
        raise AssertionError("the production model must not be called inside override_model")

    return CallbackModel(refuse)


def test_override_model_swaps_the_model_of_code_under_test() -> None:
    agent = WeatherAgent(_production_model())
    scripted = ScriptedModel([call("lookup", city="Oslo"), reply("Sunny.")])
    with override_model(scripted), capture_run() as captured:
        answer = agent.ask("Weather in Oslo?")
    assert answer == "Sunny."
    assert captured.last.trace == called("lookup")
    assert captured.last.result is not None
    assert captured.last.messages[-1].content == "Sunny."


def test_override_model_ends_with_the_block() -> None:
    scripted = ScriptedModel([reply("inside")])
    with override_model(scripted):
        assert run(_production_model(), "hi").output == "inside"
    with pytest.raises(AssertionError, match="production model"):
        run(_production_model(), "hi")


def test_override_model_can_wrap_the_original() -> None:
    seen: list[Model] = []
    original = ScriptedModel([reply("from the original")])

    def wrap(model: Model) -> Model:
        seen.append(model)
        return model

    with override_model(wrap):
        assert run(original, "hi").output == "from the original"
    assert seen == [original]


def test_override_model_rejects_bad_input() -> None:
    with (
        pytest.raises(UsageError, match="takes a harness Model or a function"),
        override_model("gpt-4o"),  # type: ignore[arg-type]
    ):
        pass
    with (
        override_model(lambda _m: "not a model"),  # type: ignore[arg-type,return-value]
        pytest.raises(UsageError, match="returned 'not a model', not a harness Model"),
    ):
        run(ScriptedModel([reply("x")]), "hi")


def test_capture_run_sees_async_runs_and_nests() -> None:
    agent = WeatherAgent(ScriptedModel([reply("one")]))
    with capture_run() as outer:
        agent.ask("first")
        with capture_run() as inner:
            asyncio.run(WeatherAgent(ScriptedModel([reply("two")])).aask("second"))
    assert [r.result.output for r in outer.runs if r.result] == ["one", "two"]
    assert [r.result.output for r in inner.runs if r.result] == ["two"]
    assert len(outer) == 2 and len(outer.traces) == 2
    assert all(r.depth == 0 for r in outer)


def test_capture_run_keeps_failed_runs_with_their_history() -> None:
    looping = ScriptedModel([call("lookup", city="A"), call("lookup", city="B")])
    with capture_run() as captured, pytest.raises(MaxIterationsExceeded) as raised:
        run(looping, "loop", tools=[lookup], max_iterations=1)
    failed = captured.last
    assert failed.result is None
    assert failed.error is raised.value
    assert failed.trace is raised.value.trace
    assert [m.role for m in failed.messages] == ["user", "assistant", "tool"]


def test_nested_agent_runs_are_kept_apart_from_top_level_runs() -> None:
    helper = agent_tool(
        "research",
        "Research a topic with a helper agent.",
        model=ScriptedModel([reply("helper says hi")]),
    )
    parent = ScriptedModel([call("research", task="x"), reply("parent done")])
    with capture_run() as captured:
        run(parent, "go", tools=[helper])
    assert [r.depth for r in captured.all_runs] == [1, 0]  # the nested run ends first
    assert len(captured.runs) == 1
    assert captured.last.result is not None and captured.last.result.output == "parent done"


def test_capture_run_with_no_run_says_what_to_do() -> None:
    with capture_run() as captured:
        pass
    with pytest.raises(UsageError, match="no run was made inside capture_run"):
        _ = captured.last
    assert "0 run(s)" in repr(captured)


def test_a_captured_run_keeps_the_tools_and_strategies_it_started_with() -> None:
    scripted = ScriptedModel([call("lookup", city="Oslo"), reply("Sunny.")])
    with capture_run() as captured:
        run(scripted, "Weather in Oslo?", tools=[lookup])
    (only,) = captured.all_runs
    assert [tool.name for tool in only.tools] == ["lookup"]
    assert only.strategies  # the default chain's strategies (DeclaredChanges at least)
