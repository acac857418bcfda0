"""Loop options, validated at construction, and the tool retry policy."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import TypeAdapter

from harness._errors import UsageError
from harness._names import did_you_mean, format_names
from harness._validation import choice_problem, int_problem, is_number, seconds_problem
from harness.loop._continuation import continuation_of
from harness.messages import ToolCall
from harness.tools import ContextObjects
from harness.tools._definitions import ToolChoice

__all__ = [
    "LoopOptions",
    "PendingCompletionsPolicy",
    "RetryableToolError",
    "UnknownToolPolicy",
    "options_from",
]

UnknownToolPolicy = Literal["error_result", "raise"]

PendingCompletionsPolicy = Literal["wait", "lost"]
"""What the loop does when the model answers while async calls have not reported back."""


class RetryableToolError(Exception):
    """Raise from a tool to ask the loop to retry it (with backoff, up to ``tool_retries``)."""

    __module__ = "harness"  # the public package, in tracebacks and reprs


@dataclasses.dataclass(frozen=True, kw_only=True)
class LoopOptions:
    """How the loop runs. Invalid values raise ``UsageError`` here, not mid-run."""

    max_iterations: int = 20
    """Maximum number of model requests in one run."""
    tool_timeout: float | None = None
    """Seconds a single tool call may take; ``None`` for no limit."""
    tool_retries: int = 0
    """How many times a tool raising a retryable error is retried."""
    retry_backoff: float = 0.1
    """First retry delay in seconds; each later retry waits ``retry_multiplier`` times
    the one before."""
    retry_multiplier: float = 2.0
    """How much each retry's delay grows over the previous one (``1``: a constant delay)."""
    retry_on: tuple[type[BaseException], ...] = (RetryableToolError,)
    """Exception types that are retried."""
    unknown_tool: UnknownToolPolicy = "error_result"
    """``error_result``: tell the model which tools exist; ``raise``: raise ``ToolNotFound``."""
    output_type: Any = None
    """A type (e.g. a pydantic model) the final answer must parse into."""
    output_retries: int = 1
    """How many times the model is asked to fix an invalid structured answer."""
    parallel_tool_calls: bool = True
    """Run several calls of one turn concurrently."""
    max_workers: int = 8
    """Thread pool size of the sync driver for parallel calls and timeouts."""
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Run-level call context values (secret-safe: never shown to the model)."""
    call_context: Callable[[ToolCall], Mapping[str, Any]] | None = None
    """Per-call context values; they win over run-level values on conflict."""
    context_objects: Sequence[object] = ()
    """Typed context objects of the run, injected into tool parameters annotated with their
    class (see docs/context-injection.md); they win over the toolset's and the tool's."""
    call_context_objects: Callable[[ToolCall], Iterable[object]] | None = None
    """Per-call typed context objects; they win over every other source."""
    tool_choice: ToolChoice | str | Mapping[str, Any] | None = None
    """Passed to the model on every request: a ``harness.ToolChoice``, or ``auto``,
    ``none``, ``required`` or a tool name (read with ``ToolChoice.of``; the result is
    what this field holds after construction)."""
    model_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Extra provider settings passed to the model."""
    pending_completions: PendingCompletionsPolicy = "wait"
    """When the model answers while async calls (``ToolResult.started``) are still running:
    ``wait`` up to ``completion_deadline`` seconds, deliver what arrived with a further
    turn and record the rest as lost; ``lost``: record them as lost at once."""
    completion_deadline: float = 30.0
    """Seconds the end-of-run wait lasts (``0``: do not wait); a call's own
    ``ToolResult.started(completion_deadline=...)`` wins over it."""
    continuation: Any = None
    """Whether a text answer ends the user turn, and user messages between requests: a
    ``harness.Continuation`` (``ReAct()``, ``ContinueUntilTool(name)``,
    ``ContinueWhile(predicate)``, ``NudgeAfterResults(text)``) or a list of them;
    ``None``: every text answer ends the turn (see docs/sessions.md)."""

    def __post_init__(self) -> None:
        problems = [*_check_numbers(self), *_check_kinds(self)]
        try:
            object.__setattr__(self, "tool_choice", ToolChoice.of(self.tool_choice))
        except UsageError as exc:
            problems.append(str(exc))
        try:
            object.__setattr__(self, "continuation", continuation_of(self.continuation))
        except UsageError as exc:
            problems.append(str(exc))
        if problems:
            raise UsageError("invalid loop options: " + "; ".join(problems))

    def retry_delay(self, attempt: int, exc: BaseException) -> float | None:
        """Delay before retry number ``attempt`` (1-based), or ``None`` to stop retrying."""
        if attempt > self.tool_retries or not isinstance(exc, self.retry_on):
            return None
        return float(self.retry_backoff * self.retry_multiplier ** (attempt - 1))


