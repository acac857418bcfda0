"""Applying a strategy's toolset change: the toolset, the trace and the events.

Only the loop changes the toolset; ``LoopCore.apply_change`` comes here with itself as
the ``RunView`` (the toolset, the counters and the event sink are all this reads).
"""

from __future__ import annotations

from harness.loop._events import ToolsInjected, ToolsRemoved
from harness.loop._run_view import RunView
from harness.loop._strategy import ToolsetChange
from harness.loop._telemetry import logger, record_metric
from harness.loop._trace import ChangeRecord
from harness.loop._trace_builder import TraceBuilder
from harness.messages import ToolCall

__all__ = ["apply_change"]

_log = logger.getChild("loop")


def apply_change(
    run: RunView, record: TraceBuilder, change: ToolsetChange, call: ToolCall | None = None
) -> None:
    """Apply a toolset change, record it in the trace and emit its events."""
    removed = tuple(name for name in change.remove if run.toolset.discard(name) is not None)
    for tool in change.replace:
        run.toolset.replace(tool)
    added = []
    for tool in change.add:
        run.toolset.add(tool)
        added.append(tool.name)
    after = call.name if call else None
    for event in change.events:
        run.emit(event)
    initial = record.before_first_request
    if removed or added or change.replace:
        record.change(
            ChangeRecord(
                initial=initial,
                strategy=change.strategy,
                reason=change.reason,
                added=tuple(added),
                removed=removed,
                replaced=tuple(t.name for t in change.replace),
                after_call=after,
                after_call_id=call.id if call else None,
            )
        )
    if removed:
        run.emit(
            ToolsRemoved(
                iteration=run.iteration,
                tool_names=removed,
                strategy=change.strategy,
                reason=change.reason,
                after_call=after,
            )
        )
    if added:
        if not initial:
            run.injected.extend(added)
            record_metric("tools_injected", len(added), strategy=change.strategy)
        _log.info(
            "run %s iteration %d: %s %s %s (%s)",
            run.run_id,
            run.iteration,
            change.strategy,
            "set up" if initial else "injected",
            ", ".join(added),
            change.reason,
        )
        run.emit(
            ToolsInjected(
                iteration=run.iteration,
                tool_names=tuple(added),
                strategy=change.strategy,
                reason=change.reason,
                after_call=after,
                section_key=change.section_key,
            )
        )
