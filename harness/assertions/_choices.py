"""``tool_choices``: the ``tool_choice`` each request was made with, as the trace records it.

A strategy (a ``ToolChoiceSchedule``, a function of the history) or ``LoopOptions`` sets
each request's ``tool_choice``; the loop records it in ``IterationRecord.tool_choice``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness._errors import ScriptError, UsageError
from harness.assertions._verdict import Expectation, Failure, after_last, in_turn
from harness.loop import Trace
from harness.loop._tool_choice import show_choice
from harness.models._scripted._expect_choice import tool_choice_from_data
from harness.tools import ToolChoice

__all__ = ["tool_choices"]


class _ToolChoices(Expectation):
    def __init__(self, choices: tuple[ToolChoice | None, ...]) -> None:
        self.choices = choices

    @property
    def description(self) -> str:
        return "tool choices " + " -> ".join(show_choice(c) for c in self.choices)

    def evaluate(self, trace: Trace) -> Failure | None:
        made = [it.tool_choice for it in trace.iterations]
        for position, (want, it) in enumerate(zip(self.choices, trace.iterations, strict=False), 1):
            if it.tool_choice != want:
                return Failure(
                    problem=f"request {position} (iteration {it.index}) was made with "
                    f"{show_choice(it.tool_choice)}, expected {show_choice(want)}",
                    iteration=it.index,
                    expected=f"tool_choice {show_choice(want)}",
                )
        if len(made) != len(self.choices):
            return Failure(
                problem=f"{len(made)} requests were made, {len(self.choices)} tool choices "
                f"expected",
                iteration=after_last(trace) if len(made) < len(self.choices) else None,
                expected=self.description,
            )
        return None


def tool_choices(
    *choices: ToolChoice | str | Mapping[str, Any] | None, turn: int | None = None
) -> Expectation:
    """The requests (``turn=``: of that user turn of a session) were made with exactly these
    tool choices, in order: each ``"auto"``, ``"none"``, ``"required"``, a tool name, a
    ``ToolChoice``, ``{allowed: [names], mode: ...}``, or ``None`` (no tool choice sent)."""
    if not choices:
        raise UsageError("tool_choices() needs the tool choice of each request, in order")
    parsed = []
    for position, choice in enumerate(choices, 1):
        try:
            parsed.append(tool_choice_from_data(choice, f"tool_choices() choice {position}"))
        except ScriptError as exc:
            raise UsageError(str(exc)) from None
    return in_turn(_ToolChoices(tuple(parsed)), turn)
