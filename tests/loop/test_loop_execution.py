"""Tool execution: timeouts, retries with backoff, in both drivers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from loop_helpers import Recorder, assert_history_well_formed

from harness._errors import UsageError
from harness.loop import LoopOptions, RetryableToolError, RunResult, ToolFailed, arun, run
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import llm_tool

DRIVERS = ["sync", "async"]


def _drive(driver: str, steps: list, tools: list, **options: Any) -> RunResult:  # type: ignore[type-arg]
    model = ScriptedModel(steps)
    if driver == "sync":
        return run(model, "go", tools=tools, **options)
    return asyncio.run(arun(model, "go", tools=tools, **options))


@llm_tool
def sleepy(seconds: float) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "awake"


@llm_tool
async def async_sleepy(seconds: float) -> str:
    """Sleeps, asynchronously."""
    await asyncio.sleep(seconds)
    return "awake"


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("tool", [sleepy, async_sleepy])
def test_tool_timeout_becomes_an_error_result(driver: str, tool: Callable[..., Any]) -> None:
    rec = Recorder()
    name = tool.__name__
    result = _drive(
        driver,
        [call(name, seconds=0.2), call(name, seconds=0.0), reply("gave up")],
        [tool],
        tool_timeout=0.1,
        observers=[rec],
    )
    slow, fast = result.trace.calls
    assert slow.is_error and slow.error_kind == "timeout"
    assert slow.content == f"Tool {name!r} timed out after 0.1s. " + (
        "Try again with a smaller request or use another tool."
    )
    assert fast.content == "awake" and not fast.is_error
    failed = [e for e in rec.events if isinstance(e, ToolFailed)]
    assert [(e.name, e.error_kind) for e in failed] == [(name, "timeout")]
    assert result.output == "gave up"
    assert_history_well_formed(result.messages)


@pytest.mark.parametrize("driver", DRIVERS)
def test_parallel_calls_time_out_independently(driver: str) -> None:
    result = _drive(
        driver,
        [calls(call("sleepy", seconds=0.2), call("async_sleepy", seconds=0)), reply("ok")],
        [sleepy, async_sleepy],
        tool_timeout=0.1,
    )
    assert [c.error_kind for c in result.trace.calls] == ["timeout", None]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_tool_raising_timeout_error_itself_is_an_exception_not_a_timeout(driver: str) -> None:
    @llm_tool
    async def flaky_net() -> str:
        """Raises its own TimeoutError at once."""
        raise TimeoutError("upstream took too long")

    result = _drive(driver, [call("flaky_net"), reply("ok")], [flaky_net], tool_timeout=5)
    record = result.trace.calls[0]
    assert record.error_kind == "exception"
    assert isinstance(record.exception, TimeoutError)
    assert "upstream took too long" in record.content


class Flaky:
    """Fails with ``error`` ``failures`` times, then succeeds."""

    def __init__(self, failures: int, error: type[Exception] = RetryableToolError) -> None:
        self.failures = failures
        self.error = error
        self.times: list[float] = []

    def tool(self) -> Callable[..., Any]:
        @llm_tool
        def flaky() -> str:
            """Sometimes fails."""
            self.times.append(time.monotonic())
            if len(self.times) <= self.failures:
                raise self.error(f"attempt {len(self.times)} failed")
            return "finally"

        return flaky


@pytest.mark.parametrize("driver", DRIVERS)
def test_retryable_errors_are_retried_with_backoff(driver: str) -> None:
    flaky = Flaky(failures=2)
    result = _drive(
        driver,
        [call("flaky"), reply("ok")],
        [flaky.tool()],
        tool_retries=3,
        retry_backoff=0.02,
    )
    record = result.trace.calls[0]
    assert (record.content, record.attempts, record.is_error) == ("finally", 3, False)
    gaps = [b - a for a, b in zip(flaky.times, flaky.times[1:], strict=False)]
    assert gaps[0] >= 0.015 and gaps[1] >= 0.035  # 0.02, then doubled


@pytest.mark.parametrize("driver", DRIVERS)
def test_retries_exhausted_give_an_error_result_with_the_last_exception(driver: str) -> None:
    flaky = Flaky(failures=10)
    result = _drive(
        driver, [call("flaky"), reply("ok")], [flaky.tool()], tool_retries=2, retry_backoff=0
    )
    record = result.trace.calls[0]
    assert record.attempts == 3 and len(flaky.times) == 3
    assert record.error_kind == "exception"
    assert isinstance(record.exception, RetryableToolError)
    assert str(record.exception) == "attempt 3 failed"
    assert record.content == "Tool 'flaky' failed: RetryableToolError: attempt 3 failed"


@pytest.mark.parametrize("driver", DRIVERS)
def test_non_retryable_exceptions_are_not_retried(driver: str) -> None:
    flaky = Flaky(failures=1, error=KeyError)
    result = _drive(
        driver, [call("flaky"), reply("ok")], [flaky.tool()], tool_retries=5, retry_backoff=0
    )
    record = result.trace.calls[0]
    assert record.attempts == 1 and len(flaky.times) == 1
    assert isinstance(record.exception, KeyError)


def test_retry_on_selects_the_exception_types() -> None:
    flaky = Flaky(failures=1, error=ConnectionError)
    result = _drive(
        "sync",
        [call("flaky"), reply("ok")],
        [flaky.tool()],
        tool_retries=1,
        retry_backoff=0,
        retry_on=(ConnectionError,),
    )
    assert result.trace.calls[0].attempts == 2 and result.trace.calls[0].content == "finally"


def test_retry_delay_doubles_and_stops() -> None:
    options = LoopOptions(tool_retries=3, retry_backoff=0.5)
    err = RetryableToolError()
    assert [options.retry_delay(n, err) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, None]
    assert options.retry_delay(1, ValueError()) is None
    assert LoopOptions().retry_delay(1, err) is None  # no retries by default


def test_retry_delay_grows_by_the_configured_multiplier() -> None:
    err = RetryableToolError()
    tripled = LoopOptions(tool_retries=3, retry_backoff=0.5, retry_multiplier=3)
    assert [tripled.retry_delay(n, err) for n in (1, 2, 3)] == [0.5, 1.5, 4.5]
    constant = LoopOptions(tool_retries=3, retry_backoff=0.25, retry_multiplier=1)
    assert [constant.retry_delay(n, err) for n in (1, 2, 3)] == [0.25, 0.25, 0.25]


@pytest.mark.parametrize("bad", [0.5, 0, -2, "2", True, float("nan"), float("inf")])
def test_a_retry_multiplier_below_one_or_not_a_number_is_refused(bad: object) -> None:
    with pytest.raises(UsageError, match=r"retry_multiplier must be a finite number >= 1 .*got "):
        LoopOptions(retry_multiplier=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_drivers_wait_by_the_multiplier(driver: str) -> None:
    flaky = Flaky(failures=2)
    result = _drive(
        driver,
        [call("flaky"), reply("ok")],
        [flaky.tool()],
        tool_retries=2,
        retry_backoff=0.01,
        retry_multiplier=6,
    )
    assert result.trace.calls[0].attempts == 3
    gaps = [b - a for a, b in zip(flaky.times, flaky.times[1:], strict=False)]
    assert gaps[1] >= 0.055  # 0.01, then 0.06 (doubling would wait 0.02)


@pytest.mark.parametrize("driver", DRIVERS)
def test_timeouts_are_not_retried(driver: str) -> None:
    result = _drive(
        driver,
        [call("sleepy", seconds=0.2), reply("ok")],
        [sleepy],
        tool_timeout=0.03,
        tool_retries=3,
    )
    assert result.trace.calls[0].attempts == 1
    assert result.trace.calls[0].error_kind == "timeout"


def test_one_runnable_call_among_failed_ones_runs_on_the_calling_thread() -> None:
    # Only two or more runnable calls go to the thread pool: a call next to an
    # unknown tool's call runs where a single call runs, on the caller's thread.
    threads: list[threading.Thread] = []

    @llm_tool
    def where() -> str:
        """Record the thread the tool runs on."""
        threads.append(threading.current_thread())
        return "here"

    model = ScriptedModel(
        [calls(call("nope", id="c1"), call("where", id="c2")), reply("done")], lenient=True
    )
    result = run(model, "go", tools=[where])
    assert threads == [threading.current_thread()]
    assert result.messages[2].is_error  # type: ignore[union-attr]
    assert result.messages[3].content == "here"  # type: ignore[union-attr]
