"""Running pending tool calls: retries, backoff and timeouts, sync and async.

The decision of what an outcome means (``_settle``) is written once; the two
runners only differ in how they wait.

The timeout guarantee (``tool_timeout=T``): the call's timeout result arrives T seconds
after the call started (plus at most ``CANCEL_GRACE`` for an async tool to honour its
cancellation), and the run never waits for a tool that missed its deadline. A sync tool
(any tool under ``run``) runs in a daemon thread that is left running; it neither
delays ``arun``'s return, nor ``asyncio.run()``'s shutdown, nor interpreter exit. An
async tool is cancelled; if it swallows the cancellation it is left running as a task.
An async tool that blocks the event loop (``time.sleep``) cannot be interrupted by
anything on that loop: its result is replaced by the timeout result once it returns.
Each case emits ``ToolAbandoned``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness._errors import LoopSignal
from harness.loop._calls import PendingCall
from harness.loop._events import ToolAbandoned
from harness.loop._options import LoopOptions
from harness.loop._telemetry import logger
from harness.tools import ToolResult

__all__ = [
    "CANCEL_GRACE",
    "ToolTimedOut",
    "abandoned_events",
    "execute_async",
    "execute_sync",
    "signal_result",
]

Outcome = tuple[ToolResult, int]

_log = logger.getChild("tools")

CANCEL_GRACE = 0.25
"""Seconds an async tool gets to finish after its timeout cancelled it."""


class ToolTimedOut(Exception):
    """Kept as ``exception`` of a timeout result: how the call missed its deadline."""

    def __init__(
        self,
        timeout: float,
        *,
        still_running: str | None = None,
        blocked_loop_seconds: float | None = None,
    ) -> None:
        self.timeout = timeout
        self.still_running = still_running
        """``"thread"`` or ``"task"`` when the tool was left running, else ``None``."""
        self.blocked_loop_seconds = blocked_loop_seconds
        """Set when an async tool blocked the event loop past the deadline."""
        if blocked_loop_seconds is not None:
            detail = f"it blocked the event loop for {blocked_loop_seconds:.2f}s"
        elif still_running is not None:
            detail = f"it was left running in a {still_running}"
        else:
            detail = "it was cancelled"
        super().__init__(f"the tool missed its {timeout:g}s timeout; {detail}")


def signal_result(name: str, signal: LoopSignal) -> ToolResult:
    """The placeholder result of a call that raised a ``LoopSignal``; the core ends the run
    with the signal once every call of the turn is recorded."""
    return ToolResult(
        content=f"Tool {name!r} interrupted the run with {type(signal).__name__}; "
        "the run ended before its result was read.",
        is_error=True,
        error_kind="signal",
        exception=signal,
        child_traces=(signal.trace,) if signal.trace is not None else (),  # a nested run's
    )


def _timeout_result(pending: PendingCall, exc: ToolTimedOut) -> ToolResult:
    return ToolResult.error(
        f"Tool {pending.call.name!r} timed out after {exc.timeout:g}s. "
        "Try again with a smaller request or use another tool.",
        kind="timeout",
        exception=exc,
    )


def abandoned_events(
    pending: Sequence[PendingCall], outcomes: Sequence[Outcome], iteration: int
) -> list[ToolAbandoned]:
    """A ``ToolAbandoned`` event for each call that missed its deadline."""
    if len(outcomes) == 1 == len(pending) and outcomes[0][0].error_kind != "timeout":
        return []  # the common case, without the loop
    events = []
    for item, (result, _) in zip(pending, outcomes, strict=True):
        exc = result.exception
        if result.error_kind == "timeout" and isinstance(exc, ToolTimedOut):
            events.append(
                ToolAbandoned(
                    iteration=iteration,
                    call_id=item.call.id,
                    name=item.call.name,
                    timeout=exc.timeout,
                    still_running=exc.still_running,
                    blocked_loop_seconds=exc.blocked_loop_seconds,
                    message=str(exc),
                )
            )
    return events


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
    if exc is None:  # the common case first
        return tool.hidden_from_model(tool.to_result(value))  # presets never reach the model
    if isinstance(exc, ToolTimedOut):
        return _timeout_result(pending, exc)
    if isinstance(exc, LoopSignal):  # control flow for the loop: never retried, never read
        return signal_result(pending.call.name, exc)
    delay = options.retry_delay(attempt, exc)
    if delay is not None:
        return delay
    try:
        if pending.prepared is not None:
            return pending.prepared.error_result(exc)  # scrubs context and preset values
        return tool.error_result(exc)
    except Exception as describing:  # e.g. the exception's __str__ raises
        return _undescribable_result(pending, exc, describing)


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
    """Run ``function`` in a daemon thread; raise ``ToolTimedOut`` if it does not finish in
    time (the thread is left running: daemon threads never delay the interpreter's exit)."""
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
        assert timeout is not None
        raise ToolTimedOut(timeout, still_running="thread")
    if "exc" in box:
        raise box["exc"]
    return box.get("value")


def _log_start(pending: PendingCall, is_async: bool) -> float:
    """Log a tool's start; return the start time for ``_log_end``."""
    if _log.isEnabledFor(logging.DEBUG):
        kind = "async tool" if is_async else "tool"
        _log.debug("%s %r (call %s) started", kind, pending.call.name, pending.call.id)
    return time.perf_counter()


def _log_end(pending: PendingCall, outcome: Outcome, started: float) -> Outcome:
    """Log how a call ended and how long it took (never its arguments or values)."""
    result, attempts = outcome
    if not result.is_error and not _log.isEnabledFor(logging.DEBUG):
        return outcome
    elapsed = (time.perf_counter() - started) * 1000
    name, call_id = pending.call.name, pending.call.id
    if not result.is_error:
        _log.debug(
            "tool %r (call %s) completed in %.1f ms (%d attempt(s))",
            name,
            call_id,
            elapsed,
            attempts,
        )
    else:
        cause = f"{type(result.exception).__name__}" if result.exception is not None else "-"
        _log.warning(
            "tool %r (call %s) failed in %.1f ms (%d attempt(s)): %s, %s",
            name,
            call_id,
            elapsed,
            attempts,
            result.error_kind,
            cause,
        )
    return outcome


def _execute_one_sync(pending: PendingCall, options: LoopOptions) -> Outcome:
    if pending.prepared is None:
        assert pending.immediate is not None
        return pending.immediate, 0
    started = _log_start(pending, pending.prepared.is_async)
    return _log_end(pending, _run_one_sync(pending, options), started)


def _run_one_sync(pending: PendingCall, options: LoopOptions) -> Outcome:
    assert pending.prepared is not None
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


def _in_daemon_thread(function: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run ``function`` in a daemon thread; its outcome resolves the returned future.

    Unlike ``asyncio.to_thread`` (the loop's default executor), a thread left running
    after a timeout does not hold up ``asyncio.run()``'s executor shutdown.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def deliver(value: Any, exc: BaseException | None) -> None:
        if future.done():
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(value)

    def target() -> None:
        try:
            value, exc = function(), None
        except BaseException as error:  # delivered to the awaiting coroutine
            value, exc = None, error
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(deliver, value, exc)

    context = contextvars.copy_context()  # like asyncio.to_thread: the tool sees contextvars
    threading.Thread(target=context.run, args=(target,), daemon=True, name="harness-tool").start()
    return future


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" warning


async def _await_with_timeout(awaitable: Awaitable[Any], timeout: float, threaded: bool) -> Any:
    """Await with a deadline; a ``TimeoutError`` raised by the tool itself stays an exception."""
    task = asyncio.ensure_future(awaitable)
    started = time.monotonic()
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if done:
        elapsed = time.monotonic() - started
        if not threaded and elapsed > timeout + CANCEL_GRACE:
            # the loop could not fire the deadline: the tool blocked it (time.sleep)
            _consume(task)
            raise ToolTimedOut(timeout, blocked_loop_seconds=elapsed)
        return task.result()
    task.cancel()
    if threaded:  # a thread cannot be cancelled: leave it, never wait for it
        task.add_done_callback(_consume)
        raise ToolTimedOut(timeout, still_running="thread")
    done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE)
    if not done:  # it swallowed the cancellation: leave it running on the loop
        task.add_done_callback(_consume)
        raise ToolTimedOut(timeout, still_running="task")
    _consume(task)
    raise ToolTimedOut(timeout)


async def _execute_one_async(pending: PendingCall, options: LoopOptions, threaded: bool) -> Outcome:
    if pending.prepared is None:
        assert pending.immediate is not None
        return pending.immediate, 0
    started = _log_start(pending, pending.prepared.is_async)
    return _log_end(pending, await _run_one_async(pending, options, threaded), started)


async def _run_one_async(pending: PendingCall, options: LoopOptions, threaded: bool) -> Outcome:
    assert pending.prepared is not None
    prepared = pending.prepared
    timeout = options.tool_timeout
    attempt = 0
    while True:
        attempt += 1
        try:
            in_thread = not prepared.is_async and (threaded or timeout is not None)
            if prepared.is_async or not in_thread:
                awaitable: Awaitable[Any] = prepared.run_async()
            elif timeout is not None:
                awaitable = _in_daemon_thread(prepared.run_sync)
            else:
                awaitable = asyncio.to_thread(prepared.run_sync)
            if timeout is None:
                value = await awaitable
            else:
                value = await _await_with_timeout(awaitable, timeout, in_thread)
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
