"""The run's queue of pending completions: async tool calls that report back later.

A tool returns ``ToolResult.started(...)`` and later calls its completion callback
(``CallContext.completion``) from a thread or an asyncio task. The callback lands
here (thread-safe); the loop core picks results up between turns and delivers each
as a follow-up message (``follow_up_text``) on the next model request.

The life of one async call (``AsyncCall.state``)::

    early ──(tool returns started)──> arrived        the callback came before the result
    pending ──(callback)──> arrived ──(loop notices)──> queued ──(next request)──> delivered
    pending ──(deadline / run ends / return_direct / max_iterations / failure)──> lost
    early ──(the call's result was not async, or the run ended)──> lost (``not_async``)

Every started call ends exactly once: delivered or lost (``CompletionDelivered`` /
``CompletionLost``, one ``CompletionRecord`` in ``Trace.completions``). A callback
after that raises ``CompletionError`` (twice) or ``LateCompletion`` (settled as lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Callable
from typing import Literal

from harness._errors import CompletionError, LateCompletion
from harness.tools import ToolResult

__all__ = [
    "FOLLOW_UP",
    "AsyncCall",
    "CompletionQueue",
    "LostReason",
    "follow_up_source",
    "follow_up_text",
]

FOLLOW_UP = "[Async result] tool {name!r} (call {call_id}) {verb}:\n{content}"
"""The follow-up message the model reads: the tool, the original call id, then the result."""

_FOLLOW_UP_HEAD = re.compile(
    r"\A\[Async result\] tool '(?P<name>[^']*)' \(call (?P<call_id>.*?)\) "
    r"(?P<verb>reported back|failed):\n"
)

State = Literal["early", "pending", "arrived", "queued", "delivered", "lost"]
"""Where an async call is in its life (the diagram above)."""

LostReason = Literal[
    "deadline", "run_ended", "return_direct", "max_iterations", "run_failed", "not_async"
]
"""Why an async call's result never reached the model (``CompletionLost.reason``)."""


def follow_up_text(name: str, call_id: str, content: str, *, is_error: bool) -> str:
    """The follow-up message text for the result ``content`` of call ``call_id``."""
    verb = "failed" if is_error else "reported back"
    return FOLLOW_UP.format(name=name, call_id=call_id, verb=verb, content=content)


def follow_up_source(text: str | None) -> tuple[str, str] | None:
    """``(tool name, call id)`` of a follow-up message's text, or ``None`` for other text."""
    if not text:
        return None
    found = _FOLLOW_UP_HEAD.match(text)
    return (found["name"], found["call_id"]) if found else None


@dataclasses.dataclass(slots=True, eq=False)
class AsyncCall:
    """One async call of the run and what became of it (changed under the queue's lock)."""

    call_id: str
    name: str
    """The tool that started the work."""
    state: State
    started_iteration: int = 0
    """The iteration of the call (0 until the loop records it: an early completion)."""
    result: ToolResult | None = None
    """What it reported back, once it did."""
    deadline: float | None = None
    """The call's own ``completion_deadline`` (seconds), if it set one."""
    wait_until: float | None = None
    """Monotonic time the end-of-run wait gives up on it (set when a wait starts)."""
    reason: LostReason | None = None
    """Why it was lost."""


