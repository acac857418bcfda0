"""An async tool called from sync code (``run``): a private event loop for it.

``asyncio.run`` would cancel every task the tool left behind when its coroutine
returns, so an async tool that reports back from ``asyncio.create_task`` (the usual
way to start background work and return ``ToolResult.started()``) would never report:
the run would wait out its whole completion deadline. Here the tool's coroutine runs on
a fresh loop; when it returns and tasks are still pending, the loop is handed to a
daemon thread that runs them (and the tasks they start) to the end, then closes it.
The call's result is returned at once either way.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any

__all__ = ["run_awaitable"]


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def run_awaitable(awaitable: Awaitable[Any]) -> Any:
    """Await ``awaitable`` on a private loop; tasks it leaves running keep running."""
    loop = asyncio.new_event_loop()
    try:
        value = loop.run_until_complete(_await(awaitable))
    except BaseException:
        _cancel_all(loop)
        _close(loop)
        raise
    if _pending(loop):
        thread = threading.Thread(
            target=_drain, args=(loop,), daemon=True, name="harness-async-tool-tasks"
        )
        thread.start()
    else:
        _close(loop)
    return value


def _pending(loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks(loop) if not task.done()]


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Run the tool's leftover tasks (and those they start) to the end, then close."""
    try:
        while tasks := _pending(loop):
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    finally:
        _close(loop)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = _pending(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does at the end: async generators and the executor, then close."""
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
