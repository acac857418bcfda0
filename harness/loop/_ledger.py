"""The loop's side of async tool calls: what is delivered when, what is lost, and the
record of both.

A tool returning ``ToolResult.started(...)`` reports back later through the run's
``CompletionQueue`` (harness/loop/_completions.py, thread-safe). The core keeps a
``CompletionLedger`` over that queue and tells it what happens on the loop's side:

- a call started async work (``started``) or returned a finished result (``finished``);
- the next request is built: completions that arrived become follow-up messages in the
  history (``deliver``);
- the model answered, or the end-of-run wait ended (``lose_expired`` first): what is
  still outstanding (``outstanding``) is calls running within their deadline (the run
  waits), completions that arrived (a further turn delivers them), or nothing (every
  other call is lost); the core's after-answer decision turns that into its move;
- the run ends another way: ``close`` (a ``return_direct`` tool), ``fail`` (an error).

Every async call ends exactly once, delivered or lost: one ``CompletionDelivered`` or
``CompletionLost`` event and one ``CompletionRecord`` in ``Trace.completions``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from harness.loop._channels import model_content, user_text
from harness.loop._completions import AsyncCall, CompletionQueue, LostReason, follow_up_text
from harness.loop._events import (
    CompletionDelivered,
    CompletionLost,
    CompletionQueued,
    CompletionsAwaited,
    Event,
)
from harness.loop._options import LoopOptions
from harness.loop._telemetry import logger
from harness.loop._trace_builder import TraceBuilder
from harness.messages import Message, ToolCall, UserMessage
from harness.tools import ToolResult

__all__ = ["LOST", "CompletionLedger", "Outstanding"]

_log = logger.getChild("loop")

LOST: dict[LostReason, str] = {
    "deadline": "it did not report back before its deadline at the end of the run",
    "run_ended": "the run ended before it reported back (pending_completions='lost')",
    "return_direct": "a return_direct tool ended the run before the model could read it",
    "max_iterations": "it arrived after the last turn allowed (max_iterations={max_iterations})",
    "run_failed": "the run ended with an error before the model could read it",
    "not_async": (
        "the tool reported back, but the call returned a finished result, not "
        "ToolResult.started(...); the completion is dropped"
    ),
}
"""Why a completion was lost, for ``CompletionLost.message``."""

Outstanding = Literal["running", "arrived", "none"]
"""What of a run's async calls is outstanding once the model answered (``outstanding``)."""

Notify = Callable[[str, str, str], None]
"""Tell the user ``(call id, tool name, text)``."""