def options_from(values: Mapping[str, Any]) -> LoopOptions:
    """``LoopOptions(**values)``; an unknown name is a ``UsageError`` with a "did you mean"
    and the valid names (not a ``TypeError``)."""
    known = [f.name for f in dataclasses.fields(LoopOptions)]
    unknown = [name for name in values if name not in known]
    if unknown:
        hints = [f"{name!r}{did_you_mean(str(name), known)}" for name in unknown]
        raise UsageError(
            f"unknown loop option(s) {', '.join(hints)}; valid options: "
            f"{format_names(known, quote=False)}"
        )
    return LoopOptions(**values)


def _check_numbers(options: LoopOptions) -> list[str]:
    problems = [
        int_problem(options.max_iterations, name="max_iterations", minimum=1),
        int_problem(options.tool_retries, name="tool_retries", minimum=0),
        int_problem(options.output_retries, name="output_retries", minimum=0),
        int_problem(options.max_workers, name="max_workers", minimum=1),
    ]
    problems += [
        seconds_problem(options.tool_timeout, name="tool_timeout", positive=True, optional=True),
        seconds_problem(options.completion_deadline, name="completion_deadline"),
        seconds_problem(options.retry_backoff, name="retry_backoff"),
    ]
    multiplier = options.retry_multiplier
    if not (is_number(multiplier) and 1 <= multiplier < math.inf):
        problems.append(
            f"retry_multiplier must be a finite number >= 1 (1 keeps the delay constant), "
            f"got {multiplier!r}"
        )
    return [p for p in problems if p is not None]


def _check_kinds(options: LoopOptions) -> list[str]:
    problems = []
    unknown_tool = choice_problem(options.unknown_tool, UnknownToolPolicy, name="unknown_tool")
    if unknown_tool is not None:
        problems.append(unknown_tool)
    pending = choice_problem(
        options.pending_completions, PendingCompletionsPolicy, name="pending_completions"
    )
    if pending is not None:
        problems.append(pending)
    retry_on = options.retry_on
    if not (
        isinstance(retry_on, tuple)
        and all(isinstance(t, type) and issubclass(t, BaseException) for t in retry_on)
    ):
        problems.append(f"retry_on must be a tuple of exception classes, got {retry_on!r}")
    if not isinstance(options.context, Mapping):
        problems.append(f"context must be a mapping of names to values, got {options.context!r}")
    if not (isinstance(options.context_objects, tuple) and not options.context_objects):
        try:  # the loop registers them again per run; this checks them up front
            ContextObjects(options.context_objects, source="run")
        except UsageError as exc:
            problems.append(f"context_objects: {exc}")
    if options.call_context_objects is not None and not callable(options.call_context_objects):
        problems.append(
            "call_context_objects must be a function (ToolCall) -> list of objects or None, "
            f"got {options.call_context_objects!r}"
        )
    if options.call_context is not None and not callable(options.call_context):
        problems.append(
            "call_context must be a function (ToolCall) -> mapping or None, "
            f"got {options.call_context!r}"
        )
    if not isinstance(options.model_settings, Mapping):
        problems.append(f"model_settings must be a mapping, got {options.model_settings!r}")
    if options.output_type is not None:
        try:
            TypeAdapter(options.output_type).json_schema()
        except Exception as exc:
            problems.append(
                f"output_type must be a type pydantic can validate (e.g. a BaseModel subclass), "
                f"got {options.output_type!r} ({type(exc).__name__})"
            )
    return problems
