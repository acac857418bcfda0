"""Phase-based tools: before each turn a function picks the phase, the toolset follows.

```python
Phases(
    {"planning": [draft_plan, submit_plan], "execution": [run_step]},
    phase=phase_after("submit_plan", before="planning", after="execution"),
)
```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness._errors import UsageError
from harness.loop import Event, InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import Tool, as_tool

__all__ = ["PhaseChanged", "Phases", "phase_after"]

PhaseFunction = Callable[[InjectionContext], str]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PhaseChanged(Event):
    """The run entered another phase (``from_phase`` is ``None`` at the start)."""

    from_phase: str | None
    to_phase: str


def phase_after(tool_name: str, *, before: str, after: str) -> PhaseFunction:
    """A phase function: ``before`` until ``tool_name`` succeeded once, then ``after``."""

    def phase(context: InjectionContext) -> str:
        return after if context.called.get(tool_name) else before

    phase.__name__ = f"phase_after_{tool_name}"
    return phase


class Phases(InjectionStrategy):
    """Offer the tools of the current phase (plus ``global_tools``), chosen before each turn.

    ``phase(context)`` returns a phase name; the run's shared state keeps it under
    ``phase``. A name that is not a phase ends the run with a ``UsageError`` naming
    the valid phases.
    """

    @property
    def name(self) -> str:
        """``phases`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "phases"

    def __init__(
        self,
        phases: Mapping[str, Iterable[Tool | Callable[..., Any]]],
        *,
        phase: PhaseFunction,
        global_tools: Iterable[Tool | Callable[..., Any]] = (),
    ) -> None:
        if not phases:
            raise UsageError("Phases needs at least one phase: {'name': [tools...]}")
        if not callable(phase):
            raise UsageError(f"phase must be a function (InjectionContext) -> str, got {phase!r}")
        self.phases = {name: tuple(as_tool(t) for t in tools) for name, tools in phases.items()}
        self.global_tools = tuple(as_tool(t) for t in global_tools)
        self.phase = phase
        self._owned = frozenset(t.name for ts in self.phases.values() for t in ts)

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        own = context.state_for(self)
        current: str | None = own.get("phase")
        chosen = self.phase(context)
        if chosen not in self.phases:
            raise UsageError(
                f"the phase function {getattr(self.phase, '__name__', self.phase)!r} returned "
                f"{chosen!r} at iteration {context.iteration}; phases: {sorted(self.phases)}"
            )
        if chosen == current:
            return None
        own["phase"] = chosen
        context.state["phase"] = chosen
        wanted = {t.name: t for t in (*self.global_tools, *self.phases[chosen])}
        remove = tuple(n for n in context.offered if n in self._owned and n not in wanted)
        add = tuple(t for n, t in wanted.items() if n not in context.offered)
        event = PhaseChanged(iteration=context.iteration, from_phase=current, to_phase=chosen)
        reason = f"phase {current} -> {chosen}" if current else f"phase {chosen} (start)"
        return ToolsetChange(add=add, remove=remove, reason=reason, events=(event,))
