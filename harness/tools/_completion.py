"""The completion callback of an async tool call: how background work reports back.

A tool that returns ``ToolResult.started(...)`` finishes its work later and hands the
result to ``CallContext.completion`` (a ``Completion``), from any thread or asyncio
task. The loop (``harness.loop``) owns what happens next; this module only checks the
value and forwards it to the loop's sink, so the tool layer stays free of loop logic.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterable
from typing import Any, Protocol

from harness._errors import CompletionError
from harness._secrets import hidden_values, scrub_text
from harness.tools._result import ToolResult, unserializable_result

__all__ = ["Completion", "CompletionSink", "completion_result"]


class CompletionSink(Protocol):
    """What a ``Completion`` reports to: the run's queue of pending completions."""

    def complete(self, call_id: str, tool_name: str, result: ToolResult) -> None:
        """Accept the result of ``call_id`` (thread-safe) or raise ``CompletionError``."""

    def is_open(self, call_id: str) -> bool:
        """True while ``call_id`` may still report back."""


def completion_result(value: Any, *, call_id: str, tool_name: str) -> ToolResult:
    """``value`` as the finished result of an async call, or a ``CompletionError``.

    A ``ToolResult`` is kept as is; any other value becomes ``ToolResult.ok(value)``,
    like a tool's return value (one that cannot become JSON, an error result of kind
    ``unserializable``: the call is answered either way). Refused: another async
    result, a toolset change (the toolset belongs to the turn that made the call), an
    exception (use ``fail``), and an awaitable (await it first).
    """
    where = f"the completion of call {call_id!r} (tool {tool_name!r})"
    if isinstance(value, ToolResult):
        if value.is_async:
            raise CompletionError(
                f"{where} got another ToolResult.started(...); report the finished result "
                "(ToolResult.ok/user/plain/error or a plain value)",
                call_id=call_id,
                tool_name=tool_name,
            )
        if value.change is not None:
            raise CompletionError(
                f"{where} carries a toolset change; a completion cannot change the toolset "
                "(the turn that made the call is over): return the change from the tool "
                "itself, or let a strategy react to the follow-up",
                call_id=call_id,
                tool_name=tool_name,
            )
        return value
    if isinstance(value, BaseException):
        raise CompletionError(
            f"{where} got the exception {value!r}; report failures with "
            "completion.fail(exc) (the model reads them as an error result)",
            call_id=call_id,
            tool_name=tool_name,
        )
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it so Python does not warn later
        raise CompletionError(
            f"{where} got an awaitable ({type(value).__name__}); await it and report "
            "its value instead",
            call_id=call_id,
            tool_name=tool_name,
        )
    try:
        return ToolResult.ok(value)
    except Exception as exc:  # not JSON (undecodable bytes, an iterator): still delivered
        return unserializable_result(tool_name, value, exc, verb="reported back")


def _text_of(error: BaseException) -> str:
    """``str(error)``, or a note when its ``__str__`` raises (the failure is still reported)."""
    try:
        return str(error)
    except Exception as exc:
        return f"(its message could not be read: {type(exc).__name__} while formatting it)"


class Completion:
    """The completion callback of one async tool call (``CallContext.completion``).

    Call it once with the finished result (a ``ToolResult`` or any value, like a tool's
    return value), or call ``fail`` once with an error. Thread-safe: call it from a
    worker thread or an asyncio task. A second call raises ``CompletionError`` naming
    the call id; a call after the run settled the call raises ``LateCompletion``.
    """

    __slots__ = ("_hidden", "_sink", "call_id", "tool_name")

    def __init__(
        self, sink: CompletionSink, *, call_id: str, tool_name: str, hidden: Iterable[Any] = ()
    ) -> None:
        self._sink = sink
        self._hidden = hidden_values(hidden)
        """Values ``fail`` hides from its message (the call's context values); registered
        secrets, presets included, are hidden too."""
        self.call_id = call_id
        """The id of the call that started the work (the follow-up names it)."""
        self.tool_name = tool_name
        """The tool that started the work."""

    def __call__(self, result: Any) -> None:
        """Report the finished result: queued for the model's next turn."""
        checked = completion_result(result, call_id=self.call_id, tool_name=self.tool_name)
        scrubbed = scrub_text(checked.content)  # registered secrets, presets included
        if scrubbed != checked.content:
            checked = dataclasses.replace(checked, content=scrubbed)
        self._sink.complete(self.call_id, self.tool_name, checked)

    def fail(self, error: str | BaseException) -> None:
        """Report that the background work failed: the model reads an error result."""
        if isinstance(error, BaseException):
            text = _text_of(error)  # kept whole: a trailing ':' may end a secret
            message = f"{type(error).__name__}: {text}" if text else type(error).__name__
            result = ToolResult.error(
                scrub_text(
                    f"Tool {self.tool_name!r} failed in the background: {message}", self._hidden
                ),
                kind="exception",
                exception=error,
            )
        elif isinstance(error, str):
            result = ToolResult.error(scrub_text(error, self._hidden), kind="error")
        else:
            raise CompletionError(
                f"completion.fail() of call {self.call_id!r} (tool {self.tool_name!r}) takes "
                f"an error message or an exception, got {error!r}",
                call_id=self.call_id,
                tool_name=self.tool_name,
            )
        self._sink.complete(self.call_id, self.tool_name, result)

    @property
    def is_open(self) -> bool:
        """True while a report is still accepted (not reported yet, run not settled)."""
        return self._sink.is_open(self.call_id)

    def __repr__(self) -> str:
        return f"Completion(call_id={self.call_id!r}, tool_name={self.tool_name!r})"
