"""The timeout guarantee: the result arrives at the deadline and nothing waits for a runaway.

Each attack runs in a fresh interpreter where it matters, so that ``asyncio.run()``'s
shutdown and the interpreter's exit are measured too.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from loop_helpers import assert_history_well_formed, drive

from harness.loop import ToolAbandoned, ToolFailed
from harness.loop._execution import CANCEL_GRACE, ToolTimedOut
from harness.models import ScriptedModel, call, reply
from harness.tools import llm_tool

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 0.3
SLOW = 6.0  # how long the runaway tools would run


@llm_tool
def sync_sleeper() -> str:
    """Sleeps in a thread."""
    time.sleep(SLOW)
    return "late"


@llm_tool
async def stubborn() -> str:
    """Swallows the cancellation and keeps going."""
    try:
        await asyncio.sleep(SLOW)
    except asyncio.CancelledError:
        await asyncio.sleep(1.0)  # refuses to stop within the grace period
    return "late"


@llm_tool
async def polite() -> str:
    """Stops when cancelled."""
    await asyncio.sleep(SLOW)
    return "late"


@llm_tool
async def blocker() -> str:
    """Blocks the event loop."""
    time.sleep(1.0)
    return "late"


def _abandoned(result: object) -> list[ToolAbandoned]:
    return [e for e in result.trace.events if isinstance(e, ToolAbandoned)]  # type: ignore[attr-defined]


def _timed(driver: str, tool: object) -> tuple[float, object]:
    name = tool.__name__  # type: ignore[attr-defined]
    model = ScriptedModel([call(name), reply("done")])
    started = time.monotonic()
    result = drive(driver, model, "go", tools=[tool], tool_timeout=TIMEOUT)
    return time.monotonic() - started, result


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_sync_tool_times_out_at_the_deadline_and_is_left_in_a_thread(driver: str) -> None:
    elapsed, result = _timed(driver, sync_sleeper)
    assert elapsed < TIMEOUT + 1.0  # asyncio.run() included: it used to wait the full 6 s
    record = result.trace.calls[0]  # type: ignore[attr-defined]
    assert record.error_kind == "timeout"
    assert isinstance(record.exception, ToolTimedOut)
    (event,) = _abandoned(result)
    assert (event.name, event.still_running, event.timeout) == ("sync_sleeper", "thread", TIMEOUT)
    kinds = [e.kind for e in result.trace.events]  # type: ignore[attr-defined]
    assert kinds.index("ToolAbandoned") < kinds.index("ToolFailed")
    assert_history_well_formed(result.messages)  # type: ignore[attr-defined]


def test_an_async_tool_that_swallows_cancellation_is_left_as_a_task() -> None:
    elapsed, result = _timed("async", stubborn)
    assert elapsed < TIMEOUT + CANCEL_GRACE + 0.5  # used to be the tool's whole delay
    (event,) = _abandoned(result)
    assert event.still_running == "task"
    assert "left running in a task" in event.message


def test_a_polite_async_tool_is_cancelled_and_not_reported_running() -> None:
    elapsed, result = _timed("async", polite)
    assert elapsed < TIMEOUT + CANCEL_GRACE + 0.5
    (event,) = _abandoned(result)
    assert event.still_running is None and "it was cancelled" in event.message
    assert result.trace.calls[0].error_kind == "timeout"  # type: ignore[attr-defined]


def test_an_async_tool_blocking_the_loop_is_timed_out_when_it_returns() -> None:
    elapsed, result = _timed("async", blocker)
    assert 1.0 <= elapsed < 2.5  # nothing on the loop can interrupt time.sleep
    record = result.trace.calls[0]  # type: ignore[attr-defined]
    assert record.error_kind == "timeout"  # was a success: the deadline never fired
    (event,) = _abandoned(result)
    assert event.blocked_loop_seconds is not None and event.blocked_loop_seconds >= 1.0
    assert event.still_running is None
    assert "blocked the event loop" in event.message
    failed = [e for e in result.trace.events if isinstance(e, ToolFailed)]  # type: ignore[attr-defined]
    assert failed[0].error_kind == "timeout"


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_fast_tool_with_a_timeout_is_not_abandoned(driver: str) -> None:
    @llm_tool
    async def quick() -> str:
        """Fast."""
        return "ok"

    @llm_tool
    def quick_sync() -> str:
        """Fast."""
        return "ok"

    for tool in (quick, quick_sync):
        _, result = _timed(driver, tool)
        assert result.trace.calls[0].content == "ok"  # type: ignore[attr-defined]
        assert _abandoned(result) == []


SCRIPT = """
import asyncio, sys, time
from harness.loop import arun, run
from harness.models import ScriptedModel, call, reply
from harness.tools import llm_tool

@llm_tool
def sleeper() -> str:
    '''Sleeps.'''
    time.sleep(20)
    return "late"

model = ScriptedModel([call("sleeper"), reply("done")])
if sys.argv[1] == "async":
    result = asyncio.run(arun(model, "go", tools=[sleeper], tool_timeout=0.5))
else:
    result = run(model, "go", tools=[sleeper], tool_timeout=0.5)
print(result.trace.calls[0].error_kind, flush=True)
"""


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_the_process_exits_without_waiting_for_the_runaway_thread(
    driver: str, tmp_path: Path
) -> None:
    script = tmp_path / "attack.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script), driver],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "timeout"
    assert elapsed < 10  # the tool sleeps 20 s; asyncio.run() used to wait for it


def test_a_timed_sync_tool_under_arun_sees_the_callers_contextvars() -> None:
    import contextvars

    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")

    @llm_tool
    def whoami() -> str:
        """Reads a context variable."""
        return request_id.get("unset")

    async def main() -> str:
        request_id.set("req-42")
        model = ScriptedModel([call("whoami"), reply("done")])
        from harness.loop import arun

        result = await arun(model, "go", tools=[whoami], tool_timeout=5)
        return str(result.trace.calls[0].content)

    assert asyncio.run(main()) == "req-42"
