"""The trace builder: what the core records of a run, as the run goes.

The core tells it what happened (an iteration opened, the model answered, a call was
answered, the toolset changed, an async call ended); it keeps the open iteration and
closes it into a frozen ``IterationRecord`` when the next one begins or the run ends.
``trace`` is the one ``Trace`` every reader uses (harness/loop/_trace.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from harness.loop import _fast as fast
from harness.loop._completions import AsyncCall
from harness.loop._model import Usage
from harness.loop._tool_states import TurnToolStates
from harness.loop._trace import CallRecord, ChangeRecord, CompletionRecord, Trace
from harness.loop._usage import add_usage
from harness.messages import Message, ToolCall
from harness.tools import ToolResult
from harness.tools._definitions import ToolChoice

__all__ = ["TraceBuilder"]


class TraceBuilder:
    """Builds one run's ``Trace``: the open iteration's parts, closed into a record."""

    __slots__ = (
        "_answer",
        "_calls",
        "_changes",
        "_choice",
        "_continued",
        "_finish_reason",
        "_index",
        "_offered",
        "_turn",
        "tool_states",
        "trace",
    )

    def __init__(self, initial_tools: tuple[str, ...], history: Sequence[Message]) -> None:
        self.trace = Trace(initial_tools=initial_tools)
        self.tool_states = TurnToolStates(history)
        """Each iteration's native tool states (harness/loop/_tool_states.py); the core
        tells it of requests, answers and reveals."""
        self._index: int | None = None
        """The open iteration (``None`` between ``close`` and ``open``)."""
        self._offered: tuple[str, ...] = ()
        self._calls: list[CallRecord] = []
        self._changes: list[ChangeRecord] = []
        """The open iteration's changes; before it opens, those of its before-turn hooks."""
        self._answer: str | None = None
        self._finish_reason: str | None = None
        self._turn = 1
        self._choice: ToolChoice | None = None
        self._continued = False

    @property
    def before_first_request(self) -> bool:
        """No request was built yet: a change now is the run's initial set-up."""
        return self._index is None and not self.trace.iterations

    def open(
        self,
        index: int,
        offered: tuple[str, ...],
        turn: int = 1,
        tool_choice: ToolChoice | None = None,
    ) -> None:
        """Open iteration ``index`` of user turn ``turn``, offering ``offered`` with
        ``tool_choice``; the changes made since the last one closed belong to it."""
        self._index = index
        self._offered = offered
        self._turn = turn
        self._choice = tool_choice

    def continued(self) -> None:
        """The open iteration's text answer did not end the turn."""
        self._continued = True

    def close(self) -> None:
        """Close the open iteration into an ``IterationRecord`` (if one is open)."""
        if self._index is not None:
            # Two spelled-out constructions, not one with **native fields: the keyword
            # splat costs about 1 µs per iteration on the plain path (loop_overhead, N=1000).
            if self.tool_states.states is None:  # a plain request (the common case)
                record = fast.IterationRecord(
                    index=self._index,
                    offered=self._offered,
                    calls=tuple(self._calls),
                    changes=tuple(self._changes),
                    answer=self._answer,
                    finish_reason=self._finish_reason,
                    turn=self._turn,
                    tool_choice=self._choice,
                    continued=self._continued,
                )
            else:
                states, found = self.tool_states.close()
                record = fast.IterationRecord(
                    index=self._index,
                    offered=self._offered if states is None else states.offered,
                    calls=tuple(self._calls),
                    changes=tuple(self._changes),
                    answer=self._answer,
                    finish_reason=self._finish_reason,
                    turn=self._turn,
                    tool_choice=self._choice,
                    continued=self._continued,
                    tools=states,
                    discovered=found.discovered,
                    searches=found.searches,
                )
            self.trace.iterations.append(record)
            self._index = None
            self._calls = []
            self._answer = self._finish_reason = None
            self._continued = False
        self._changes = []

    def answer(self, text: str | None, finish_reason: str | None) -> None:
        """The model's text and finish reason for the open iteration."""
        self._answer = text
        self._finish_reason = finish_reason

    def call(
        self, call: ToolCall, result: ToolResult, *, content: str, attempts: int, is_async: bool
    ) -> None:
        """A call of the open iteration was answered with ``content`` (what the model reads)."""
        self._calls.append(
            fast.CallRecord(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                content=content,
                is_error=result.is_error,
                error_kind=result.error_kind,
                value=result.value,
                exception=result.exception,
                attempts=attempts,
                user_content=result.user_content,
                silent=result.silent,
                children=result.child_traces,
                is_async=is_async,
            )
        )

    def not_run(self, call: ToolCall, result: ToolResult) -> None:
        """A call of the open iteration never ran: the run ended first (``result`` says so)."""
        self._calls.append(
            CallRecord(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                content=result.content,
                is_error=True,
                error_kind=result.error_kind,
                attempts=0,
            )
        )

    def change(self, record: ChangeRecord) -> None:
        """A toolset change, in the open iteration (or the next one, before it opens)."""
        self._changes.append(record)

    def usage(self, model: str | None, usage: Usage) -> None:
        """Token usage of ``model`` (a response's, or a nested run's)."""
        add_usage(self.trace.usage, model, usage)

    def children(self, traces: Sequence[Any]) -> None:
        """Traces of nested runs (a handoff, or an async call's result)."""
        self.trace.children.extend(traces)

    def completion(
        self,
        entry: AsyncCall,
        status: Literal["delivered", "lost"],
        *,
        iteration: int,
        content: str | None = None,
        reason: str | None = None,
    ) -> None:
        """How the async call ``entry`` ended: delivered with ``content``, or lost for
        ``reason``."""
        result = entry.result
        reported: Mapping[str, Any] = (
            {}
            if result is None
            else {
                "is_error": result.is_error,
                "error_kind": result.error_kind,
                "value": result.value,
                "exception": result.exception,
                "user_content": result.user_content,
                "silent": result.silent,
            }
        )
        self.trace.completions.append(
            CompletionRecord(
                call_id=entry.call_id,
                name=entry.name,
                started_iteration=entry.started_iteration,
                status=status,
                iteration=iteration,
                content=content,
                reason=reason,
                **reported,
            )
        )
