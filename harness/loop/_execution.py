"""Running pending tool calls: retries, backoff and timeouts, sync and async.

The decision of what an outcome means (``_settle``) is written once; the two
runners only differ in how they wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.loop._core import PendingCall
from harness.loop._options import LoopOptions
from harness.tools import ToolResult

__all__ = ["execute_async", "execute_sync"]

Outcome = tuple[ToolResult, int]


class _TimedOut(Exception):
    pass


def _timeout_result(pending: PendingCall, timeout: float | None) -> ToolResult:
    return ToolResult.error(
        f"Tool {pending.call.name!r} timed out after {timeout:g}s. "
        "Try again with a smaller request or use another tool.",
        kind="timeout",
    )


def _settle(
    pending: PendingCall,
    options: LoopOptions,
    attempt: int,
    value: Any = None,
    exc: BaseException | None = None,
) -> ToolResult | float:
    """The result of an attempt, or the delay before retrying it."""
    tool = pending.tool
    assert tool is not None
    if isinstance(exc, _TimedOut):
        return _timeout_result(pending, options.tool_timeout)
    if exc is not None:
        delay = options.retry_delay(attempt, exc)
        if delay is not None:
            return delay
        try:
            if pending.prepared is not None:
                return pending.prepared.error_result(exc)  # scrubs context and preset values
            return tool.error_result(exc)
        except Exception as describing:  # e.g. the exception's __str__ raises
            return _undescribable_result(pending, exc, describing)
    return tool.to_result(value)


def _undescribable_result(
    pending: PendingCall, exc: BaseException, describing: BaseException
) -> ToolResult:
    """The error result for a tool whose exception cannot be turned into text."""
    return ToolResult.error(
        f"Tool {pending.call.name!r} failed: {type(exc).__name__} (its message could not be "
        f"read: {type(describing).__name__} while formatting it).",
        kind="exception",
        exception=exc,
    )


def _loop_running() -> bool:
    """True when this thread runs an event loop (e.g. ``run()`` called from async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _call_with_timeout(function: Callable[[], Any], timeout: float | None) -> Any:
    """Run ``function`` in a daemon thread; raise ``_TimedOut`` if it does not finish in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as exc:  # delivered to the caller below
            box["exc"] = exc

    worker = threading.Thread(target=target, daemon=True, name="harness-tool")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise _TimedOut()
    if "exc" in box:
        raise box["exc"]
    return box.get("value")


def _execute_one_sync(pending: PendingCall, options: LoopOptions) -> Outcome:
    if pending.prepared is None:
        assert pending.immediate is not None
        return pending.immediate, 0
    prepared = pending.prepared
    attempt = 0
    while True:
        attempt += 1
        try:
            if options.tool_timeout is None and not (prepared.is_async and _loop_running()):
                value = prepared.run_sync()
            else:  # in a thread: for the deadline, or to give an async tool its own loop
                value = _call_with_timeout(prepared.run_sync, options.tool_timeout)
        except Exception as exc:
            outcome = _settle(pending, options, attempt, exc=exc)
        else:
            outcome = _settle(pending, options, attempt, value=value)
        if isinstance(outcome, ToolResult):
            return outcome, attempt
        time.sleep(outcome)


def execute_sync(
    pending: Sequence[PendingCall],
    options: LoopOptions,
    pool: Callable[[], ThreadPoolExecutor],
) -> list[Outcome]:
    """Execute calls; several runnable calls run concurrently on ``pool()`` threads."""
    if len(pending) == 1:
        return [_execute_one_sync(pending[0], options)]
    runnable = sum(1 for p in pending if p.prepared is not None)
    if runnable > 1 and options.parallel_tool_calls:
        executor = pool()
        futures = [executor.submit(_execute_one_sync, p, options) for p in pending]
        return [f.result() for f in futures]
    return [_execute_one_sync(p, options) for p in pending]


async def _await_with_timeout(awaitable: Awaitable[Any], timeout: float) -> Any:
    """Await with a deadline; a ``TimeoutError`` raised by the tool itself stays an exception."""
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise _TimedOut()
    return task.result()


async def _execute_one_async(pending: PendingCall, options: LoopOptions, threaded: bool) -> Outcome:
    if pending.prepared is None:
        assert pending.immediate is not None
        return pending.immediate, 0
    prepared = pending.prepared
    attempt = 0
    while True:
        attempt += 1
        try:
            if prepared.is_async:
                awaitable = prepared.run_async()
            elif threaded or options.tool_timeout is not None:
                awaitable = asyncio.to_thread(prepared.run_sync)
            else:
                awaitable = prepared.run_async()
            if options.tool_timeout is None:
                value = await awaitable
            else:
                value = await _await_with_timeout(awaitable, options.tool_timeout)
        except Exception as exc:
            outcome = _settle(pending, options, attempt, exc=exc)
        else:
            outcome = _settle(pending, options, attempt, value=value)
        if isinstance(outcome, ToolResult):
            return outcome, attempt
        await asyncio.sleep(outcome)


async def execute_async(pending: Sequence[PendingCall], options: LoopOptions) -> list[Outcome]:
    """Execute calls; several runnable calls run concurrently (sync tools in threads)."""
    runnable = sum(1 for p in pending if p.prepared is not None)
    if runnable > 1 and options.parallel_tool_calls:
        return list(await asyncio.gather(*(_execute_one_async(p, options, True) for p in pending)))
    return [await _execute_one_async(p, options, False) for p in pending]
