"""The result of a finished run."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.loop._model import Usage
from harness.loop._trace import Trace
from harness.messages import Message

__all__ = ["RunResult"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunResult:
    """What a run produced."""

    output: Any
    """The final answer: text, or the parsed object when an output type was given."""
    messages: list[Message]
    """The full message history, in order."""
    iterations: int
    """Number of model requests made."""
    tools_injected: list[str]
    """Names of all tools added during the run, in order."""
    trace: Trace
    """Per-iteration record of offered tools, calls, results and toolset changes."""
    usage: Usage
    """Summed token usage."""
    state: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    """The run's shared state (blackboard) at the end."""
    user_outputs: list[str] = dataclasses.field(default_factory=list)
    """What tool results said to the user (``user_content`` of non-silent results), in
    order; each was also a ``UserNotified`` event."""
    turn: int = 1
    """The user turn this result ends (a ``Session``'s ``send``; 1 for a plain run).
    ``iterations``, ``tools_injected`` and ``usage`` count this turn; ``messages`` and
    ``trace`` span the session (``trace.turn(n)`` reads one turn)."""

    def __repr__(self) -> str:
        # a summary: asyncio.run(arun(...)) formats its result twice on Python 3.11
        # (signal handler reprs), and a whole history would make that O(history)
        output = repr(self.output)
        if len(output) > 80:
            output = output[:77] + "..."
        return (
            f"RunResult(output={output}, iterations={self.iterations}, "
            f"messages=<{len(self.messages)} messages>, "
            f"tools_injected={self.tools_injected!r}, usage={self.usage!r})"
        )
