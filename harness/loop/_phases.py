"""The loop core's phases: which protocol call each allows, and where each move leads.

Like h11's ``_state.py``, two tables and nothing else decide the core's state:

- ``ALLOWED``: the protocol calls each ``Phase`` accepts. One guard checks every call
  against it and words every refusal the same way (``refusal``): what was called, the
  phase, and what to call instead.
- ``TRANSITIONS``: ``(phase, trigger) -> next phase``, where a ``Trigger`` is what the
  core found while handling a call (tool calls, an answer, a failure...). The core's
  ``_move`` reads it, and the core changes its phase nowhere else.

docs/architecture.md ("Phases") describes every row; tests/loop/test_loop_phases.py
checks that page's table against these two and drives the core through every move.
"""

from __future__ import annotations

import enum
from typing import Literal

from harness._errors import HarnessError
from harness._validation import format_names

__all__ = ["ALLOWED", "TRANSITIONS", "Call", "Phase", "Trigger", "no_move", "refusal"]

Call = Literal[
    "begin_iteration",
    "receive_response",
    "receive_results",
    "settle_completions",
    "result",
    "begin_turn",
]
"""The protocol calls a driver makes on the core."""

Trigger = Literal[
    "requested",
    "tool_calls",
    "answer",
    "answer_retried",
    "answer_continued",
    "completions_running",
    "completions_arrived",
    "results",
    "return_direct",
    "user_turn",
    "error",
]
"""What moved the core: the second key of ``TRANSITIONS``."""


class Phase(enum.Enum):
    """Where a ``LoopCore`` is in its run; ``core.phase`` reads it."""

    READY = "ready"
    """An iteration may begin: call ``begin_iteration()``."""
    AWAITING_RESPONSE = "awaiting a response"
    """The request is out: call ``receive_response()`` with the model's answer."""
    AWAITING_RESULTS = "awaiting tool results"
    """Tool calls are pending: call ``receive_results()`` with one result per call."""
    AWAITING_COMPLETIONS = "awaiting async completions"
    """The model answered while async tool calls are running (``pending_completions="wait"``):
    wait on ``core.completions``, then call ``settle_completions()``."""
    FINISHED = "finished"
    """The model gave its final answer: call ``result()``; a session's next user turn
    calls ``begin_turn()``."""
    FAILED = "failed"
    """The run ended with an error, kept in ``core.error``; start a new run."""

    # Members are singletons compared by identity, so identity hashing is equivalent;
    # Enum's own __hash__ is a Python call (see harness/loop/_fast.py for what it buys).
    __hash__ = object.__hash__


ALLOWED: dict[Phase, tuple[Call, ...]] = {
    Phase.READY: ("begin_iteration",),
    Phase.AWAITING_RESPONSE: ("receive_response",),
    Phase.AWAITING_RESULTS: ("receive_results",),
    Phase.AWAITING_COMPLETIONS: ("settle_completions",),
    Phase.FINISHED: ("result", "begin_turn"),
    Phase.FAILED: (),
}
"""Which protocol calls each phase allows: the one table the core's guard reads."""

TRANSITIONS: dict[tuple[Phase, Trigger], Phase] = {
    (Phase.READY, "requested"): Phase.AWAITING_RESPONSE,
    (Phase.READY, "error"): Phase.FAILED,
    (Phase.AWAITING_RESPONSE, "tool_calls"): Phase.AWAITING_RESULTS,
    (Phase.AWAITING_RESPONSE, "answer"): Phase.FINISHED,
    (Phase.AWAITING_RESPONSE, "answer_retried"): Phase.READY,
    (Phase.AWAITING_RESPONSE, "answer_continued"): Phase.READY,
    (Phase.AWAITING_RESPONSE, "completions_running"): Phase.AWAITING_COMPLETIONS,
    (Phase.AWAITING_RESPONSE, "completions_arrived"): Phase.READY,
    (Phase.AWAITING_RESPONSE, "error"): Phase.FAILED,
    (Phase.AWAITING_RESULTS, "results"): Phase.READY,
    (Phase.AWAITING_RESULTS, "return_direct"): Phase.FINISHED,
    (Phase.AWAITING_RESULTS, "error"): Phase.FAILED,
    (Phase.AWAITING_COMPLETIONS, "completions_running"): Phase.AWAITING_COMPLETIONS,
    (Phase.AWAITING_COMPLETIONS, "completions_arrived"): Phase.READY,
    (Phase.AWAITING_COMPLETIONS, "answer"): Phase.FINISHED,
    (Phase.AWAITING_COMPLETIONS, "error"): Phase.FAILED,
    (Phase.FINISHED, "user_turn"): Phase.READY,
    (Phase.FINISHED, "error"): Phase.FINISHED,
    (Phase.FAILED, "error"): Phase.FAILED,
}
"""Where each trigger moves the core from each phase; a pair not listed is a bug in the core."""


def no_move(phase: Phase, trigger: Trigger) -> HarnessError:
    """The error for a move ``TRANSITIONS`` does not have: a bug in the core."""
    return HarnessError(
        f"internal error in the loop core: no move from {phase.value!r} on {trigger!r} "
        "in harness.loop._phases.TRANSITIONS; please report it"
    )


def refusal(call: Call, phase: Phase, detail: str = "") -> str:
    """The one wording of a refused call: "can't X while the run is Y; Z".

    ``detail`` says why the phase is what it is (the pending calls, the error).
    """
    allowed = ALLOWED[phase]
    if phase is Phase.FINISHED:  # result(), or a session's next user turn
        fix = (
            "call result() next, or begin_turn() for a session's next user turn, "
            "or start a new run with a new LoopCore"
        )
    elif allowed:
        fix = f"call {format_names([f'{name}()' for name in allowed], quote=False)} next"
    else:
        fix = "no call is allowed any more; start a new run with a new LoopCore"
    why = f" ({detail})" if detail else ""
    return f"can't {call}() while the run is {phase.value}{why}; {fix}"
