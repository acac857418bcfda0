"""From the tool calls of a model response to what the driver runs, and back.

Every call gets an id no other call of the run has (``unique_ids``), then is looked up
in the offered toolset and prepared with its call context (``prepare``): a
``PendingCall`` the driver executes, or one already settled (an unknown tool, invalid
arguments, a missing context object) whose error result the model reads. Its result
is announced by ``ToolCalled`` or ``ToolFailed`` (``result_event``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness._errors import ToolNotFound
from harness.loop import _fast as fast
from harness.loop._events import StrategyWarning, ToolCalled, ToolFailed
from harness.loop._options import LoopOptions
from harness.loop._unknown import unknown_tool_message
from harness.messages import AssistantMessage, ToolCall
from harness.tools import CallContext, ContextObjects, PreparedCall, Tool, ToolResult, Toolset

__all__ = ["PendingCall", "prepare", "result_event", "unique_ids"]


@dataclasses.dataclass(slots=True)
class PendingCall:
    """A tool call the driver must execute (``prepared``) or that is already settled."""

    call: ToolCall
    tool: Tool | None
    prepared: PreparedCall | None = None
    immediate: ToolResult | None = None


def unique_ids(
    message: AssistantMessage, seen: set[str], iteration: int
) -> tuple[AssistantMessage, Sequence[StrategyWarning]]:
    """``message`` with an id for every call that had none (``call_<iteration>_<index>``)
    and a new one for every id already in ``seen`` (which gets them all), and a warning
    per reused id."""
    tool_calls = message.tool_calls
    if not tool_calls:
        return message, ()
    warnings: list[StrategyWarning] = []
    fixed: list[ToolCall] | None = None
    for index, call in enumerate(tool_calls):
        call_id = call.id
        new_id = call_id or f"call_{iteration}_{index}"
        if new_id in seen:
            base, n = new_id, 2
            while f"{base}_dup{n}" in seen:
                n += 1
            new_id = f"{base}_dup{n}"
            warnings.append(
                StrategyWarning(
                    iteration=iteration,
                    strategy="loop",
                    message=(
                        f"the model reused tool call id {call.id!r} (tool {call.name!r}); "
                        f"renamed it to {new_id!r} so every call gets exactly one result"
                    ),
                )
            )
        if new_id != call_id:
            if fixed is None:
                fixed = list(tool_calls[:index])
            fixed.append(call.model_copy(update={"id": new_id}))
        elif fixed is not None:
            fixed.append(call)
        seen.add(new_id)
    if fixed is None:
        return message, warnings
    return message.model_copy(update={"tool_calls": tuple(fixed)}), warnings


def prepare(
    call: ToolCall,
    toolset: Toolset,
    options: LoopOptions,
    run_context: CallContext,
    iteration: int,
) -> PendingCall:
    """Look ``call`` up in ``toolset`` and prepare it with its call context.

    An unknown tool raises ``ToolNotFound`` under ``unknown_tool="raise"``; otherwise it
    is settled with an error result listing the offered tools.
    """
    tool = toolset.get(call.name)
    if tool is None:
        if options.unknown_tool == "raise":
            raise ToolNotFound(call.name, toolset.names)
        return PendingCall(
            call=call,
            tool=None,
            immediate=ToolResult.error(
                unknown_tool_message(call.name, toolset.names), kind="unknown_tool"
            ),
        )
    values = options.call_context(call) if options.call_context else None
    objects = options.call_context_objects(call) if options.call_context_objects else None
    context = run_context.for_call(
        tool_name=call.name,
        tool_call_id=call.id,
        iteration=iteration,
        values=values,
        objects=ContextObjects(objects, source="call") if objects else None,
        toolset_objects=toolset.context_objects,
    )
    prepared = tool.prepare(call.arguments, context)
    if isinstance(prepared, ToolResult):
        return PendingCall(call=call, tool=tool, immediate=prepared)
    return PendingCall(call, tool, prepared)


def result_event(call: ToolCall, result: ToolResult, iteration: int) -> ToolCalled | ToolFailed:
    """The event announcing ``result`` of ``call``."""
    if result.is_error:
        return ToolFailed(
            iteration=iteration,
            call_id=call.id,
            name=call.name,
            arguments=call.arguments,
            error_kind=result.error_kind or "error",
            message=result.content,
        )
    return fast.ToolCalled(
        iteration=iteration,
        call_id=call.id,
        name=call.name,
        arguments=call.arguments,
        silent=result.silent,
    )
