"""Events the loop delivers to observers (and records in the trace)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "CompletionDelivered",
    "CompletionLost",
    "CompletionQueued",
    "CompletionsAwaited",
    "Event",
    "IterationStarted",
    "LimitReached",
    "ModelResponded",
    "Observer",
    "ProviderDiscovered",
    "RunFinished",
    "StrategyWarning",
    "ToolAbandoned",
    "ToolCalled",
    "ToolFailed",
    "ToolsInjected",
    "ToolsRemoved",
    "UserNotified",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of all events."""

    iteration: int
    """The loop iteration the event belongs to (0 before the first model call)."""

    @property
    def kind(self) -> str:
        """The event's type name, e.g. ``ToolsInjected``."""
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict with the event kind."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"kind": self.kind, **data}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IterationStarted(Event):
    """A model request is about to be made."""

    offered: tuple[str, ...]
    """Names of the tools offered on this request."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponded(Event):
    """The model answered."""

    tool_calls: tuple[str, ...]
    """Names of the tools it called (empty for a final answer)."""
    finish_reason: str
    """The provider's finish reason."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(Event):
    """A tool call completed successfully."""

    call_id: str
    name: str
    arguments: str
    """The raw arguments the model sent."""
    silent: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolFailed(Event):
    """A tool call ended in an error result."""

    call_id: str
    name: str
    arguments: str
    error_kind: str
    """``invalid_arguments``, ``exception``, ``timeout``, ``unknown_tool``, ..."""
    message: str
    """What the model was told."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class UserNotified(Event):
    """A tool result spoke to the user (its ``user_content``; never for a silent result).

    The same texts, in order, are ``RunResult.user_outputs``.
    """

    call_id: str
    name: str
    """The tool whose result it was."""
    content: str
    """The text for the user."""
    progress: bool = False
    """A chunk a running tool sent through its ``Emitter`` (not its result)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolAbandoned(Event):
    """A tool missed its ``tool_timeout``: its timeout result was delivered without it.

    The run never waits for it: a sync tool (or any tool under ``run``) keeps running in
    a daemon thread, an async tool that ignored cancellation keeps running as a task on
    the event loop, and an async tool that blocked the event loop (``time.sleep``) could
    only be noticed once it let the loop run again.
    """

    call_id: str
    name: str
    timeout: float
    """The configured ``tool_timeout`` in seconds."""
    still_running: str | None
    """``"thread"``, ``"task"``, or ``None`` when it has stopped."""
    blocked_loop_seconds: float | None = None
    """For an async tool that blocked the event loop: how long the call took."""
    message: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolsInjected(Event):
    """Tools were added to the offered toolset."""

    tool_names: tuple[str, ...]
    strategy: str
    reason: str
    after_call: str | None = None
    """Name of the tool whose result caused the change, if any."""
    section_key: str | None = None
    """The prompt section whose expansion caused it, if any."""
    timestamp: float = dataclasses.field(default_factory=time.time, compare=False)
    """When the tools were added (seconds since the epoch, ``time.time()``). Not compared
    by ``==`` and left out of ``Trace.to_dict()``, which stay deterministic."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolsRemoved(Event):
    """Tools were removed from the offered toolset."""

    tool_names: tuple[str, ...]
    strategy: str
    reason: str
    after_call: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProviderDiscovered(Event):
    """A tool returned an object whose methods became tools."""

    provider: str
    """The provider's class name."""
    provider_class: str = ""
    """The provider's qualified class name (``module.QualName``)."""
    provider_count: int = 1
    """How many providers the same tool result exposed (each of their events says it)."""
    instance_id: str = ""
    """The instance's id attribute value."""
    tool_names: tuple[str, ...]
    """The tools created for it."""
    depth: int = 1
    """Discovery depth (1 = found in the result of an original tool)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LimitReached(Event):
    """A limit stopped something: iterations, injected tools, discovery depth, retries."""

    limit: str
    """Which limit, e.g. ``max_iterations``, ``max_injected_tools``, ``max_depth``."""
    value: int
    """The configured value."""
    message: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StrategyWarning(Event):
    """A strategy skipped something on purpose (collision, duplicate name, ...)."""

    strategy: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(Event):
    """The run ended with its output: the model's final answer, or the result of a
    ``return_direct`` tool (``return_direct`` names it; ``None`` for a model answer)."""

    output: str | None
    return_direct: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompletionQueued(Event):
    """An async call reported back: its result is queued for the model's next turn.

    Emitted on the loop's side (between turns, or while the loop waits at the end of
    the run), never from the tool's thread or task; ``iteration`` is when it was noticed.
    """

    call_id: str
    """The id of the call that started the work."""
    name: str
    """The tool that started it."""
    is_error: bool = False
    """The background work failed (``Completion.fail``)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompletionDelivered(Event):
    """A queued completion reached the conversation as a follow-up message on the request
    of ``iteration`` (and the user channel unless silent)."""

    call_id: str
    name: str
    started_iteration: int
    """The iteration whose call started the work."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompletionLost(Event):
    """An async call's result will never reach the model.

    ``reason``: ``deadline`` (the end-of-run wait ran out), ``run_ended`` (policy
    ``pending_completions="lost"``), ``return_direct`` (a tool ended the run with its own
    result), ``max_iterations`` (no turn left to deliver it), ``run_failed`` (the run
    ended with an error), or ``not_async`` (the tool reported back but its call returned
    a finished result, not ``ToolResult.started``).
    """

    call_id: str
    name: str
    reason: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompletionsAwaited(Event):
    """The model answered while async calls were still running: the loop waits for them
    (``pending_completions="wait"``) up to ``deadline`` seconds before delivering what
    arrived with a further turn and recording the rest as lost."""

    call_ids: tuple[str, ...]
    """The calls waited for."""
    deadline: float
    """The longest wait in seconds (a call's own ``completion_deadline`` wins over the
    run's)."""


Observer = Callable[[Event], None]
"""A callable receiving every event as it happens."""
