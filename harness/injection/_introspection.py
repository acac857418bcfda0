"""Run introspection tools the model can call, offered behind one unfolding facade.

``RunIntrospection`` keeps a snapshot of the run in the shared state and offers
``run_status`` (iteration, offered tool count, elapsed seconds), ``tool_usage``
(successful calls per tool), ``call_history`` (the calls so far), and
``report_progress`` / ``send_message``, which deliver an event to an output channel
(a callable; the ``output_channel`` call-context value wins over the constructor's)
and fail gracefully, with an error result, when there is none.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from harness._errors import UsageError
from harness.injection._facade import facade
from harness.loop import Event, InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import CallContext, Tool, ToolResult

__all__ = ["MessageSent", "ProgressReported", "RunInfo", "RunIntrospection"]

INFO_KEY = "harness.run_info"
Channel = Callable[[Event], None]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProgressReported(Event):
    """The model reported progress through ``report_progress``."""

    message: str
    percent: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MessageSent(Event):
    """The model sent a message to the user through ``send_message``."""

    message: str


@dataclasses.dataclass(kw_only=True)
class RunInfo:
    """What the introspection tools read; kept up to date by ``RunIntrospection``."""

    started: float = dataclasses.field(default_factory=time.monotonic)
    iteration: int = 0
    offered: Mapping[str, Tool] = dataclasses.field(default_factory=dict)
    """The live view of the offered tools."""
    usage: dict[str, int] = dataclasses.field(default_factory=dict)
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    run_id: str = ""
    """The run this information is about."""


def _slot(state: Mapping[str, Any], run_id: str) -> str:
    """Where a run's ``RunInfo`` lives: ``INFO_KEY`` for the first run of a state, a key of
    its own for another run sharing the state (a subagent: ``subagent_tool``)."""
    info = state.get(INFO_KEY)
    if not isinstance(info, RunInfo) or info.run_id in ("", run_id):
        return INFO_KEY
    return f"{INFO_KEY}@{run_id}"


def _info(context: CallContext) -> RunInfo | ToolResult:
    info = context.state.get(_slot(context.state, context.run_id))
    if isinstance(info, RunInfo):
        return info
    return ToolResult.error(
        "Run introspection is not enabled for this run (add RunIntrospection() to the strategies).",
        kind="unavailable",
    )


class RunIntrospection(InjectionStrategy):
    """Offer introspection tools (behind a facade unless ``unfold=False``) and keep them fed."""

    @property
    def name(self) -> str:
        """``introspection`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "introspection"

    def __init__(
        self,
        *,
        channel: Channel | None = None,
        facade_name: str = "run_introspection",
        unfold: bool = True,
        history_limit: int = 50,
    ) -> None:
        if not isinstance(history_limit, int) or history_limit < 1:
            raise UsageError(f"history_limit must be an int >= 1, got {history_limit!r}")
        if channel is not None and not callable(channel):
            raise UsageError(f"channel must be a function (Event) -> None, got {channel!r}")
        self.channel = channel
        self.history_limit = history_limit
        self.tools: tuple[Tool, ...] = self._make_tools()
        self.offer: tuple[Tool, ...] = (
            (
                facade(
                    facade_name,
                    "Inspect this run (status, tool usage, call history) and report progress "
                    "or send messages to the user.",
                    self.tools,
                    notes=("report_progress and send_message need an output channel.",),
                ),
            )
            if unfold
            else self.tools
        )

    # -- hooks ----------------------------------------------------------------------------

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        slot = _slot(context.state, context.run_id)
        info = context.state.get(slot)
        first = not isinstance(info, RunInfo)
        if first:
            info = context.state[slot] = RunInfo(run_id=context.run_id)
        assert isinstance(info, RunInfo)
        info.iteration = context.iteration
        info.offered = context.tools
        if not first:
            return None
        add = tuple(t for t in self.offer if t.name not in context.offered)
        return ToolsetChange(add=add, reason="run introspection tools") if add else None

    def on_tool_result(self, context: InjectionContext) -> None:
        info = context.state.get(_slot(context.state, context.run_id))
        if not isinstance(info, RunInfo) or context.call is None or context.result is None:
            return None
        info.usage = dict(context.called)
        info.history.append(
            {
                "iteration": context.iteration,
                "tool": context.call.name,
                "arguments": context.call.arguments,
                "ok": not context.result.is_error,
            }
        )
        del info.history[: -self.history_limit]
        return None

    # -- tools ----------------------------------------------------------------------------

    def _deliver(self, event: Event, context: CallContext, what: str) -> ToolResult:
        channel = context.get("output_channel", self.channel)
        if channel is None:
            return ToolResult.error(
                f"No output channel is connected, so the {what} was not delivered; "
                "carry on without it.",
                kind="no_channel",
            )
        try:
            channel(event)
        except Exception as exc:
            return ToolResult.error(
                f"The output channel failed ({type(exc).__name__}), so the {what} was not "
                "delivered; carry on without it.",
                kind="channel_error",
                exception=exc,
            )
        change = ToolsetChange(events=(event,), reason=f"{what} delivered", strategy=self.name)
        return ToolResult(content=f"{what} delivered", value=event, change=change)

    def _make_tools(self) -> tuple[Tool, ...]:
        def run_status(context: CallContext) -> ToolResult | dict[str, Any]:
            """The run's status: iteration, number of offered tools, elapsed seconds."""
            info = _info(context)
            if isinstance(info, ToolResult):
                return info
            return {
                "iteration": info.iteration,
                "offered_tools": len(info.offered),
                "elapsed_seconds": round(time.monotonic() - info.started, 3),
            }

        def tool_usage(context: CallContext) -> ToolResult | dict[str, int]:
            """How many times each tool was called successfully so far."""
            info = _info(context)
            return info if isinstance(info, ToolResult) else dict(info.usage)

        def call_history(
            context: CallContext, last: Annotated[int, "How many recent calls"] = 10
        ) -> ToolResult | list[dict[str, Any]]:
            """The most recent tool calls (tool, arguments, ok), oldest first."""
            info = _info(context)
            if isinstance(info, ToolResult):
                return info
            return list(info.history[-last:]) if last > 0 else []

        def report_progress(
            context: CallContext,
            message: Annotated[str, "What was done"],
            percent: Annotated[float | None, "Progress from 0 to 100"] = None,
        ) -> ToolResult:
            """Report progress to the user."""
            event = ProgressReported(iteration=context.iteration, message=message, percent=percent)
            return self._deliver(event, context, "progress report")

        def send_message(context: CallContext, message: Annotated[str, "The text"]) -> ToolResult:
            """Send a message to the user while you keep working."""
            event = MessageSent(iteration=context.iteration, message=message)
            return self._deliver(event, context, "message")

        functions = (run_status, tool_usage, call_history, report_progress, send_message)
        return tuple(Tool.from_function(f) for f in functions)
