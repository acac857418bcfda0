"""``Session`` under misuse (issue 34 sections 2 and 6): a second concurrent ``send`` is
refused (not queued) and leaves the running turn intact."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from harness import Session, UsageError, llm_tool
from harness.models import ScriptedModel, call, reply


def _blocking_session() -> tuple[Session, threading.Event, threading.Event]:
    """A session whose first turn waits inside a tool until ``release`` is set."""
    entered, release = threading.Event(), threading.Event()

    @llm_tool
    def wait() -> str:
        """Wait."""
        entered.set()
        release.wait(30)
        return "waited"

    model = ScriptedModel([call("wait", {}), reply("first"), reply("second")])
    return Session(model, tools=[wait]), entered, release


def test_a_second_concurrent_send_is_refused_and_the_first_turn_is_intact() -> None:
    session, entered, release = _blocking_session()
    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(session.send("one")))
    first.start()
    assert entered.wait(30)
    with pytest.raises(UsageError, match=r"send\(\) while turn 1 is still being sent"):
        session.send("two")
    with pytest.raises(UsageError, match=r"close\(\) while turn 1"):
        session.close()
    release.set()
    first.join(30)
    assert [r.output for r in results] == ["first"]
    assert session.send("two").output == "second"  # the session goes on, in order
    session.close()
    users = [m.content for m in session.messages if m.role == "user"]
    assert users == ["one", "two"] and not session.failed


def _race() -> tuple[Session, list[Any]]:
    """Two threads sending on one session at the same moment: each one's answer or error."""
    session = Session(ScriptedModel([reply("a"), reply("b")], require_exhausted=False))
    barrier = threading.Barrier(2)
    outcomes: list[Any] = []

    def send(text: str) -> None:
        barrier.wait()
        try:
            outcomes.append(session.send(text).output)
        except UsageError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=send, args=(t,)) for t in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return session, outcomes


def test_two_racing_threads_never_merge_turns() -> None:
    """Each send runs its whole turn or is refused: never an internal error, never two
    turns merged."""
    for _ in range(20):
        session, outcomes = _race()
        answered = [o for o in outcomes if isinstance(o, str)]
        assert len(outcomes) == 2 and not session.failed
        assert len(session.results) == len(answered) == session.turns
        assert [m.role for m in session.messages] == ["user", "assistant"] * len(answered)


def test_two_concurrent_asends_are_refused_too() -> None:
    async def scenario() -> list[Any]:
        gate = asyncio.Event()

        @llm_tool
        async def pause() -> str:
            """Pause."""
            await gate.wait()
            return "done"

        session = Session(ScriptedModel([call("pause", {}), reply("ok")]), tools=[pause])
        first = asyncio.create_task(session.asend("one"))
        await asyncio.sleep(0.05)
        try:
            await session.asend("two")
        except UsageError as exc:
            refused: Any = exc
        gate.set()
        return [await first, refused]

    result, refused = asyncio.run(scenario())
    assert result.output == "ok" and "asend() while turn 1" in str(refused)
