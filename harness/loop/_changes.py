"""Applying a strategy's toolset change: the toolset, the trace and the events.

Only the loop changes the toolset; ``LoopCore.apply_change`` comes here with itself as
the ``RunView`` (the toolset, the counters and the event sink are all this reads).
"""

from __future__ import annotations

from harness._errors import StrategyError
from harness.loop._events import ToolsInjected, ToolsRemoved
from harness.loop._run_view import RunView
from harness.loop._strategy import ToolsetChange
from harness.loop._telemetry import logger, record_metric
from harness.loop._trace import ChangeRecord
from harness.loop._trace_builder import TraceBuilder
from harness.loop._writes import check_written
from harness.messages import ToolCall
from harness.tools import as_tool

__all__ = ["apply_change"]

_log = logger.getChild("loop")


def apply_change(
    run: RunView, record: TraceBuilder, change: ToolsetChange, call: ToolCall | None = None
) -> None:
    """Apply a toolset change, record it in the trace and emit its events.

    ``via="addition"``: the added tools join the toolset undeclared and, with the revealed
    ones, are queued for the system message written before the next request
    (harness/loop/_writes.py); before the first request they are simply declared.
    """
    initial = record.before_first_request
    addition = change.via == "addition"
    if addition and not run.capabilities.tool_additions:
        names = [as_tool(t).name for t in change.add] + list(change.reveal)
        raise StrategyError(
            f"strategy {change.strategy!r} delivered {names} via='addition', but the model "
            "takes no mid-conversation tool additions (capabilities.tool_additions is "
            "false); choose the delivery with harness.injection.Delivery, which falls back "
            "to editing tools"
        )
    if change.messages:
        check_written(change.messages, change.strategy)
        run.writes.write(change.messages)
    removed = tuple(name for name in change.remove if run.toolset.discard(name) is not None)
    for tool in change.replace:
        run.toolset.replace(tool)
    tools = [run.toolset.add(tool) for tool in change.add]
    added = [tool.name for tool in tools]
    revealed: tuple[str, ...] = ()
    if addition:
        unknown = [n for n in change.reveal if n not in run.toolset]
        if unknown:  # an addition carries definitions: a bare name has none
            raise StrategyError(
                f"strategy {change.strategy!r} adds {unknown} by addition, but the toolset "
                "has no tool of that name to take the definition from; give the Tool in "
                "add=(...) (reveal= names deferred tools already in the toolset)"
            )
        revealed = change.reveal
        # before the first request there is no prefix to keep: the tools are declared
        run.writes.add(run.toolset, () if initial else tools, revealed)
        added.extend(n for n in revealed if n not in added)
    after = call.name if call else None
    for event in change.events:
        run.emit(event)
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
                via="addition" if addition and added and not initial else "edit",
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
