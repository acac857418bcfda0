"""The explorer persona: calls every newly offered tool once, then answers."""

from __future__ import annotations

import random
from typing import Any

from harness._errors import UsageError
from harness._validation import is_int
from harness.loop import ModelRequest
from harness.models._personas._base import ArgumentOverrides, Persona, Plan
from harness.models._personas._state import RunState
from harness.models._personas._weak import WeakBehavior

__all__ = ["Explorer"]


class Explorer(Persona):
    """Calls each tool once as soon as it is offered (tools injected mid-run too).

    Each turn it picks ``per_turn`` tools it has not called yet (in a seeded
    random order) and calls them with arguments generated from their JSON
    schemas; once every offered tool was called it answers. ``max_calls``
    bounds a run whose toolset keeps growing.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        per_turn: int = 1,
        max_calls: int = 100,
        weak: WeakBehavior | None = None,
        arguments: ArgumentOverrides | None = None,
        name: str = "explorer",
    ) -> None:
        problems = []
        if not _positive(per_turn):
            problems.append(f"per_turn must be an int >= 1, got {per_turn!r}")
        if not _positive(max_calls):
            problems.append(f"max_calls must be an int >= 1, got {max_calls!r}")
        if problems:
            raise UsageError("Explorer: " + "; ".join(problems))
        super().__init__(seed=seed, weak=weak, arguments=arguments, name=name)
        self.per_turn = per_turn
        self.max_calls = max_calls

    def plan(self, request: ModelRequest, state: RunState, rng: random.Random) -> Plan:
        pending = [n for n in state.offered if n not in state.called]
        made = sum(state.called.values())
        choice = request.settings.tool_choice
        if choice is not None and choice.mode == "none":
            return Plan(
                action="answer",
                reason="tool_choice is 'none'",
                text=self.answer_text(request, state),
            )
        if not pending:
            return Plan(
                action="answer",
                reason=f"every offered tool was called ({len(state.called)} tools)",
                text=self.answer_text(request, state),
            )
        if made >= self.max_calls:
            return Plan(
                action="give_up",
                reason=f"max_calls={self.max_calls} reached with {len(pending)} tools left",
                text=self.answer_text(request, state),
            )
        count = min(self.per_turn, len(pending), self.max_calls - made)
        chosen = tuple(rng.sample(pending, count))
        return Plan(
            action="call",
            reason=f"not called yet: {', '.join(chosen)} ({len(pending)} pending)",
            calls=chosen,
        )


def _positive(value: Any) -> bool:
    return is_int(value, minimum=1)