class CompletionLedger:
    """The loop's record of one run's async calls, over its ``CompletionQueue``."""

    def __init__(
        self,
        queue: CompletionQueue,
        *,
        history: list[Message],
        trace: TraceBuilder,
        emit: Callable[[Event], None],
        notify: Notify,
        options: LoopOptions,
        run_id: str,
    ) -> None:
        self.queue = queue
        self._history = history
        self._trace = trace
        self._emit = emit
        self._notify = notify
        self._options = options
        self._run_id = run_id
        self._queued: list[AsyncCall] = []
        """Completions noticed, delivered with the next request."""
        self.turn_start = 0
        """Iterations made before the current user turn (``max_iterations`` counts a turn)."""

    def started(self, call: ToolCall, result: ToolResult, iteration: int) -> None:
        """``call`` returned ``ToolResult.started(...)``: its result follows later."""
        self.queue.register(call.id, call.name, result, iteration)
        _log.info(
            "run %s iteration %d: %s (call %s) started async work",
            self._run_id,
            iteration,
            call.name,
            call.id,
        )

    def finished(self, call_id: str, iteration: int) -> None:
        """Call ``call_id`` returned a finished result: a completion it sent is lost."""
        entry = self.queue.not_async(call_id)
        if entry is not None:
            self._record_lost([entry], iteration)

    def notice(self, iteration: int) -> None:
        """Queue the completions that arrived since last time (``CompletionQueued``)."""
        for entry in self.queue.take_arrived():
            self._queued.append(entry)
            result = self._reported(entry)
            self._emit(
                CompletionQueued(
                    iteration=iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    is_error=result.is_error,
                )
            )

    def deliver(self, iteration: int) -> None:
        """Add each queued completion to the history as a follow-up message attributed to
        its tool and call id, and tell the user unless it is silent."""
        self.notice(iteration)
        queued, self._queued = self._queued, []
        for entry in queued:
            result = self._reported(entry)
            content = model_content(result, entry.name)
            self._history.append(
                UserMessage(
                    content=follow_up_text(
                        entry.name, entry.call_id, content, is_error=result.is_error
                    )
                )
            )
            self.queue.delivered(entry)
            self._trace.children(result.child_traces)
            self._trace.completion(entry, "delivered", iteration=iteration, content=content)
            _log.info(
                "run %s iteration %d: async call %s of %s delivered",
                self._run_id,
                iteration,
                entry.call_id,
                entry.name,
            )
            self._emit(
                CompletionDelivered(
                    iteration=iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    started_iteration=entry.started_iteration,
                )
            )
            for_user = user_text(result)
            if for_user is not None:
                self._notify(entry.call_id, entry.name, for_user)

    def outstanding(self, iteration: int) -> Outstanding:
        """The model answered: calls still ``"running"`` within their deadline (their wait
        starts, ``CompletionsAwaited``), completions ``"arrived"`` for a further turn to
        deliver (while the turn has iterations left), or ``"none"``, with every call still
        open recorded as lost."""
        pending = self.queue.pending()  # first: nothing pending means no new arrival
        self.notice(iteration)
        if pending and self._options.pending_completions == "lost":
            self._record_lost(self.queue.lose("run_ended"), iteration)
            self.notice(iteration)  # those that arrived meanwhile are not lost
            pending = []
        if pending:
            waiting, longest = self.queue.start_wait(self._options.completion_deadline)
            if waiting:
                self._emit(
                    CompletionsAwaited(
                        iteration=iteration,
                        call_ids=tuple(e.call_id for e in waiting),
                        deadline=longest,
                    )
                )
                return "running"
            self.notice(iteration)
        if self._queued:
            if iteration - self.turn_start < self._options.max_iterations:
                return "arrived"
            queued, self._queued = self._queued, []
            self.queue.lose_entries(queued, "max_iterations")
            self._record_lost(queued, iteration)
        self._record_lost(self.queue.close("run_ended"), iteration)
        return "none"

    def lose_expired(self, iteration: int) -> None:
        """The end-of-run wait ended: calls past their deadline are lost."""
        self._record_lost(self.queue.lose("deadline", expired_only=True), iteration)

    def close(self, reason: LostReason, iteration: int) -> None:
        """The run ended before the model could read any more: every open call is lost."""
        self._queued = []
        self._record_lost(self.queue.close(reason), iteration)

    def fail(self, iteration: int) -> None:
        """The run failed: every open call is lost (``run_failed``). An observer raising
        here is logged, not raised (the run's own error is the one raised), and the
        other calls are still recorded and announced."""
        self._queued = []
        for entry in self.queue.close("run_failed"):
            try:
                self._record_lost([entry], iteration)
            except Exception:
                _log.exception(
                    "run %s: an observer failed while recording lost completions (call %s)",
                    self._run_id,
                    entry.call_id,
                )

    def _record_lost(self, entries: Sequence[AsyncCall], iteration: int) -> None:
        """Record lost completions in the trace, then emit ``CompletionLost`` for each (the
        trace has them all even when an observer raises and ends the run)."""
        lost = [(entry, entry.reason or "run_ended") for entry in entries]
        for entry, reason in lost:
            self._trace.completion(entry, "lost", iteration=iteration, reason=reason)
        for entry, reason in lost:
            message = f"async call {entry.call_id!r} of tool {entry.name!r}: " + LOST[
                reason
            ].format(max_iterations=self._options.max_iterations)
            _log.warning("run %s: %s", self._run_id, message)
            self._emit(
                CompletionLost(
                    iteration=iteration,
                    call_id=entry.call_id,
                    name=entry.name,
                    reason=reason,
                    message=message,
                )
            )

    @staticmethod
    def _reported(entry: AsyncCall) -> ToolResult:
        """The result of a call that reported back (every noticed or queued one did)."""
        if entry.result is None:  # the queue hands out arrived calls only
            raise AssertionError(f"async call {entry.call_id!r} has no result")
        return entry.result
