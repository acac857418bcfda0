"""``Session`` under misuse (issue 34 sections 2 and 6): a second concurrent ``send`` is
refused (not queued) and leaves the running turn intact; histories that break the
call/result pairing, two system prompts and a broken ``resets_per_turn`` are refused
before anything is sent."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import pytest

from harness import InjectionStrategy, Session, UsageError, llm_tool, run
from harness.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
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


# -- what a session is given (section 6) -----------------------------------------------------

CALL = ToolCall(id="c1", name="lookup", arguments="{}")


def _session(**kwargs: Any) -> Session:
    return Session(ScriptedModel([reply("a"), reply("b")], require_exhausted=False), **kwargs)


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([ToolMessage(tool_call_id="x", content="r")], "message 1 (a ToolMessage for call 'x')"),
        (
            [UserMessage(content="hi"), AssistantMessage(tool_calls=(CALL,))],
            "message 2 (an assistant message) calls lookup (id 'c1'), which no ToolMessage",
        ),
        (
            [
                UserMessage(content="hi"),
                AssistantMessage(tool_calls=(CALL,)),
                UserMessage(content="and?"),
            ],
            "message 2 (an assistant message) calls lookup (id 'c1'), which no ToolMessage",
        ),
    ],
)
def test_a_turn_that_breaks_the_call_result_pairing_is_refused_before_it_is_sent(
    messages: list[Any], problem: str
) -> None:
    session = _session()
    with pytest.raises(UsageError, match=re.escape(f"send() for turn 1: {problem}")):
        session.send(messages)
    assert session.model.requests == [] and not session.failed  # nothing sent, nothing lost
    assert session.send("hi").output == "a"


def test_a_history_with_an_unanswered_call_is_refused_by_session_and_run() -> None:
    history = [UserMessage(content="hi"), AssistantMessage(tool_calls=(CALL,))]
    with pytest.raises(UsageError, match=r"Session\(messages=\.\.\.\): message 2"):
        _session(messages=history)
    with pytest.raises(UsageError, match="the prompt's messages: message 2"):
        run(ScriptedModel([reply("x")], require_exhausted=False), history)
    answered = [*history, ToolMessage(tool_call_id="c1", content="found")]
    assert _session(messages=answered).send("thanks").output == "a"


def test_system_and_a_system_message_in_the_history_are_refused() -> None:
    history = [SystemMessage(content="Be brief."), UserMessage(content="hi")]
    with pytest.raises(UsageError, match="give the system prompt once"):
        _session(system="Be kind.", messages=history)
    session = _session(system="Be kind.", messages=[UserMessage(content="hi")])
    session.send("again")
    sent = session.model.requests[0].messages  # type: ignore[attr-defined]
    assert [m.role for m in sent].count("system") == 1


class _Broken(InjectionStrategy):
    @property
    def resets_per_turn(self) -> bool:
        raise RuntimeError("no state here")


class _NotABool(InjectionStrategy):
    resets_per_turn = "yes"  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("strategy", "problem"),
    [
        (_Broken(), "strategy _Broken: reading resets_per_turn raised RuntimeError: no state"),
        (_NotABool(), "strategy _NotABool: resets_per_turn must be a bool, got 'yes'"),
    ],
)
def test_a_strategy_whose_resets_per_turn_is_broken_is_a_usage_error(
    strategy: InjectionStrategy, problem: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(problem)):
        _session(strategies=[strategy])
    with pytest.raises(UsageError, match=re.escape(problem)):
        run(ScriptedModel([reply("x")]), "go", strategies=[strategy])