class CompletionQueue:
    """Async calls of one run and their completions; the ``CompletionSink`` of its contexts.

    ``complete``/``is_open`` run on any thread; every other method runs on the loop's
    side. One lock guards the entries; waiters (a thread in ``wait``, a task in
    ``wait_async``) are woken by each arrival.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._arrival = threading.Condition(self._lock)
        self._entries: dict[str, AsyncCall] = {}
        self._arrived: list[AsyncCall] = []
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._closed = False
        self.active = False
        """True once any call started async work or reported back (a cheap check for the
        loop's hot path: runs without async tools never take the lock)."""

    # -- the tool's side (any thread) ---------------------------------------------------

    def complete(self, call_id: str, tool_name: str, result: ToolResult) -> None:
        """Accept the completion of ``call_id``; ``CompletionError`` if it cannot be."""
        with self._lock:
            entry = self._entries.get(call_id)
            if entry is None:
                if self._closed:
                    raise LateCompletion(
                        f"the completion of call {call_id!r} (tool {tool_name!r}) came after "
                        "the run ended; nothing is delivered (check completion.is_open first)",
                        call_id=call_id,
                        tool_name=tool_name,
                        reason="run_ended",
                    )
                # the callback beat the tool's own return: held until the loop records it
                self._entries[call_id] = AsyncCall(call_id, tool_name, "early", result=result)
                self.active = True
                return
            if entry.state == "pending":
                entry.result = result
                entry.state = "arrived"
                self._arrived.append(entry)
                self._wake()
                return
            if entry.state == "lost":
                raise LateCompletion(
                    f"the completion of call {call_id!r} (tool {entry.name!r}) came after the "
                    f"call was recorded as lost ({entry.reason}); nothing is delivered "
                    "(check completion.is_open first)",
                    call_id=call_id,
                    tool_name=entry.name,
                    reason=entry.reason or "lost",
                )
            where = {
                "early": "it is held until the call's result is recorded",
                "arrived": "it is queued for the model's next turn",
                "queued": "it is queued for the model's next turn",
                "delivered": "it was delivered to the model",
            }[entry.state]
            raise CompletionError(
                f"the completion of call {call_id!r} (tool {entry.name!r}) was called twice; "
                f"the first result is kept ({where}): report back once per call",
                call_id=call_id,
                tool_name=entry.name,
            )

    def is_open(self, call_id: str) -> bool:
        """True while a completion for ``call_id`` would be accepted."""
        with self._lock:
            entry = self._entries.get(call_id)
            if entry is None:
                return not self._closed
            return entry.result is None and entry.state in ("early", "pending")

    def _wake(self) -> None:
        """Wake every waiter (the lock is held)."""
        self._arrival.notify_all()
        for loop, future in self._async_waiters:
            # a closed event loop raises RuntimeError: nobody waits there any more
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, future)

    # -- the loop's side ----------------------------------------------------------------

    def register(self, call_id: str, name: str, result: ToolResult, iteration: int) -> None:
        """Record that call ``call_id`` started async work (its result is ``result``)."""
        with self._lock:
            self.active = True
            entry = self._entries.get(call_id)
            if entry is not None and entry.state == "early":  # reported back already
                entry.state = "arrived"
                entry.name = name
                entry.started_iteration = iteration
                entry.deadline = result.completion_deadline
                self._arrived.append(entry)
                return
            self._entries[call_id] = AsyncCall(
                call_id,
                name,
                "pending",
                started_iteration=iteration,
                deadline=result.completion_deadline,
            )

    def not_async(self, call_id: str) -> AsyncCall | None:
        """The call's result was a finished one: an early completion for it is lost."""
        with self._lock:
            entry = self._entries.get(call_id)
            if entry is None or entry.state != "early":
                return None
            entry.state = "lost"
            entry.reason = "not_async"
            return entry

    def take_arrived(self) -> list[AsyncCall]:
        """Entries that reported back since the last call, in arrival order (now queued)."""
        with self._lock:
            arrived, self._arrived = self._arrived, []
            for entry in arrived:
                entry.state = "queued"
            return arrived

    def delivered(self, entry: AsyncCall) -> None:
        """Mark a queued entry delivered."""
        with self._lock:
            entry.state = "delivered"

    def pending(self) -> list[AsyncCall]:
        """Entries still waiting for their callback."""
        with self._lock:
            return [e for e in self._entries.values() if e.state == "pending"]

    def start_wait(self, default_deadline: float) -> tuple[list[AsyncCall], float]:
        """Give each pending entry its end-of-run deadline; the entries and the longest wait."""
        with self._lock:
            now = self._clock()
            waiting = [e for e in self._entries.values() if e.state == "pending"]
            longest = 0.0
            for entry in waiting:
                if entry.wait_until is None:
                    seconds = entry.deadline if entry.deadline is not None else default_deadline
                    entry.wait_until = now + seconds
                longest = max(longest, entry.wait_until - now)
            return waiting, longest

    def lose(self, reason: LostReason, *, expired_only: bool = False) -> list[AsyncCall]:
        """Record pending entries as lost (only those past their deadline if
        ``expired_only``); a callback for them raises ``LateCompletion`` from now on."""
        with self._lock:
            now = self._clock()
            lost = []
            for entry in self._entries.values():
                if entry.state != "pending":
                    continue
                if expired_only and (entry.wait_until is None or entry.wait_until > now):
                    continue
                entry.state = "lost"
                entry.reason = reason
                lost.append(entry)
            return lost

    def lose_entries(self, entries: list[AsyncCall], reason: LostReason) -> None:
        """Record taken (queued) entries as lost."""
        with self._lock:
            for entry in entries:
                entry.state = "lost"
                entry.reason = reason

    def close(self, reason: LostReason) -> list[AsyncCall]:
        """The run is over: every entry not yet delivered or lost is lost (early ones as
        ``not_async``), and any later callback raises ``LateCompletion``."""
        with self._lock:
            self._closed = True
            self._arrived = []
            lost = []
            for entry in self._entries.values():
                if entry.state in ("delivered", "lost"):
                    continue
                entry.reason = "not_async" if entry.state == "early" else reason
                entry.state = "lost"
                lost.append(entry)
            self._wake()
            return lost

    def _remaining(self) -> float | None:
        """Seconds until the last pending deadline; ``None`` when nothing is left to wait
        for (all arrived, or no wait started). The lock is held."""
        ends = [
            e.wait_until
            for e in self._entries.values()
            if e.state == "pending" and e.wait_until is not None
        ]
        if not ends:
            return None
        return max(ends) - self._clock()

    def wait(self) -> None:
        """Block until every pending call reported back or passed its deadline."""
        with self._arrival:
            while True:
                remaining = self._remaining()
                if remaining is None or remaining <= 0:
                    return
                self._arrival.wait(remaining)

    async def wait_async(self) -> None:
        """``wait`` for ``arun``: the event loop keeps running the tools' tasks meanwhile."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                remaining = self._remaining()
                if remaining is None or remaining <= 0:
                    return
                future: asyncio.Future[None] = loop.create_future()
                waiter = (loop, future)
                self._async_waiters.append(waiter)
            try:
                await asyncio.wait((future,), timeout=remaining)
            finally:
                with self._lock:
                    self._async_waiters.remove(waiter)
                if not future.done():
                    future.cancel()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
