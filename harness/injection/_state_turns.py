"""Several calls in one turn: which of them a state machine lets run.

The loop runs every call of a turn before any strategy sees a result, so a state
machine's transitions are applied after the whole turn ran. Left alone, a turn like
``[back_to_cart, authorize_payment]`` in ``PAYMENT`` runs both: the authorisation
happens in the world, then the machine moves to ``CART`` and can only warn that
``authorize_payment`` is not offered there.

The rule: **a call runs only when its tool is offered in every state the earlier
calls of its turn may lead to.** The loop prepares a turn's calls in order before
running any of them; the machine's tools are wrapped (``StateBoundTool``) so that
preparing one checks the rule and, once admitted, adds its transition's target to
the states the turn may be in (the current state stays possible: a call may fail; a
target chosen by a function of the value may be any state). A call the rule refuses
is answered without running, with an error result of kind ``state_changed`` that
names the earlier call and the state; the model may call it again in its next turn.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from typing import Any

from harness.tools import CallContext, DelegatingTool, PreparedCall, ToolResult

__all__ = ["STATE_CHANGED", "StateBoundTool", "TurnGuard"]

STATE_CHANGED = "state_changed"
"""The ``error_kind`` of a call refused because an earlier call of its turn may move the
state machine to a state where its tool is not offered."""


@dataclasses.dataclass(frozen=True)
class _Turn:
    """What the guard knows of one run's current turn."""

    iteration: int
    start: enum.Enum
    """The machine's state when the turn began."""
    possible: frozenset[enum.Enum]
    """The states the turn may be in after the calls admitted so far."""
    movers: tuple[tuple[str, frozenset[enum.Enum]], ...] = ()
    """The admitted calls that may move the machine, with the states they may lead to."""


class TurnGuard:
    """Applies the one-turn rule for one state machine (see the module docstring)."""

    def __init__(
        self,
        *,
        machine: str,
        offered_in: Mapping[enum.Enum, frozenset[str]],
        targets: Mapping[str, frozenset[enum.Enum]],
        current: Callable[[Mapping[str, Any]], enum.Enum | None],
    ) -> None:
        self.machine = machine
        self.offered_in = offered_in
        """The tool names offered in each state."""
        self.targets = targets
        """For each transition tool, the states its successful call may lead to."""
        self.current = current
        """The machine's current state, read from a run's shared state."""
        self._key = f"harness.turns.{machine}"

    def _turn(self, context: CallContext) -> _Turn | None:
        current = self.current(context.state)
        if current is None:  # not in a run of this machine (a direct call): no rule
            return None
        turns: dict[str, _Turn] = context.state.setdefault(self._key, {})
        turn = turns.get(context.run_id)
        if turn is None or turn.iteration != context.iteration:
            turn = turns[context.run_id] = _Turn(context.iteration, current, frozenset({current}))
        return turn

    def refusal(self, tool_name: str, context: CallContext) -> ToolResult | None:
        """The answer to a call the rule refuses, or ``None`` when it may run."""
        turn = self._turn(context)
        if turn is None or tool_name not in self.offered_in[turn.start]:
            return None  # not offered by the machine now: the machine's other rules apply
        missing = sorted(s.name for s in turn.possible if tool_name not in self.offered_in[s])
        if not missing:
            return None
        earlier = [
            name
            for name, targets in turn.movers
            if any(tool_name not in self.offered_in[s] for s in targets)
        ]
        by = ", ".join(repr(name) for name in dict.fromkeys(earlier))
        return ToolResult.error(
            f"Tool {tool_name!r} was not run: {by}, called before it in this turn, may move "
            f"{self.machine} to state {' or '.join(missing)}, where {tool_name!r} is not "
            "offered. Call it again in your next turn if it is still offered.",
            kind=STATE_CHANGED,
        )

    def admitted(self, tool_name: str, context: CallContext) -> None:
        """Record that a call will run: the states its transition may lead to join the turn."""
        targets = self.targets.get(tool_name)
        turn = self._turn(context)
        if targets is None or turn is None:
            return
        context.state[self._key][context.run_id] = dataclasses.replace(
            turn,
            possible=turn.possible | targets,
            movers=(*turn.movers, (tool_name, targets)),
        )


@dataclasses.dataclass(frozen=True, eq=False)
class StateBoundTool(DelegatingTool):
    """A state machine's tool: preparing a call applies the machine's one-turn rule."""

    guard: TurnGuard | None = dataclasses.field(default=None, repr=False)
    """The rule of the machine the tool belongs to."""

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        guard = self.guard
        refused = guard.refusal(self.name, context) if guard is not None else None
        if refused is not None:
            return refused
        prepared = super().prepare(arguments, context)
        if guard is not None and not isinstance(prepared, ToolResult):
            guard.admitted(self.name, context)
        return prepared
