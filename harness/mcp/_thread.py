"""A private event loop in a daemon thread: where MCP sessions live.

MCP client sessions are async and bound to the event loop that opened them, while the
harness runs tools from the sync driver (threads, a fresh loop per async call) and from
the async driver. Each ``McpServer`` therefore owns one loop thread; callers submit
coroutines to it from any thread or loop and wait on the returned future.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")
_STOP_SECONDS = 5.0


class LoopThread:
    """An anyio event loop in a daemon thread, driven through a ``BlockingPortal``."""

    def __init__(self, name: str) -> None:
        import anyio
        from anyio.from_thread import BlockingPortal

        ready: Future[BlockingPortal] = Future()

        async def serve() -> None:
            async with BlockingPortal() as portal:
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        def main() -> None:
            try:
                anyio.run(serve)
            except BaseException as exc:  # pragma: no cover - the loop itself failed to start
                if not ready.done():
                    ready.set_exception(exc)

        self._thread = threading.Thread(target=main, daemon=True, name=f"harness-mcp-{name}")
        self._thread.start()
        self._portal = ready.result()
        self._stopped = False

    def submit(self, func: Callable[..., Awaitable[T]], *args: Any) -> Future[T]:
        """Start ``func(*args)`` on the loop; the future cancels the task when cancelled."""
        return self._portal.start_task_soon(func, *args)

    def stop(self) -> None:
        """Cancel every task (closing the sessions) and end the thread; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(RuntimeError):  # the loop is already gone
            self._portal.call(self._portal.stop, True)
        self._thread.join(_STOP_SECONDS)

    @property
    def stopped(self) -> bool:
        """True after ``stop()``."""
        return self._stopped
