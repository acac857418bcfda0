"""The loop core's phases and which protocol calls each one allows, in one table.

Like h11's ``_state.py``: the core's state is one ``Phase``; every protocol call
is checked against ``ALLOWED`` by one guard (``refusal``), which words every
refusal the same way: what was called, the phase, and what to call instead.

====================  ======================  ===============================================
phase                 allowed call            moves to
====================  ======================  ===============================================
ready                 ``begin_iteration``     awaiting a response
awaiting a response   ``receive_response``    awaiting tool results (tool calls), finished (a
                                              valid answer), awaiting async completions (a
                                              valid answer while async calls run) or ready
                                              (an answer to retry, or completions to deliver)
awaiting tool         ``receive_results``     ready, finished (a ``return_direct`` tool's
results                                       result) or failed (a tool raised a
                                              ``LoopSignal``)
awaiting async        ``settle_completions``  ready (completions to deliver with a further
completions                                   turn), finished (none arrived) or itself (some
                                              still within their deadline); the driver waits
                                              on ``core.completions`` first
finished              ``result``              finished
failed                (none)                  failed: the run is over, ``core.error`` says why
====================  ======================  ===============================================

Any exception out of a protocol call (an observer, a strategy, a limit) moves the
core to ``failed`` and is kept in ``core.error``. A refused call changes nothing.
"""

from __future__ import annotations

import enum
from typing import Literal

from harness._validation import format_names

__all__ = ["ALLOWED", "Call", "Phase", "refusal"]

Call = Literal[
    "begin_iteration", "receive_response", "receive_results", "settle_completions", "result"
]
"""The protocol calls a driver makes on the core."""


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
    """The model gave its final answer: call ``result()``."""
    FAILED = "failed"
    """The run ended with an error, kept in ``core.error``; start a new run."""


ALLOWED: dict[Phase, tuple[Call, ...]] = {
    Phase.READY: ("begin_iteration",),
    Phase.AWAITING_RESPONSE: ("receive_response",),
    Phase.AWAITING_RESULTS: ("receive_results",),
    Phase.AWAITING_COMPLETIONS: ("settle_completions",),
    Phase.FINISHED: ("result",),
    Phase.FAILED: (),
}
"""Which protocol calls each phase allows: the one table the core's guard reads."""


def refusal(call: Call, phase: Phase, detail: str = "") -> str:
    """The one wording of a refused call: "can't X while the run is Y; Z".

    ``detail`` says why the phase is what it is (the pending calls, the error).
    """
    allowed = ALLOWED[phase]
    if allowed:
        fix = f"call {format_names([f'{name}()' for name in allowed], quote=False)} next"
    else:
        fix = "no call is allowed any more; start a new run with a new LoopCore"
    if phase is Phase.FINISHED:
        fix += ", or start a new run with a new LoopCore"
    why = f" ({detail})" if detail else ""
    return f"can't {call}() while the run is {phase.value}{why}; {fix}"
