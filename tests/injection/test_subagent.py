"""Subagent tools: nested runs sharing the parent's state; dynamic system prompts; nested
traces, usage and signals; bad input (failing models, depth, bad prompt functions)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import (
    CallContext,
    LoopSignal,
    ScriptedModel,
    UsageError,
    arun,
    call,
    calls,
    llm_tool,
    reply,
    run,
)
from harness.assertions._render import render_table
from harness.injection import (
    AgentOutcome,
    RunInfo,
    RunIntrospection,
    agent_tool,
    subagent_tool,
)
from harness.injection._agentic import DEPTH_KEY
from harness.loop import Model, ModelRequest, ModelResponse, Usage
from harness.messages import AssistantMessage
from harness.models import raise_error
from harness.scenarios import format_timeline, timeline_rows

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.control import Escalate  # noqa: E402


@llm_tool
def remember(context: CallContext, key: str, value: str) -> str:
    """Put a value on the shared blackboard."""
    context.state[key] = value
    return f"remembered {key}"


def _writer(**kwargs: Any) -> ScriptedModel:
    return ScriptedModel(
        [
            call(
                "remember",
                {"key": "draft", "value": "v1"},
                usage={"input_tokens": 7, "output_tokens": 2},
            ),
            reply("Drafted.", usage={"input_tokens": 9, "output_tokens": 1}),
        ],
        name="writer-model",
        **kwargs,
    )


def _parent(*steps: Any) -> ScriptedModel:
    return ScriptedModel([*steps, reply("done")], name="lead-model")


def test_what_the_subagent_writes_is_in_the_parents_state_afterwards() -> None:
    seen: list[Any] = []

    @llm_tool
    def read_back(context: CallContext, key: str) -> str:
        """Read the shared blackboard."""
        seen.append(context.state.get(key))
        return str(context.state.get(key))

    tool = subagent_tool("writer", "Write.", model=_writer, tools=[remember])
    result = run(
        _parent(call("writer", {"task": "draft"}), call("read_back", {"key": "draft"})),
        "go",
        tools=[tool, read_back],
        state={"brief": "short"},
    )
    assert result.state["draft"] == "v1" and result.state["brief"] == "short"
    assert seen == ["v1"]  # the parent's own tool saw the artifact on the next turn
    record = result.trace.calls[0]
    outcome = record.value
    assert isinstance(outcome, AgentOutcome)
    assert outcome.shared_state is True and outcome.state_written == ("draft",)
    assert record.content == "Drafted.\n\n[Shared state written by 'writer': 'draft'.]"


def test_the_isolated_agent_tool_does_not_share_the_state() -> None:
    tool = agent_tool("writer", "Write.", model=_writer, tools=[remember])
    result = run(_parent(call("writer", {"task": "draft"})), "go", tools=[tool], state={"a": 1})
    assert result.state == {"a": 1}
    outcome = result.trace.calls[0].value
    assert isinstance(outcome, AgentOutcome)
    assert outcome.shared_state is False and outcome.state_written == ()
    assert result.trace.calls[0].content == "Drafted."


def test_the_subagent_sees_what_the_parent_wrote_before_the_handoff() -> None:
    seen: list[Any] = []

    @llm_tool
    def look(context: CallContext) -> str:
        """Look at the blackboard."""
        seen.append(dict(context.state))
        return "ok"

    tool = subagent_tool(
        "helper", "Help.", model=lambda: ScriptedModel([call("look"), reply("ok")]), tools=[look]
    )
    run(
        _parent(call("remember", {"key": "plan", "value": "p"}), call("helper", {"task": "t"})),
        "go",
        tools=[remember, tool],
    )
    assert seen == [{"plan": "p"}]


def test_removed_and_replaced_keys_are_reported_but_harness_keys_are_not() -> None:
    @llm_tool
    def tidy(context: CallContext) -> str:
        """Tidy the blackboard."""
        del context.state["old"]
        context.state["kept"] = ["new object"]
        context.state["harness.private"] = 1
        return "tidied"

    tool = subagent_tool(
        "tidier", "Tidy.", model=lambda: ScriptedModel([call("tidy"), reply("ok")]), tools=[tidy]
    )
    state: dict[str, Any] = {"old": 1, "kept": ["x"], "same": 2}
    result = run(_parent(call("tidier", {"task": "t"})), "go", tools=[tool], state=state)
    assert result.trace.calls[0].value.state_written == ("kept", "old")


def test_a_dynamic_system_prompt_is_computed_from_the_parent_context_at_handoff() -> None:
    contexts: list[tuple[int, str, list[str], Any]] = []
    models: list[ScriptedModel] = []

    def system(context: CallContext) -> str:
        contexts.append(
            (context.iteration, context.tool_name, sorted(context.state), context.get("team"))
        )
        return f"Team {context['team']}; blackboard: {sorted(context.state)}"

    def make() -> ScriptedModel:
        models.append(ScriptedModel([reply("ok")]))
        return models[-1]

    for factory in (subagent_tool, agent_tool):
        contexts.clear()
        models.clear()
        tool = factory("helper", "Help.", model=make, system=system)
        run(
            _parent(call("remember", {"key": "plan", "value": "p"}), call("helper", {"task": "t"})),
            "go",
            tools=[remember, tool],
            context={"team": "blue"},
        )
        assert contexts == [(2, "helper", ["plan"], "blue")]
        first = models[0].requests[0].messages[0]
        assert first.role == "system"
        assert first.content == "Team blue; blackboard: ['plan']"


def test_a_system_prompt_function_may_return_none_for_no_system_prompt() -> None:
    models: list[ScriptedModel] = []

    def make() -> ScriptedModel:
        models.append(ScriptedModel([reply("ok")]))
        return models[-1]

    tool = subagent_tool("helper", "Help.", model=make, system=lambda context: None)
    run(_parent(call("helper", {"task": "t"})), "go", tools=[tool])
    assert [m.role for m in models[0].requests[0].messages] == ["user"]


def test_a_system_prompt_function_returning_a_non_string_is_an_error_result_naming_it() -> None:
    tool = subagent_tool(
        "helper",
        "Help.",
        model=lambda: ScriptedModel([reply("ok")]),
        system=lambda c: 42,  # type: ignore[arg-type,return-value]
    )
    result = run(_parent(call("helper", {"task": "t"})), "go", tools=[tool])
    record = result.trace.calls[0]
    assert record.is_error
    assert "the system prompt function returned 42; it must return a str" in record.content


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"system": 3}, "system must be a str, a function (CallContext) -> str, or None"),
        ({"max_depth": 0}, "max_depth must be an int from 1 to 32"),
        ({"forward_context": "token"}, "forward_context must be a list of call-context names"),
        ({"options": {"max_iterations": 3}}, "options must be a LoopOptions"),
        ({"model": "gpt"}, "model must be a Model or a function returning one"),
        ({"prompt": 3}, "prompt must be a format string or a function"),
    ],
)
def test_bad_definitions_are_refused_at_construction(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"model": lambda: ScriptedModel([reply("x")]), **kwargs}
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        subagent_tool("helper", "Help.", **arguments)


def test_the_nested_trace_stays_nested_and_hangs_from_the_handoff_call() -> None:
    tool = subagent_tool("writer", "Write.", model=_writer, tools=[remember])
    result = run(
        _parent(call("writer", {"task": "a"}), call("remember", {"key": "k", "value": "v"})),
        "go",
        tools=[tool, remember],
    )
    (child,) = result.trace.children
    handoff, own = result.trace.calls
    assert handoff.children == (child,) and handoff.is_handoff
    assert own.children == () and not own.is_handoff
    assert [c.name for c in child.calls] == ["remember"]
    assert [c.name for c in result.trace.calls] == ["writer", "remember"]  # not flattened
    rows = timeline_rows(result.trace)
    assert [r.handoffs for r in rows] == [("writer",), (), ()]
    assert format_timeline(rows).splitlines()[0] == "#1 offered=2 calls=writer handoff=writer"
    assert "writer (handoff)" in render_table(rows)[1]
    assert result.trace.to_dict()["children"][0]["iterations"][0]["calls"][0]["name"] == "remember"


def test_the_nested_usage_is_accounted_to_the_parent_per_model() -> None:
    tool = subagent_tool("writer", "Write.", model=_writer, tools=[remember])
    parent = ScriptedModel(
        [
            call("writer", {"task": "a"}, usage={"input_tokens": 100, "output_tokens": 10}),
            reply("done", usage={"input_tokens": 50, "output_tokens": 5}),
        ],
        name="lead-model",
    )
    result = run(parent, "go", tools=[tool])
    writer = Usage(input_tokens=16, output_tokens=3, total_tokens=19)
    assert result.trace.children[0].usage == {"writer-model": writer}
    assert result.trace.calls[0].value.usage == writer
    assert result.trace.usage == {
        "lead-model": Usage(input_tokens=150, output_tokens=15, total_tokens=165),
        "writer-model": writer,
    }
    assert result.usage == Usage(input_tokens=166, output_tokens=18, total_tokens=184)


def test_two_levels_of_nesting_are_counted_once_each() -> None:
    inner = subagent_tool("inner", "Inner.", model=_writer, tools=[remember])
    outer = subagent_tool(
        "outer",
        "Outer.",
        model=lambda: ScriptedModel(
            [
                call("inner", {"task": "x"}, usage={"input_tokens": 1, "output_tokens": 1}),
                reply("ok"),
            ],
            name="outer-model",
        ),
        tools=[inner],
    )
    result = run(_parent(call("outer", {"task": "x"})), "go", tools=[outer])
    (child,) = result.trace.children
    (grandchild,) = child.children
    assert [c.name for c in grandchild.calls] == ["remember"]
    assert result.state == {"draft": "v1"}  # shared through two levels
    assert result.trace.usage["writer-model"].total_tokens == 19
    assert result.trace.usage["outer-model"].total_tokens == 2
    assert result.usage.total_tokens == 21


def test_a_signal_from_the_nested_agent_ends_the_parent_run_with_the_trace_kept() -> None:
    @llm_tool
    def escalate(context: CallContext, reason: str) -> str:
        """Hand the conversation to a human."""
        context.state["escalated"] = reason
        raise Escalate(reason)

    tool = subagent_tool(
        "support",
        "Support.",
        model=lambda: ScriptedModel([call("escalate", {"reason": "refund"})], name="support-model"),
        tools=[escalate],
    )
    state: dict[str, Any] = {}
    with pytest.raises(Escalate) as caught:
        run(_parent(call("support", {"task": "refund"})), "go", tools=[tool], state=state)
    signal = caught.value
    assert signal.reason == "refund"
    assert state == {"escalated": "refund"}  # written before the signal: kept
    trace = signal.trace
    (record,) = trace.calls
    assert record.name == "support" and record.error_kind == "signal"
    (child,) = trace.children
    assert record.children == (child,)
    assert [c.name for c in child.calls] == ["escalate"]
    assert isinstance(signal, LoopSignal) and signal.messages is not None


def test_a_subagent_whose_model_fails_is_an_error_result_with_its_trace_and_usage() -> None:
    tool = subagent_tool(
        "flaky",
        "Flaky.",
        model=lambda: ScriptedModel(
            [
                call(
                    "remember",
                    {"key": "partial", "value": "x"},
                    usage={"input_tokens": 4, "output_tokens": 1},
                ),
                raise_error("rate_limit"),
            ],
            name="flaky-model",
        ),
        tools=[remember],
    )
    result = run(_parent(call("flaky", {"task": "t"})), "go", tools=[tool])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "agent_error"
    assert record.content.startswith("Agent 'flaky' failed: RateLimited:")
    (child,) = record.children
    assert [c.name for c in child.calls] == ["remember"]
    assert result.state == {"partial": "x"}  # what it wrote before failing stays
    assert result.trace.usage["flaky-model"].total_tokens == 5
    assert result.output == "done"


class _Exploding(Model):
    """A model whose client raises a plain exception (not a harness error)."""

    __test__ = False
    name = "exploding"

    def request(self, request: ModelRequest) -> ModelResponse:
        raise ConnectionResetError("peer reset")


def test_a_plain_exception_from_the_nested_model_keeps_the_nested_trace() -> None:
    tool = subagent_tool("boom", "Boom.", model=_Exploding)
    result = run(_parent(call("boom", {"task": "t"})), "go", tools=[tool])
    record = result.trace.calls[0]
    assert record.error_kind == "agent_error"
    assert record.content == "Agent 'boom' failed: ConnectionResetError: peer reset"
    assert len(record.children) == 1 and record.children[0].iterations[0].finish_reason is None


def test_a_nested_subagent_past_max_depth_is_an_error_result_and_the_run_goes_on() -> None:
    worker = subagent_tool(
        "worker", "Work.", model=lambda: ScriptedModel([reply("worked")]), max_depth=1
    )
    manager = subagent_tool(
        "manager",
        "Manage.",
        model=lambda: ScriptedModel([call("worker", {"task": "t"}), reply("did it myself")]),
        tools=[worker],
    )
    result = run(
        _parent(call("manager", {"task": "t"}), call("worker", {"task": "t"})),
        "go",
        tools=[manager, worker],
    )
    (child,) = result.trace.calls[0].children
    nested = child.calls[0]
    assert nested.error_kind == "max_depth"
    assert nested.content == (
        "Agent 'worker' cannot run: nesting depth 1 reached max_depth=1. Do the task yourself."
    )
    assert result.trace.calls[0].content == "did it myself"
    assert result.trace.calls[1].content == "worked"  # at the top level the worker runs


def test_only_named_context_values_are_forwarded_to_the_subagent() -> None:
    seen: list[dict[str, Any]] = []

    @llm_tool
    def peek(context: CallContext) -> str:
        """Peek at the call context."""
        seen.append(dict(context))
        return "ok"

    tool = subagent_tool(
        "helper",
        "Help.",
        model=lambda: ScriptedModel([call("peek"), reply("ok")]),
        tools=[peek],
        forward_context=["user_id", "missing"],
    )
    run(
        _parent(call("helper", {"task": "t"})),
        "go",
        tools=[tool],
        context={"user_id": "u-1", "api_token": "tok-0123456789"},
    )
    assert seen == [{"user_id": "u-1", DEPTH_KEY: 1}]


def test_run_introspection_in_parent_and_subagent_keep_their_own_run_info() -> None:
    child_status: list[str] = []

    def child_model() -> ScriptedModel:
        return ScriptedModel([call("run_status"), reply("ok")])

    tool = subagent_tool(
        "helper",
        "Help.",
        model=child_model,
        strategies=lambda: [RunIntrospection(unfold=False)],
    )
    result = run(
        _parent(call("helper", {"task": "t"}), call("call_history")),
        "go",
        tools=[tool],
        strategies=[RunIntrospection(unfold=False)],
    )
    child = result.trace.children[0]
    child_status.append(child.calls[0].content)
    assert '"iteration":1' in child_status[0]
    history = result.trace.calls[1].content
    assert '"tool":"helper"' in history and "run_status" not in history
    infos = [v for k, v in result.state.items() if isinstance(v, RunInfo)]
    assert len(infos) == 2 and isinstance(result.state["harness.run_info"], RunInfo)
    assert result.state["harness.run_info"].history[0]["tool"] == "helper"


def test_a_subagent_works_under_the_async_driver() -> None:
    tool = subagent_tool("writer", "Write.", model=_writer, tools=[remember])
    result = asyncio.run(arun(_parent(call("writer", {"task": "a"})), "go", tools=[tool]))
    assert result.state == {"draft": "v1"}
    assert result.trace.calls[0].is_handoff


class _AsyncOnly(Model):
    """A model that answers only from async code (like an ``AsyncOpenAI``-backed one)."""

    __test__ = False
    name = "async-only"

    def request(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("the nested run must be awaited, not run synchronously")

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)
        return ModelResponse(message=AssistantMessage(content="async answer"))


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_the_nested_run_is_awaited_so_async_only_models_work_under_both_drivers(
    driver: str,
) -> None:
    tool = subagent_tool("helper", "Help.", model=_AsyncOnly)
    parent = _parent(call("helper", {"task": "t"}))
    if driver == "run":
        result = run(parent, "go", tools=[tool])
    else:
        result = asyncio.run(arun(parent, "go", tools=[tool]))
    assert result.trace.calls[0].content == "async answer"
    assert tool.is_async


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_parallel_subagents_write_the_same_blackboard(driver: str) -> None:
    def writer(key: str) -> Any:
        return subagent_tool(
            f"writer_{key}",
            "Write.",
            model=lambda: ScriptedModel(
                [call("remember", {"key": key, "value": key.upper()}), reply(f"wrote {key}")]
            ),
            tools=[remember],
        )

    parent = ScriptedModel(
        [
            calls(call("writer_a", {"task": "a"}), call("writer_b", {"task": "b"})),
            call("remember", {"key": "c", "value": "C"}),
            reply("done"),
        ]
    )
    tools = [writer("a"), writer("b"), remember]
    if driver == "run":
        result = run(parent, "go", tools=tools)
    else:
        result = asyncio.run(arun(parent, "go", tools=tools))
    assert result.state == {"a": "A", "b": "B", "c": "C"}
    first, second, _ = result.trace.calls
    assert [c.name for c in first.children[0].calls] == ["remember"]
    # keys changed *during* the handoff: a parallel call's writes may be listed too
    assert "a" in first.value.state_written and "b" in second.value.state_written
    assert [r.handoffs for r in timeline_rows(result.trace)] == [("writer_a", "writer_b"), (), ()]
