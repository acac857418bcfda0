"""Applying a strategy's toolset change: the toolset, the trace and the events.

Only the loop changes the toolset; ``LoopCore.apply_change`` comes here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.loop._events import ToolsInjected, ToolsRemoved
from harness.loop._strategy import ToolsetChange
from harness.loop._telemetry import logger, record_metric
from harness.loop._trace import ChangeRecord
from harness.loop._trace_builder import TraceBuilder
from harness.messages import ToolCall

if TYPE_CHECKING:
    from harness.loop._core import LoopCore

__all__ = ["apply_change"]

_log = logger.getChild("loop")


def apply_change(
    core: LoopCore, record: TraceBuilder, change: ToolsetChange, call: ToolCall | None = None
) -> None:
    """Apply a toolset change, record it in the trace and emit its events."""
    removed = tuple(name for name in change.remove if core.toolset.discard(name) is not None)
    for tool in change.replace:
        core.toolset.replace(tool)
    added = []
    for tool in change.add:
        core.toolset.add(tool)
        added.append(tool.name)
    after = call.name if call else None
    for event in change.events:
        core.emit(event)
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
        core.emit(
            ToolsRemoved(
                iteration=core.iteration,
                tool_names=removed,
                strategy=change.strategy,
                reason=change.reason,
                after_call=after,
            )
        )
    if added:
        if not initial:
            core.injected.extend(added)
            record_metric("tools_injected", len(added), strategy=change.strategy)
        _log.info(
            "run %s iteration %d: %s %s %s (%s)",
            core.run_id,
            core.iteration,
            change.strategy,
            "set up" if initial else "injected",
            ", ".join(added),
            change.reason,
        )
        core.emit(
            ToolsInjected(
                iteration=core.iteration,
                tool_names=tuple(added),
                strategy=change.strategy,
                reason=change.reason,
                after_call=after,
                section_key=change.section_key,
            )
        )
