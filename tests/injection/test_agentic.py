"""Agentic tools: nested runs with their own model, tools and strategies; nested traces."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import (
    CallContext,
    LoopOptions,
    ScriptedModel,
    UsageError,
    arun,
    call,
    llm_tool,
    reply,
    run,
)
from harness.injection import AgentOutcome, EntityDiscovery, agent_tool
from harness.injection._agentic import DEPTH_KEY
from harness.models import Step

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.agents import RESEARCH_SYSTEM, broken_agent, crm_agent, research_agent  # noqa: E402


def test_the_nested_run_has_its_own_model_system_and_tools_and_its_trace_is_a_child() -> None:
    parent = ScriptedModel([call("research_agent", {"task": "explain"}), reply("done")])
    result = run(parent, "go", tools=[research_agent()])
    record = result.trace.calls[0]
    assert record.content == "Tool loops let a model call tools until it can answer."
    assert isinstance(record.value, AgentOutcome)
    assert record.value.iterations == 3 and record.value.artifacts == ()
    (child,) = result.trace.children
    assert [it.offered for it in child] == [("search_web", "fetch_page")] * 3
    assert [c.name for c in child.calls] == ["search_web", "fetch_page"]
    assert result.trace.to_dict()["children"][0]["iterations"][0]["offered"] == [
        "search_web",
        "fetch_page",
    ]
    assert [it.offered for it in result.trace] == [("research_agent",)] * 2


def test_the_nested_run_gets_the_agent_system_prompt_and_the_formatted_task() -> None:
    models: list[ScriptedModel] = []

    def make() -> ScriptedModel:
        models.append(ScriptedModel([reply("ok")]))
        return models[-1]

    tool = agent_tool("helper", "Help.", model=make, system="Be brief.", prompt="Do: {task}")
    run(
        ScriptedModel([call("helper", {"task": "x"}), call("helper", {"task": "y"}), reply("z")]),
        "go",
        tools=[tool],
    )
    assert len(models) == 2  # a fresh model per call
    first = models[0].requests[0].messages
    assert first[0].content == "Be brief." and first[1].content == "Do: x"


def test_artifacts_reach_the_parent_only_when_asked() -> None:
    script: list[Step] = [call("crm_agent", {"name": "John Smith"}), reply("x")]
    without = run(ScriptedModel(script), "go", tools=[crm_agent()], strategies=[EntityDiscovery()])
    assert without.trace.injected == []
    assert without.trace.calls[0].value.artifacts == ()
    with_capture = run(
        ScriptedModel(script),
        "go",
        tools=[crm_agent(capture_artifacts=True)],
        strategies=[EntityDiscovery()],
    )
    assert with_capture.trace.injected == [
        "customer_c123_get_average_spend",
        "customer_c123_list_orders",
        "customer_c123_get_contact",
    ]
    artifacts = with_capture.trace.calls[0].value.artifacts
    assert [type(c).__name__ for c in artifacts[0]] == ["Customer"]
    # the nested run used its own strategy: discovery happened inside it too
    assert with_capture.trace.children[0].injected[0] == "customer_c123_get_average_spend"


def test_a_failing_nested_run_is_an_error_result_with_its_trace_kept() -> None:
    result = run(
        ScriptedModel([call("broken_agent", {"task": "t"}), reply("x")]),
        "go",
        tools=[broken_agent()],
    )
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "agent_error"
    assert "Agent 'broken_agent' failed: ScriptError: script ran out" in record.content
    assert len(result.trace.children) == 1 and len(result.trace.children[0]) == 2


def test_nesting_depth_is_limited() -> None:
    def agent(name: str, inner: str | None) -> Any:
        steps = [call(inner, {"task": "t"})] if inner else []
        return agent_tool(
            name,
            "Delegate.",
            model=lambda: ScriptedModel([*steps, reply(f"{name} done")]),
            tools=[deeper_tools[inner]] if inner else [],
            max_depth=2,
        )

    deeper_tools: dict[str | None, Any] = {}
    deeper_tools["c"] = agent("c", None)
    deeper_tools["b"] = agent("b", "c")
    top = agent("a", "b")
    result = run(ScriptedModel([call("a", {"task": "go"}), reply("x")]), "go", tools=[top])
    level_a = result.trace.children[0]
    level_b = level_a.children[0]
    assert [c.error_kind for c in level_b.calls] == ["max_depth"]  # c would run at depth 2
    assert level_b.children == []
    deeper = deeper_tools["c"]
    blocked = run(
        ScriptedModel([call("c", {"task": "go"}), reply("x")]),
        "go",
        tools=[deeper],
        context={DEPTH_KEY: 2},
    )
    record = blocked.trace.calls[0]
    assert record.error_kind == "max_depth" and "max_depth=2" in record.content
    assert blocked.trace.children == []


def test_parent_context_values_do_not_leak_into_the_nested_run() -> None:
    seen: list[CallContext] = []

    @llm_tool
    def peek(context: CallContext) -> str:
        """Look at the call context."""
        seen.append(context)
        return "ok"

    tool = agent_tool(
        "peeker",
        "Peek.",
        model=lambda: ScriptedModel([call("peek"), reply("done")]),
        tools=[peek],
        options=LoopOptions(max_iterations=5),
    )
    run(
        ScriptedModel([call("peeker", {"task": "t"}), reply("x")]),
        "go",
        tools=[tool],
        context={"api_key": "sk-secret"},
    )
    (context,) = seen
    assert "api_key" not in context and context[DEPTH_KEY] == 1


def test_an_agentic_tool_works_under_the_async_driver() -> None:
    async def main() -> Any:
        return await arun(
            ScriptedModel([call("research_agent", {"task": "t"}), reply("x")]),
            "go",
            tools=[research_agent()],
        )

    result = asyncio.run(main())
    assert len(result.trace.children) == 1
    assert result.trace.children[0].iterations[0].offered == ("search_web", "fetch_page")
    assert RESEARCH_SYSTEM


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"options": {"max_iterations": 3}}, "options must be a LoopOptions"),
        ({"max_depth": 0}, "max_depth must be an int from 1 to 32"),
        ({"prompt": 3}, "prompt must be a format string or a function"),
        ({"model": "gpt"}, "model must be a Model or a function"),
    ],
)
def test_bad_definitions_raise_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"model": ScriptedModel([reply("x")]), **kwargs}
    with pytest.raises(UsageError, match=message):
        agent_tool("a", "b", **arguments)


def test_bad_factories_and_templates_fail_the_call_clearly() -> None:
    tool = agent_tool("a", "b", model=lambda: "not a model")  # type: ignore[arg-type,return-value]
    result = run(ScriptedModel([call("a", {"task": "t"}), reply("x")]), "go", tools=[tool])
    assert "the Model factory returned 'not a model'" in result.trace.calls[0].content
    templated = agent_tool("a", "b", model=ScriptedModel([reply("x")]), prompt="{topic}")
    result = run(ScriptedModel([call("a", {"task": "t"}), reply("x")]), "go", tools=[templated])
    assert (
        "uses 'topic' which is not an argument; arguments: ['task']"
        in result.trace.calls[0].content
    )
    direct = agent_tool("a", "b", model=ScriptedModel([reply("fine")]), strategies=7)  # type: ignore[arg-type]
    result = run(ScriptedModel([call("a", {"task": "t"}), reply("x")]), "go", tools=[direct])
    assert (
        "expected a list of strategies or a function returning one, got 7"
        in result.trace.calls[0].content
    )
    function_prompt = agent_tool(
        "a", "b", model=ScriptedModel([reply("fine")]), prompt=lambda args: args["task"].upper()
    )
    result = run(
        ScriptedModel([call("a", {"task": "t"}), reply("x")]), "go", tools=[function_prompt]
    )
    assert result.trace.calls[0].content == "fine"
