"""Agentic tools: a tool whose call runs a nested tool loop with its own model.

The nested run has its own model, system prompt, sub-tools, strategies and loop
options, and a fresh shared state. Its trace is appended to the parent's
``Trace.children`` (through ``ToolResult.child_traces``). The parent's model reads
the nested run's final output; the Python values the sub-tools returned
("artifacts") reach the parent only with ``capture_artifacts=True``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness._errors import HarnessError, LoopSignal, UsageError
from harness._validation import is_int
from harness.loop import InjectionStrategy, LoopOptions, Model, run
from harness.tools import CallContext, Tool, ToolResult, as_tool, serialize_for_model

__all__ = ["DEPTH_KEY", "MAX_AGENT_DEPTH", "AgentOutcome", "agent_tool"]

DEPTH_KEY = "harness_agent_depth"
"""Call-context value holding how deep the current run is nested (0 at the top)."""
MAX_AGENT_DEPTH = 32
"""Largest ``max_depth``: each nested agent is a nested Python call (about five frames),
so thousands of levels would end in ``RecursionError`` rather than a clean stop."""


def _depth(context: CallContext) -> int:
    """The current nesting depth; a value set by hand cannot go below zero."""
    value = context.get(DEPTH_KEY, 0)
    if not is_int(value):
        raise UsageError(
            f"call context {DEPTH_KEY!r}={value!r} must be a non-negative int (the harness sets "
            "it for nested agents; do not set it yourself)"
        )
    return max(0, value)


_TASK_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "What the agent should do"}},
    "required": ["task"],
    "additionalProperties": False,
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AgentOutcome:
    """The Python value of an agentic tool's call (what parent strategies see)."""

    agent: str
    output: Any
    """The nested run's final output."""
    iterations: int
    artifacts: tuple[Any, ...] = ()
    """Values returned by the nested run's tools (only with ``capture_artifacts=True``)."""


def _fresh(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """``value`` itself, or what calling it (a factory) returns."""
    if isinstance(value, kind):
        return value
    if callable(value):
        made = value()
        if isinstance(made, kind):
            return made
        raise UsageError(f"the {what} factory returned {made!r}; it must return a {what}")
    raise UsageError(f"expected a {what} or a function returning one, got {value!r}")


def agent_tool(
    name: str,
    description: str,
    *,
    model: Model | Callable[[], Model],
    tools: Iterable[Tool | Callable[..., Any]] = (),
    strategies: Sequence[InjectionStrategy] | Callable[[], Sequence[InjectionStrategy]] = (),
    system: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    prompt: str | Callable[[dict[str, Any]], str] = "{task}",
    options: LoopOptions | None = None,
    capture_artifacts: bool = False,
    max_depth: int = 3,
) -> Tool:
    """A tool that runs a nested tool loop and answers with its final output.

    ``model`` and ``strategies`` may be factories, called once per call (scripted
    models and stateful strategies stay fresh). ``parameters`` is the tool's JSON
    schema (default: one ``task`` string); ``prompt`` turns the arguments into the
    nested prompt (a ``str.format`` template or a function). Nesting deeper than
    ``max_depth`` agentic calls gives an error result.
    """
    sub_tools = [as_tool(t) for t in tools]
    options = options or LoopOptions()
    if not isinstance(options, LoopOptions):
        raise UsageError(f"options must be a LoopOptions, got {options!r}")
    if (
        isinstance(max_depth, bool)
        or not isinstance(max_depth, int)
        or not 1 <= max_depth <= MAX_AGENT_DEPTH
    ):
        raise UsageError(
            f"max_depth must be an int from 1 to {MAX_AGENT_DEPTH} (MAX_AGENT_DEPTH), got "
            f"{max_depth!r}"
        )
    if not (isinstance(prompt, str) or callable(prompt)):
        raise UsageError(f"prompt must be a format string or a function, got {prompt!r}")
    if not isinstance(model, Model) and not callable(model):
        raise UsageError(f"model must be a Model or a function returning one, got {model!r}")

    def handler(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        depth = _depth(context)
        if depth >= max_depth:
            return ToolResult.error(
                f"Agent {name!r} cannot run: nesting depth {depth} reached max_depth="
                f"{max_depth}. Do the task yourself.",
                kind="max_depth",
            )
        try:
            text = prompt.format(**arguments) if isinstance(prompt, str) else prompt(arguments)
        except (KeyError, IndexError) as exc:
            raise UsageError(
                f"agent {name!r}: the prompt template {prompt!r} uses {exc} which is not an "
                f"argument; arguments: {sorted(arguments)}"
            ) from None
        nested_options = dataclasses.replace(
            options, context={**options.context, DEPTH_KEY: depth + 1}
        )
        try:
            result = run(
                _fresh(model, Model, "Model"),
                text,
                tools=sub_tools,
                strategies=list(_fresh(strategies, (list, tuple), "list of strategies")),
                system=system,
                options=nested_options,
            )
        except LoopSignal:
            raise  # control flow crosses nested agents: the parent's loop ends with it
        except HarnessError as exc:
            return ToolResult(
                content=f"Agent {name!r} failed: {type(exc).__name__}: {exc}",
                is_error=True,
                error_kind="agent_error",
                exception=exc,
                child_traces=(exc.trace,) if exc.trace is not None else (),
            )
        artifacts: tuple[Any, ...] = ()
        if capture_artifacts:
            artifacts = tuple(
                c.value for c in result.trace.calls if not c.is_error and c.value is not None
            )
        outcome = AgentOutcome(
            agent=name, output=result.output, iterations=result.iterations, artifacts=artifacts
        )
        return ToolResult(
            content=serialize_for_model(result.output),
            value=outcome,
            child_traces=(result.trace,),
        )

    return Tool.from_schema(
        name,
        description,
        dict(parameters or _TASK_SCHEMA),
        handler,
        metadata={"agentic": True},
    )
