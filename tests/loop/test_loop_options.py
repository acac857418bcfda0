"""Loop options: validation, max iterations, unknown tools, structured output, call context."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from loop_helpers import Recorder, add, assert_history_well_formed, drive, echo
from pydantic import BaseModel

from harness import (
    MaxIterationsExceeded,
    OutputValidationError,
    ToolNotFound,
    UsageError,
)
from harness.loop import LimitReached, LoopOptions, arun, run
from harness.messages import AssistantMessage, ToolCall, UserMessage
from harness.models import ScriptedModel, call, output, reply
from harness.tools import CallContext, llm_tool


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("max_iterations", 0, "max_iterations must be an int >= 1, got 0"),
        ("max_iterations", "5", "max_iterations must be an int >= 1, got '5'"),
        ("max_iterations", True, "max_iterations must be an int >= 1, got True"),
        (
            "tool_timeout",
            0,
            "tool_timeout must be a number of seconds > 0 or None, finite and at most 604800 "
            "(a week), got 0",
        ),
        (
            "tool_timeout",
            "1s",
            "tool_timeout must be a number of seconds > 0 or None, finite and at most 604800 "
            "(a week), got '1s'",
        ),
        ("tool_retries", -1, "tool_retries must be an int >= 0, got -1"),
        (
            "retry_backoff",
            -0.5,
            "retry_backoff must be a number of seconds >= 0, finite and at most 604800 "
            "(a week), got -0.5",
        ),
        ("retry_on", ValueError, "retry_on must be a tuple of exception classes"),
        ("retry_on", (int,), "retry_on must be a tuple of exception classes"),
        (
            "unknown_tool",
            "ignore",
            "unknown_tool must be one of 'error_result', 'raise', got 'ignore'",
        ),
        ("output_type", 42, "output_type must be a type pydantic can validate"),
        ("output_retries", -1, "output_retries must be an int >= 0, got -1"),
        ("max_workers", 0, "max_workers must be an int >= 1, got 0"),
        ("context", ["k"], "context must be a mapping"),
        ("call_context", "nope", "call_context must be a function"),
        ("model_settings", 3, "model_settings must be a mapping"),
    ],
)
def test_invalid_options_raise_usage_error_naming_the_field(
    field: str, value: Any, expected: str
) -> None:
    with pytest.raises(UsageError) as info:
        LoopOptions(**{field: value})
    assert expected in str(info.value)
    assert str(info.value).startswith("invalid loop options: ")


def test_all_problems_are_reported_together() -> None:
    with pytest.raises(UsageError) as info:
        LoopOptions(max_iterations=0, tool_retries=-1)
    assert "max_iterations" in str(info.value) and "tool_retries" in str(info.value)


def test_defaults() -> None:
    options = LoopOptions()
    assert options.max_iterations == 20
    assert options.unknown_tool == "error_result"
    assert options.tool_timeout is None and options.tool_retries == 0


# -- max iterations -------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_max_iterations_keeps_trace_and_messages(driver: str) -> None:
    rec = Recorder()
    model = ScriptedModel([call("echo", text=str(i)) for i in range(5)], require_exhausted=False)
    with pytest.raises(MaxIterationsExceeded) as info:
        drive(driver, model, "loop", tools=[echo], max_iterations=3, observers=[rec])
    exc = info.value
    assert exc.max_iterations == 3
    assert "max_iterations=3" in str(exc) and "raise max_iterations" in str(exc)
    assert len(exc.trace.iterations) == 3
    assert [c.content for c in exc.trace.calls] == ["0", "1", "2"]
    assert exc.messages is not None and len(exc.messages) == 1 + 3 * 2
    assert_history_well_formed(exc.messages)
    limit = rec.events[-1]
    assert isinstance(limit, LimitReached)
    assert (limit.limit, limit.value, limit.iteration) == ("max_iterations", 3, 3)
    assert exc.trace.events[-1] == limit
    assert len(model.requests) == 3


# -- unknown tools --------------------------------------------------------------------


def test_unknown_tool_default_is_an_error_result_listing_offered_tools() -> None:
    model = ScriptedModel([call("delete_everything"), reply("sorry")], lenient=True)
    result = run(model, "go", tools=[add, echo])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "unknown_tool"
    assert record.attempts == 0
    assert record.content == (
        "Tool 'delete_everything' is not available. Available tools: add, echo. "
        "Call one of these, or answer without a tool."
    )
    assert result.messages[2].content == record.content  # type: ignore[union-attr]
    assert result.output == "sorry"


def test_unknown_tool_with_nothing_offered() -> None:
    model = ScriptedModel([call("x"), reply("ok")], lenient=True)
    result = run(model, "go")
    assert "(no tools are offered)" in result.trace.calls[0].content


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_unknown_tool_raise_policy(driver: str) -> None:
    model = ScriptedModel([call("echo", text="a"), call("nope"), reply("x")], lenient=True)
    with pytest.raises(ToolNotFound) as info:
        drive(driver, model, "go", tools=[add, echo], unknown_tool="raise")
    exc = info.value
    assert exc.name == "nope" and exc.offered == ("add", "echo")
    assert str(exc) == "the model called unknown tool 'nope'; offered tools: add, echo"
    assert exc.trace is not None and len(exc.trace.iterations) == 2
    assert exc.trace.calls[0].content == "a"
    assert exc.messages is not None
    # the history stays complete: the unknown call is answered before the error is raised
    asked, answer = exc.messages[-2:]
    assert isinstance(asked, AssistantMessage) and asked.tool_calls[0].name == "nope"
    assert answer.role == "tool" and answer.tool_call_id == asked.tool_calls[0].id  # type: ignore[union-attr]
    assert answer.content == "Tool 'nope' was not run: the run ended with ToolNotFound."
    assert exc.trace.calls[-1].error_kind == "not_run"


def test_tool_not_found_lists_many_tools_briefly() -> None:
    exc = ToolNotFound("x", [f"t{i}" for i in range(60)])
    assert "t19" in str(exc) and "t20" not in str(exc) and "t19 and 40 more" in str(exc)


def test_tool_not_found_suggests_the_closest_offered_tool() -> None:
    exc = ToolNotFound("serch_customer", ["search_customer", "list_orders"])
    assert "unknown tool 'serch_customer' (did you mean 'search_customer'?)" in str(exc)
    assert "did you mean" not in str(ToolNotFound("zzz", ["search_customer"]))


# -- structured output ----------------------------------------------------------------


class Spend(BaseModel):
    customer: str
    average: float


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_structured_output_is_parsed(driver: str) -> None:
    model = ScriptedModel([output(Spend(customer="c-1", average=12.5))])
    if driver == "sync":
        result = run(model, "go", output_type=Spend)
    else:
        result = asyncio.run(arun(model, "go", output_type=Spend))
    assert result.output == Spend(customer="c-1", average=12.5)
    settings = model.requests[0].settings
    assert settings.output_name == "Spend"
    assert settings.output_schema == Spend.model_json_schema()


def test_invalid_structured_output_tells_the_model_and_retries() -> None:
    model = ScriptedModel(
        [reply('{"customer": "c-1", "average": "lots"}'), output({"customer": "c-1", "average": 3})]
    )
    result = run(model, "go", output_type=Spend)
    assert result.output == Spend(customer="c-1", average=3.0)
    correction = result.messages[2]
    assert isinstance(correction, UserMessage)
    assert "did not match the required output format: average: Input should be a valid number" in (
        correction.content
    )
    assert json.dumps(Spend.model_json_schema()) in correction.content
    assert list(model.requests[1].messages)[-1] == correction
    assert result.iterations == 2


def test_structured_output_without_text_is_corrected() -> None:
    model = ScriptedModel([reply("not json"), output({"customer": "a", "average": 1})])
    result = run(model, "go", output_type=Spend)
    assert "Invalid JSON" in result.messages[2].content  # type: ignore[union-attr]


def test_structured_output_retries_exhausted() -> None:
    model = ScriptedModel([reply("{}"), reply("[]"), reply("{}")], require_exhausted=False)
    with pytest.raises(OutputValidationError) as info:
        run(model, "go", output_type=Spend, output_retries=1)
    exc = info.value
    assert "after 1 retries" in str(exc)
    assert "Input should be an object" in str(exc)
    assert exc.messages is not None and len(exc.messages) == 4  # user, bad, correction, bad
    assert len(exc.trace.iterations) == 2 and len(model.requests) == 2


def test_answer_with_no_text_is_an_output_problem() -> None:
    from harness.loop import LoopCore, ModelResponse, StrategyChain
    from harness.tools import Toolset

    core = LoopCore(
        messages=[UserMessage(content="go")],
        toolset=Toolset(),
        strategy=StrategyChain(()),
        options=LoopOptions(output_type=Spend, output_retries=0),
    )
    core.begin_iteration()
    with pytest.raises(OutputValidationError, match="the answer had no text"):
        core.receive_response(ModelResponse(message=AssistantMessage(refusal="no")))


# -- call context ---------------------------------------------------------------------

SEEN: list[dict[str, Any]] = []


@llm_tool
def whoami(ctx: CallContext, note: str = "") -> str:
    """Says who is calling."""
    SEEN.append({"values": dict(ctx), "tool": ctx.tool_name, "id": ctx.tool_call_id})
    return f"user {ctx['user']}"


def test_call_context_reaches_tools_call_level_wins_and_never_leaks() -> None:
    SEEN.clear()
    secret = "sk-very-secret-123"

    def per_call(tool_call: ToolCall) -> dict[str, Any]:
        return {"user": f"u-{tool_call.id}", "token": secret} if tool_call.id == "c2" else {}

    model = ScriptedModel([call("whoami", id="c1"), call("whoami", id="c2"), reply("ok")])
    result = run(
        model,
        "go",
        tools=[whoami],
        context={"user": "alice", "api_key": secret},
        call_context=per_call,
    )
    assert SEEN[0] == {"values": {"user": "alice", "api_key": secret}, "tool": "whoami", "id": "c1"}
    assert SEEN[1]["values"] == {"user": "u-c2", "api_key": secret, "token": secret}
    assert [c.content for c in result.trace.calls] == ["user alice", "user u-c2"]
    assert "ctx" not in json.dumps([t.to_data() for t in model.requests[0].tools])
    everything = json.dumps(result.trace.to_dict()) + repr(result.messages) + repr(result.trace)
    everything += json.dumps([t.to_data() for r in model.requests for t in r.tools])
    assert secret not in everything


def test_context_is_per_run_and_state_is_shared() -> None:
    @llm_tool
    def bump(ctx: CallContext) -> int:
        """Counts in the run state."""
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        return int(ctx.state["n"])

    model = ScriptedModel([call("bump"), call("bump"), reply("ok")])
    state: dict[str, Any] = {}
    result = run(model, "go", tools=[bump], state=state)
    assert [c.value for c in result.trace.calls] == [1, 2]
    assert state == {"n": 2} and result.state is state


def test_run_result_repr_is_a_short_summary() -> None:
    from harness import RunResult, Trace, Usage
    from harness.messages import UserMessage

    result = RunResult(
        output="x" * 500,
        messages=[UserMessage(content="secret-ish " * 100)] * 1000,
        iterations=1000,
        tools_injected=["a"],
        trace=Trace(),
        usage=Usage(),
    )
    text = repr(result)
    assert len(text) < 300
    assert "iterations=1000" in text and "<1000 messages>" in text and "'a'" in text
    assert "secret-ish" not in text
