"""Where a tool result goes: the model (``content``), the user (``user_content``), or
neither (``silent``), and what the model reads when the content is empty.

An empty or whitespace-only model-facing content is never sent as is (providers reject
or mishandle empty tool messages, and the model cannot tell "nothing" from "lost"):

- a successful result reads ``EMPTY_RESULT``, ``"(empty result)"``;
- an error result reads its exception's text when there is one, else ``EMPTY_ERROR``
  with the tool's name.

The trace records what the model read; ``CallRecord.value`` keeps the tool's value.
What reaches the user goes through the run's ``UserChannel``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from harness._errors import UsageError
from harness.loop._events import Event, UserNotified
from harness.tools import ToolResult

if TYPE_CHECKING:
    from harness.loop._calls import PendingCall

__all__ = ["EMPTY_ERROR", "EMPTY_RESULT", "UserChannel", "model_content", "user_text"]

EMPTY_RESULT = "(empty result)"
"""What the model reads for a successful result with empty content."""

EMPTY_ERROR = "(empty error result: tool {name!r} failed without a message)"
"""What the model reads for an error result with empty content and no exception text."""


def model_content(result: ToolResult, name: str) -> str:
    """The text the model reads for ``result`` of tool ``name``: never empty, unless the
    result reveals tools (``ToolResult.reveals``: the references are what it says)."""
    content = result.content
    if content.strip():
        return content
    if not result.is_error:
        # a result that reveals tools says it with them (tool references): no filler
        return content if result.reveals else EMPTY_RESULT
    if result.exception is not None:
        try:
            text = str(result.exception).strip()
        except Exception:  # an exception whose __str__ raises
            text = ""
        if text:
            return f"Tool {name!r} failed: {type(result.exception).__name__}: {text}"
    return EMPTY_ERROR.format(name=name)


def user_text(result: ToolResult) -> str | None:
    """The text for the user, or ``None`` (no user content, a blank one, or silent)."""
    if result.silent or result.user_content is None or not result.user_content.strip():
        return None
    return result.user_content


class UserChannel:
    """What a run tells the user, in order: results' ``user_content`` and the progress
    chunks running tools send through their ``Emitter`` (``RunResult.user_outputs``, and
    one ``UserNotified`` event each).

    Progress arrives from tool threads while the calls run; one lock keeps it in order
    with the loop's own messages.
    """

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self.outputs: list[str] = []
        """Every text sent, in order."""
        self._emit = emit
        self._lock = threading.RLock()
        self._running: Sequence[PendingCall] = ()
        self._iteration = 0

    def running(self, calls: Sequence[PendingCall], iteration: int) -> None:
        """``calls`` of ``iteration`` are handed to the driver: their ``Emitter`` may send."""
        self._running = calls  # no chunk can come before: the calls have not run yet
        self._iteration = iteration

    def stopped(self) -> None:
        """The running calls returned (or the run ended): their ``Emitter`` closes (a
        chunk being sent finishes first)."""
        with self._lock:
            self._running = ()

    def progress(self, call_id: str, name: str, text: str) -> None:
        """An ``Emitter``'s chunk (the ``ProgressSink`` of the run's call contexts)."""
        with self._lock:
            if not any(pending.call.id == call_id for pending in self._running):
                raise UsageError(
                    f"the Emitter of call {call_id!r} (tool {name!r}) was used after the call "
                    "returned (or the run ended); progress can only be sent while the call "
                    "runs: send a final message in the result's user_content instead"
                )
            self.send(self._iteration, call_id, name, text, progress=True)

    def send(
        self, iteration: int, call_id: str, name: str, text: str, *, progress: bool = False
    ) -> None:
        """Send ``text`` from call ``call_id`` of tool ``name`` to the user."""
        with self._lock:
            self.outputs.append(text)
            self._emit(
                UserNotified(
                    iteration=iteration,
                    call_id=call_id,
                    name=name,
                    content=text,
                    progress=progress,
                )
            )
