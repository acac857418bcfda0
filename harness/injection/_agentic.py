"""Agentic tools: a tool whose call runs a nested tool loop with its own model.

The nested run has its own model, system prompt (text, or a function of the parent's
call context computed at handoff time), sub-tools, strategies and loop options, and a
fresh shared state. Its trace is appended to the parent's ``Trace.children`` and to the
handoff call's ``CallRecord.children`` (through ``ToolResult.child_traces``), and its
token usage is added to the parent's. The parent's model reads the nested run's final
output; the Python values the sub-tools returned ("artifacts") reach the parent only
with ``capture_artifacts=True``. ``subagent_tool`` (harness/injection/_subagent.py) is
the variant that shares the parent's state.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness._errors import HarnessError, LoopSignal, UsageError
from harness._names import format_names
from harness._validation import is_int
from harness.loop import InjectionStrategy, LoopOptions, Model, Usage, arun
from harness.tools import CallContext, Tool, ToolResult, as_tool, serialize_for_model

__all__ = ["DEPTH_KEY", "MAX_AGENT_DEPTH", "AgentOutcome", "SystemPrompt", "agent_tool"]

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


SystemPrompt = str | Callable[[CallContext], str | None] | None
"""A nested agent's system prompt: text, or a function of the parent's ``CallContext``
(its ``state``, ``iteration``, ``tool_name`` and values) called at each handoff."""

RESERVED_PREFIX = "harness."
"""State keys starting with this belong to the harness's own strategies (per run)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AgentOutcome:
    """The Python value of an agentic tool's call (what parent strategies see)."""

    agent: str
    output: Any
    """The nested run's final output."""
    iterations: int
    artifacts: tuple[Any, ...] = ()
    """Values returned by the nested run's tools (only with ``capture_artifacts=True``)."""
    usage: Usage = dataclasses.field(default_factory=Usage)
    """The nested run's token usage (its own nested runs included)."""
    shared_state: bool = False
    """True for a subagent (the nested run shared the parent's state)."""
    state_written: tuple[str, ...] = ()
    """Shared-state keys added, replaced or removed while the subagent ran (sorted;
    ``harness.`` keys left out; a value changed in place is not seen; a parallel call's
    writes in that time are listed too)."""


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


def _system_text(system: SystemPrompt, context: CallContext, name: str) -> str | None:
    """The nested run's system prompt for this handoff."""
    if system is None or isinstance(system, str):
        return system
    text = system(context)
    if text is not None and not isinstance(text, str):
        raise UsageError(
            f"agent {name!r}: the system prompt function returned {text!r}; it must return "
            "a str (or None for no system prompt)"
        )
    return text


def written_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    """Keys added, replaced (another object) or removed between two snapshots of a state,
    sorted, ``harness.`` keys left out."""
    changed = {k for k, v in after.items() if k not in before or before[k] is not v}
    changed.update(k for k in before if k not in after)
    return tuple(sorted(str(k) for k in changed if not str(k).startswith(RESERVED_PREFIX)))


def _check_common(
    options: LoopOptions | None, max_depth: int, prompt: Any, model: Any, system: Any
) -> LoopOptions:
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
    if system is not None and not isinstance(system, str) and not callable(system):
        raise UsageError(
            f"system must be a str, a function (CallContext) -> str, or None, got {system!r}"
        )
    return options


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Spec:
    """Everything a handoff needs (shared by ``agent_tool`` and ``subagent_tool``)."""

    name: str
    model: Model | Callable[[], Model]
    tools: tuple[Tool, ...]
    strategies: Sequence[InjectionStrategy] | Callable[[], Sequence[InjectionStrategy]]
    system: SystemPrompt
    prompt: str | Callable[[dict[str, Any]], str]
    options: LoopOptions
    max_depth: int
    capture_artifacts: bool = False
    share_state: bool = False
    forward_context: tuple[str, ...] = ()


def _failed(spec: _Spec, exc: BaseException) -> ToolResult:
    """The error result of a nested run that failed; its trace stays attached."""
    trace = getattr(exc, "trace", None) if isinstance(exc, HarnessError) else None
    if trace is None:
        trace = getattr(exc, "harness_trace", None)
    return ToolResult(
        content=f"Agent {spec.name!r} failed: {type(exc).__name__}: {exc}",
        is_error=True,
        error_kind="agent_error",
        exception=exc,
        child_traces=(trace,) if trace is not None else (),
    )


async def handoff(spec: _Spec, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    """Run the nested agent for one call of its tool.

    A coroutine, so under ``arun`` the nested run is awaited on the parent's event loop
    (async models and tools work, nothing blocks); under ``run`` the tool runs it on a
    private event loop.
    """
    depth = _depth(context)
    if depth >= spec.max_depth:
        return ToolResult.error(
            f"Agent {spec.name!r} cannot run: nesting depth {depth} reached max_depth="
            f"{spec.max_depth}. Do the task yourself.",
            kind="max_depth",
        )
    prompt = spec.prompt
    try:
        text = prompt.format(**arguments) if isinstance(prompt, str) else prompt(arguments)
    except (KeyError, IndexError) as exc:
        raise UsageError(
            f"agent {spec.name!r}: the prompt template {prompt!r} uses {exc} which is not an "
            f"argument; arguments: {sorted(arguments)}"
        ) from None
    system = _system_text(spec.system, context, spec.name)
    forwarded = {key: context[key] for key in spec.forward_context if key in context}
    nested_options = dataclasses.replace(
        spec.options, context={**spec.options.context, **forwarded, DEPTH_KEY: depth + 1}
    )
    state = context.state if spec.share_state else None
    before = dict(state) if state is not None else {}
    try:
        result = await arun(
            _fresh(spec.model, Model, "Model"),
            text,
            tools=spec.tools,
            strategies=list(_fresh(spec.strategies, (list, tuple), "list of strategies")),
            system=system,
            options=nested_options,
            state=state,
        )
    except LoopSignal:
        raise  # control flow crosses nested agents: the parent's loop ends with it
    except Exception as exc:  # the nested model or a provider failed: the parent reads why
        return _failed(spec, exc)
    artifacts: tuple[Any, ...] = ()
    if spec.capture_artifacts:
        artifacts = tuple(
            c.value for c in result.trace.calls if not c.is_error and c.value is not None
        )
    written = written_keys(before, state) if state is not None else ()
    outcome = AgentOutcome(
        agent=spec.name,
        output=result.output,
        iterations=result.iterations,
        artifacts=artifacts,
        usage=result.usage,
        shared_state=spec.share_state,
        state_written=written,
    )
    content = serialize_for_model(result.output)
    if written:
        content += f"\n\n[Shared state written by {spec.name!r}: {format_names(written)}.]"
    return ToolResult(content=content, value=outcome, child_traces=(result.trace,))


def agent_tool(
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
    max_depth: int = 3,
) -> Tool:
    """A tool that runs an isolated nested tool loop and answers with its final output.

    ``model`` and ``strategies`` may be factories, called once per call (scripted
    models and stateful strategies stay fresh). ``system`` is text or a function of the
    parent's ``CallContext`` called at each handoff. ``parameters`` is the tool's JSON
    schema (default: one ``task`` string); ``prompt`` turns the arguments into the
    nested prompt (a ``str.format`` template or a function). Nesting deeper than
    ``max_depth`` agentic calls gives an error result. The nested run gets a fresh
    state: use ``subagent_tool`` to share the parent's.
    """
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
    )
    return Tool.from_schema(
        name,
        description,
        dict(parameters or _TASK_SCHEMA),
        functools.partial(handoff, spec),
        metadata={"agentic": True},
    )
