"""``Session``: a conversation of several user turns over one loop.

A run is one user turn. A session keeps what a chat application keeps between the
user's messages: the history, the toolset with everything injected into it, the
strategies' state, the blackboard and the usage; its trace spans the turns
(``trace.turns``, ``IterationRecord.turn``, ``trace.turn(n)``). Each ``send`` runs the
loop for one user message on the same ``LoopCore`` (``begin_turn``: phase ``finished``
-> ``ready``) and returns that turn's ``RunResult``::

    with Session(model, tools=[search_customer], strategies=[EntityDiscovery()]) as chat:
        first = chat.send("Find John Smith.")
        second = chat.send("What's his average spend?")  # the injected tools are still there

``close()`` (or the ``with`` block's end) tells the model the session ended
(``Model.end_run``), once: a scripted model then checks that its script was used up, a
cassette model that every recorded request was made. A turn that fails ends the session:
the error carries the trace and history, which the session keeps, and a later ``send``
raises a ``UsageError`` saying so. One turn runs at a time: a ``send`` (or ``close``)
while another thread's or task's ``send`` runs raises ``UsageError``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

from harness._errors import HarnessError, UsageError
from harness.loop._capture import resolve_model
from harness.loop._core import LoopCore
from harness.loop._drivers import Prompt, Tools, adrive, build_core, drive, observed
from harness.loop._events import Observer
from harness.loop._history import check_history
from harness.loop._model import Model, Usage
from harness.loop._options import LoopOptions
from harness.loop._phases import LoopPhase
from harness.loop._result import RunResult
from harness.loop._strategy import InjectionStrategy
from harness.loop._trace import Trace
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from harness.tools import Toolset

__all__ = ["Session"]

_MESSAGES = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)


def _turn_messages(prompt: Prompt, turn: int) -> list[Message]:
    if isinstance(prompt, str):
        if not prompt:
            raise UsageError(f"send() needs the user's message for turn {turn}, got ''")
        return [UserMessage(content=prompt)]
    if isinstance(prompt, Sequence) and prompt and all(isinstance(m, _MESSAGES) for m in prompt):
        return [m for m in prompt if not isinstance(m, str)]
    raise UsageError(
        f"send() takes the user's text or a non-empty list of messages for turn {turn}, "
        f"got {prompt!r}"
    )


class Session:
    """Several user turns over one history, toolset, strategy state and blackboard.

    The arguments are those of ``harness.run`` (``tools``, ``strategies``, ``system``,
    ``options`` or keyword options, ``observers``, ``state``), plus ``messages``: a
    history to start from (an earlier conversation). ``LoopOptions.max_iterations``
    counts each turn; strategies whose ``resets_per_turn`` is true start each turn with
    empty ``state_for`` storage.
    """

    def __init__(
        self,
        model: Model,
        *,
        tools: Tools = (),
        strategies: Sequence[InjectionStrategy] | None = None,
        system: str | None = None,
        messages: Sequence[Message] = (),
        options: LoopOptions | None = None,
        observers: Sequence[Observer] = (),
        state: dict[str, Any] | None = None,
        **option_overrides: Any,
    ) -> None:
        self.model = resolve_model(model)
        start = list(messages)
        check_history(start, where="Session(messages=...)")
        if system and any(isinstance(m, SystemMessage) and not m.tools for m in start):
            raise UsageError(
                "Session(system=..., messages=...): the messages hold a system prompt "
                "already; give the system prompt once (system=, or a SystemMessage in "
                "messages), not both"
            )
        # the core is built now (tools, strategies and options are checked here); its
        # history gets the first user message at the first send()
        self._core: LoopCore = build_core(
            start or None,
            tools=tools,
            strategies=strategies,
            system=system if not start else None,
            options=options,
            observers=observers,
            state=state,
            option_overrides=option_overrides,
            capabilities=self.model.capabilities,
        )
        if system and start:
            self._core.messages.insert(0, SystemMessage(content=system))
        self._started = False
        self._closed = False
        self._sending = threading.Lock()
        self.results: list[RunResult] = []
        """The ``RunResult`` of each finished turn, in order."""

    # -- what the session keeps ---------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The whole history, every turn's messages in order."""
        return self._core.messages

    @property
    def trace(self) -> Trace:
        """The trace of every turn (``trace.turns``; ``trace.turn(n)`` reads one)."""
        return self._core.trace

    @property
    def toolset(self) -> Toolset:
        """The tools offered now, injections of earlier turns included."""
        return self._core.toolset

    @property
    def state(self) -> dict[str, Any]:
        """The blackboard shared by tools and strategies across turns."""
        return self._core.state

    @property
    def usage(self) -> Usage:
        """Token usage of every turn so far."""
        return self._core.usage

    @property
    def turns(self) -> int:
        """How many user turns were sent (the failed one included)."""
        return self._core.turn if self._started else 0

    @property
    def error(self) -> BaseException | None:
        """The error that ended the session, if a turn failed."""
        return self._core.error

    @property
    def failed(self) -> bool:
        """True once a turn failed: the session takes no more turns."""
        return self._core.phase is LoopPhase.FAILED

    @property
    def core(self) -> LoopCore:
        """The sans-IO core the session drives (read its ``phase``)."""
        return self._core

    # -- turns --------------------------------------------------------------------------

    def _begin(self, prompt: Prompt) -> None:
        turn = self.turns + 1 if self._started else 1
        if self._closed:
            raise UsageError(
                f"send() after close(): the session ended after {self.turns} turn(s); "
                "start a new Session (pass messages=session.messages to go on from its history)"
            )
        if self.failed:
            error = self._core.error
            problem = UsageError(
                f"send() on a failed session: turn {self.turns} ended with "
                f"{type(error).__name__}: {error}. The session keeps its history "
                f"({len(self.messages)} messages: session.messages) and trace "
                "(session.trace); start a new Session, e.g. with "
                "messages=session.messages, to go on"
            )
            problem.attach_run(self.trace, self.messages)
            raise problem
        messages = _turn_messages(prompt, turn)
        check_history(messages, where=f"send() for turn {turn}")
        if not self._started:
            self._core.messages.extend(messages)
            self._started = True
        else:
            self._core.begin_turn(messages)

    @contextlib.contextmanager
    def _turn(self) -> Iterator[Any]:
        with observed(self._core, self.model) as finished:
            yield finished

    @contextlib.contextmanager
    def _one_at_a_time(self, call: str) -> Iterator[None]:
        """Refuse ``call`` while another thread or task is sending a turn.

        A second concurrent ``send`` is refused, not queued: the turns of a conversation
        have an order, and which of two racing user messages comes first is the caller's
        to decide (queueing would pick one silently, and each turn's answer would depend
        on a race). The refusal changes nothing: the running turn goes on.
        """
        if not self._sending.acquire(blocking=False):
            raise UsageError(
                f"{call} while turn {self.turns} is still being sent (from another thread "
                "or task): a Session takes one user turn at a time. Wait for that send() to "
                "return, or give each concurrent conversation its own Session"
            )
        try:
            yield
        finally:
            self._sending.release()

    def send(self, prompt: Prompt) -> RunResult:
        """Run the loop for the user's next message (a text, or messages) until its
        answer; returns the turn's ``RunResult``. A ``send`` while another thread's (or
        task's) is running raises ``UsageError``: one turn at a time."""
        with self._one_at_a_time("send()"):
            self._begin(prompt)
            with self._turn() as finished:
                result = drive(self._core, self.model)
                finished(result)
            self.results.append(result)
            return result

    async def asend(self, prompt: Prompt) -> RunResult:
        """Async ``send``: async tools are awaited, parallel calls run concurrently."""
        with self._one_at_a_time("asend()"):
            self._begin(prompt)
            with self._turn() as finished:
                result = await adrive(self._core, self.model)
                finished(result)
            self.results.append(result)
            return result

    # -- the end ------------------------------------------------------------------------

    def close(self) -> None:
        """End the session: the model is told once (``end_run``; a failed session told it
        when the turn failed). A scripted model raises ``ScriptError`` here when steps are
        left, a cassette model ``CassetteUnused`` when recorded requests were not made."""
        if self._closed:
            return
        with self._one_at_a_time("close()"):
            self._closed = True
        if self._started and not self.failed:
            try:
                self.model.end_run(completed=True)
            except HarnessError as exc:
                exc.attach_run(self.trace, self.messages)
                raise

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
        else:
            self._closed = True  # the error is the one to see; the turn told the model

    def __repr__(self) -> str:
        state = "failed" if self.failed else ("closed" if self._closed else "open")
        return f"<Session {self.turns} turn(s), {len(self.messages)} messages, {state}>"
