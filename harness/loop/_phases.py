"""The loop core's phase machine: which protocol call each phase allows, where each move
leads, and the object that holds the phase.

Like h11's ``_state.py``, two tables and one small object decide the core's state:

- ``ALLOWED``: the protocol calls each ``LoopPhase`` accepts. The core's one guard checks
  every call against it and words every refusal the same way (``refusal``): what was
  called, the phase, and what to call instead.
- ``TRANSITIONS``: ``(phase, trigger) -> next phase``, where a ``Trigger`` is what the
  core found while handling a call (tool calls, an answer, a failure...).
- ``PhaseMachine``: the phase and the error that ended the run, which the core holds.
  ``move`` reads ``TRANSITIONS`` and is the only place the phase changes; ``fail`` is
  the one path to ``failed``; ``refusal`` words a refused call with why the run is where
  it is.

docs/architecture.md ("Phases") describes every row; tests/loop/test_loop_phases.py
checks that page's table against the two tables and drives the core through every move.
"""

from __future__ import annotations

import enum
from typing import Literal

from harness._errors import HarnessError, UsageError
from harness._names import format_names

__all__ = [
    "ALLOWED",
    "TRANSITIONS",
    "Call",
    "LoopPhase",
    "PhaseMachine",
    "Trigger",
    "no_move",
    "refusal",
]

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


class LoopPhase(enum.Enum):
    """Where a ``LoopCore`` is in its run; ``core.phase`` reads it.

    Not to be confused with ``harness.Phases``, the strategy that switches tools by the
    phase of a task.
    """

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


ALLOWED: dict[LoopPhase, tuple[Call, ...]] = {
    LoopPhase.READY: ("begin_iteration",),
    LoopPhase.AWAITING_RESPONSE: ("receive_response",),
    LoopPhase.AWAITING_RESULTS: ("receive_results",),
    LoopPhase.AWAITING_COMPLETIONS: ("settle_completions",),
    LoopPhase.FINISHED: ("result", "begin_turn"),
    LoopPhase.FAILED: (),
}
"""Which protocol calls each phase allows: the one table the core's guard reads."""

TRANSITIONS: dict[tuple[LoopPhase, Trigger], LoopPhase] = {
    (LoopPhase.READY, "requested"): LoopPhase.AWAITING_RESPONSE,
    (LoopPhase.READY, "error"): LoopPhase.FAILED,
    (LoopPhase.AWAITING_RESPONSE, "tool_calls"): LoopPhase.AWAITING_RESULTS,
    (LoopPhase.AWAITING_RESPONSE, "answer"): LoopPhase.FINISHED,
    (LoopPhase.AWAITING_RESPONSE, "answer_retried"): LoopPhase.READY,
    (LoopPhase.AWAITING_RESPONSE, "answer_continued"): LoopPhase.READY,
    (LoopPhase.AWAITING_RESPONSE, "completions_running"): LoopPhase.AWAITING_COMPLETIONS,
    (LoopPhase.AWAITING_RESPONSE, "completions_arrived"): LoopPhase.READY,
    (LoopPhase.AWAITING_RESPONSE, "error"): LoopPhase.FAILED,
    (LoopPhase.AWAITING_RESULTS, "results"): LoopPhase.READY,
    (LoopPhase.AWAITING_RESULTS, "return_direct"): LoopPhase.FINISHED,
    (LoopPhase.AWAITING_RESULTS, "error"): LoopPhase.FAILED,
    (LoopPhase.AWAITING_COMPLETIONS, "completions_running"): LoopPhase.AWAITING_COMPLETIONS,
    (LoopPhase.AWAITING_COMPLETIONS, "completions_arrived"): LoopPhase.READY,
    (LoopPhase.AWAITING_COMPLETIONS, "answer"): LoopPhase.FINISHED,
    (LoopPhase.AWAITING_COMPLETIONS, "error"): LoopPhase.FAILED,
    (LoopPhase.FINISHED, "user_turn"): LoopPhase.READY,
    (LoopPhase.FINISHED, "error"): LoopPhase.FINISHED,
    (LoopPhase.FAILED, "error"): LoopPhase.FAILED,
}
"""Where each trigger moves the core from each phase; a pair not listed is a bug in the core."""


def no_move(phase: LoopPhase, trigger: Trigger) -> HarnessError:
    """The error for a move ``TRANSITIONS`` does not have: a bug in the core."""
    return HarnessError(
        f"internal error in the loop core: no move from {phase.value!r} on {trigger!r} "
        "in harness.loop._phases.TRANSITIONS; please report it"
    )


def refusal(call: Call, phase: LoopPhase, detail: str = "") -> str:
    """The one wording of a refused call: "can't X while the run is Y; Z".

    ``detail`` says why the phase is what it is (the pending calls, the error).
    """
    allowed = ALLOWED[phase]
    if phase is LoopPhase.FINISHED:  # result(), or a session's next user turn
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


class PhaseMachine:
    """The phase of one run and the error that ended it: what a ``LoopCore`` holds of its
    state, moved only through ``TRANSITIONS``."""

    __slots__ = ("error", "phase")

    def __init__(self) -> None:
        self.phase = LoopPhase.READY
        """Where the run is (the core shows it read-only as ``core.phase``)."""
        self.error: BaseException | None = None
        """The error that ended the run (``phase`` is ``FAILED``), if one did."""

    def move(self, trigger: Trigger) -> None:
        """The one place the phase changes: through ``TRANSITIONS``."""
        try:
            self.phase = TRANSITIONS[self.phase, trigger]
        except KeyError:
            raise no_move(self.phase, trigger) from None

    def fail(self, exc: BaseException) -> bool:
        """Move on ``"error"``; True when ``exc`` is what ended the run (an unfinished run
        fails with its first error, kept in ``error``; a finished run stays finished)."""
        self.move("error")
        if self.phase is LoopPhase.FAILED and self.error is None:
            self.error = exc
            return True
        return False

    def refusal(self, call: Call, *, iteration: int, pending: int) -> UsageError:
        """The error for ``call`` made in a phase that does not allow it, saying why the run
        is where it is: ``iteration`` is the current one, ``pending`` its calls awaited."""
        phase = self.phase
        detail = ""
        if phase is LoopPhase.AWAITING_RESPONSE:
            detail = f"iteration {iteration} sent its request"
        elif phase is LoopPhase.AWAITING_RESULTS:
            detail = f"{pending} tool call(s) of iteration {iteration} are pending"
        elif phase is LoopPhase.AWAITING_COMPLETIONS:
            detail = "the model answered while async tool calls are running"
        elif phase is LoopPhase.FAILED and self.error is not None:
            detail = f"it ended with {type(self.error).__name__}: {self.error}"
        return UsageError(refusal(call, phase, detail))
