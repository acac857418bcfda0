"""CallbackModel: a sync or async function of the request decides each response."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import harness
from harness import AssistantMessage, ModelResponse, ToolCall, Usage, UsageError, llm_tool
from harness.loop import ModelCapabilities, ModelRequest
from harness.models import CallbackModel
from harness.tools import ToolChoice


@llm_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _adder(request: ModelRequest) -> AssistantMessage | str:
    """Call ``add`` once, then answer with its result."""
    last = request.messages[-1]
    if last.role == "tool":
        return f"the sum is {last.content}"
    return AssistantMessage(tool_calls=(ToolCall(id="c1", name="add", arguments='{"a":2,"b":3}'),))


def test_sync_function_drives_the_run() -> None:
    model = CallbackModel(_adder)
    result = harness.run(model, "add 2 and 3", tools=[add])
    assert result.output == "the sum is 5"
    assert [it.finish_reason for it in result.trace.iterations] == ["tool_calls", "stop"]
    assert len(model.requests) == 2


def test_request_exposes_history_tool_definitions_and_settings() -> None:
    seen: list[Any] = []

    def fn(request: ModelRequest) -> str:
        seen.append(
            (
                [m.role for m in request.messages],
                [t.name for t in request.tools],
                request.settings.tool_choice,
                request.settings.extra,
            )
        )
        return "ok"

    harness.run(
        CallbackModel(fn),
        "hi",
        system="be brief",
        tools=[add],
        tool_choice="auto",
        model_settings={"temperature": 0},
    )
    assert seen == [(["system", "user"], ["add"], ToolChoice.auto(), {"temperature": 0})]


def test_full_model_response_is_passed_through() -> None:
    response = ModelResponse(
        message=AssistantMessage(content="cut"),
        finish_reason="length",
        usage=Usage(input_tokens=3, output_tokens=1, total_tokens=4),
    )
    result = harness.run(CallbackModel(lambda r: response), "go")
    assert result.output == "cut"
    assert result.usage.total_tokens == 4
    assert result.trace.iterations[0].finish_reason == "length"


def test_async_function_under_arun() -> None:
    async def fn(request: ModelRequest) -> AssistantMessage | str:
        await asyncio.sleep(0)
        return _adder(request)

    model = CallbackModel(fn, name="async-cb")
    result = asyncio.run(harness.arun(model, "go", tools=[add]))
    assert result.output == "the sum is 5"


def test_async_function_under_sync_run() -> None:
    async def fn(request: ModelRequest) -> str:
        await asyncio.sleep(0)
        return "from async"

    assert harness.run(CallbackModel(fn), "go").output == "from async"


def test_sync_function_under_arun() -> None:
    result = asyncio.run(harness.arun(CallbackModel(_adder), "go", tools=[add]))
    assert json.loads(result.trace.calls[0].arguments) == {"a": 2, "b": 3}


def test_async_function_via_sync_request_inside_a_running_loop_is_a_usage_error() -> None:
    async def fn(request: ModelRequest) -> str:
        return "never"

    model = CallbackModel(fn)

    async def main() -> None:
        with pytest.raises(UsageError, match=r"use harness\.arun"):
            harness.run(model, "go")

    asyncio.run(main())


def test_bad_return_value_is_a_usage_error_with_the_value() -> None:
    def fn(request: ModelRequest) -> Any:
        return {"content": "dict"}

    with pytest.raises(UsageError, match=r"returned dict: \{'content': 'dict'\}") as info:
        harness.run(CallbackModel(fn), "go")
    assert "fn" in str(info.value)
    assert info.value.trace is not None


def test_not_callable_is_rejected_up_front() -> None:
    with pytest.raises(UsageError, match="got 'text'"):
        CallbackModel("text")  # type: ignore[arg-type]


def test_capabilities_are_overridable() -> None:
    caps = ModelCapabilities(supports_dynamic_tools=False)
    assert CallbackModel(lambda r: "x", capabilities=caps).capabilities is caps
    assert CallbackModel(lambda r: "x").capabilities.supports_dynamic_tools


def test_exceptions_from_the_function_propagate() -> None:
    def fn(request: ModelRequest) -> str:
        raise harness.RateLimited("slow", status=429, retry_after=1.0)

    with pytest.raises(harness.RateLimited) as info:
        harness.run(CallbackModel(fn), "go")
    assert info.value.retry_after == 1.0
