"""Subagent tools: hand a task to another agent that shares the parent's state.

A subagent is an agentic tool (harness/injection/_agentic.py) whose nested run gets the
parent run's shared state (the blackboard) itself, not a fresh one: what the
subagent's tools and strategies write there is visible to the parent afterwards (and
to the parent's tools while it runs, e.g. a parallel call). Everything else is as for
``agent_tool``: own model, system prompt (text or a function of the parent's call
context), tools, strategies and loop options; the nested trace hangs from the handoff
call; the nested usage is added to the parent's; a ``LoopSignal`` crosses it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.injection._agentic import (
    _TASK_SCHEMA,
    SystemPrompt,
    _check_common,
    _Spec,
    handoff,
)
from harness.loop import InjectionStrategy, LoopOptions, Model
from harness.tools import Tool, as_tool

__all__ = ["subagent_tool"]


def subagent_tool(
    name: str,
    description: str,
    *,
    model: Model | Callable[[], Model],
    tools: Iterable[Tool | Callable[..., Any]] = (),
    strategies: Sequence[InjectionStrategy] | Callable[[], Sequence[InjectionStrategy]] = (),
    system: SystemPrompt = None,
    parameters: Mapping[str, Any] | None = None,
    prompt: str | Callable[[dict[str, Any]], str] = "{task}",
    options: LoopOptions | None = None,
    capture_artifacts: bool = False,
    forward_context: Sequence[str] = (),
    max_depth: int = 3,
) -> Tool:
    """A tool that hands a task to another agent sharing this run's state (blackboard).

    Arguments are those of ``agent_tool``; in addition ``forward_context`` names the
    parent's call-context values the subagent's tools receive too (none by default:
    secrets stay with the parent unless named). The call's Python value is an
    ``AgentOutcome`` with ``shared_state=True`` and ``state_written`` (the keys the
    subagent added, replaced or removed); when it wrote any, the parent's model reads
    them named after the output.
    """
    if isinstance(forward_context, str) or not all(isinstance(k, str) for k in forward_context):
        raise UsageError(
            f"forward_context must be a list of call-context names, got {forward_context!r}"
        )
    spec = _Spec(
        name=name,
        model=model,
        tools=tuple(as_tool(t) for t in tools),
        strategies=strategies,
        system=system,
        prompt=prompt,
        options=_check_common(options, max_depth, prompt, model, system),
        max_depth=max_depth,
        capture_artifacts=capture_artifacts,
        share_state=True,
        forward_context=tuple(forward_context),
    )
    return Tool.from_schema(
        name,
        description,
        dict(parameters or _TASK_SCHEMA),
        functools.partial(handoff, spec),
        metadata={"agentic": True, "subagent": True},
    )
