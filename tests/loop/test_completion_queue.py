"""The run's queue of pending completions, on its own: states, deadlines, waits, wake-ups."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from harness import CompletionError, LateCompletion, ToolResult
from harness.loop import FOLLOW_UP, follow_up_source, follow_up_text
from harness.loop._completions import CompletionQueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def started(deadline: float | None = None) -> ToolResult:
    return ToolResult.started(completion_deadline=deadline)


def test_a_pending_call_moves_through_arrived_queued_delivered() -> None:
    queue = CompletionQueue()
    assert not queue.active
    queue.register("c1", "job", started(), iteration=1)
    assert queue.active and queue.is_open("c1")
    assert [e.call_id for e in queue.pending()] == ["c1"]
    queue.complete("c1", "job", ToolResult.plain("done"))
    assert not queue.is_open("c1") and queue.pending() == []
    [entry] = queue.take_arrived()
    assert (entry.state, entry.started_iteration, entry.result.content) == ("queued", 1, "done")  # type: ignore[union-attr]
    assert queue.take_arrived() == []
    queue.delivered(entry)
    with pytest.raises(CompletionError, match=r"called twice.*delivered"):
        queue.complete("c1", "job", ToolResult.plain("again"))


def test_an_early_callback_is_held_until_registration_or_lost_as_not_async() -> None:
    queue = CompletionQueue()
    queue.complete("c1", "job", ToolResult.plain("early"))
    assert queue.active and not queue.is_open("c1")
    assert queue.take_arrived() == []  # not yet: the call's result is not recorded
    with pytest.raises(CompletionError, match="held until the call's result is recorded"):
        queue.complete("c1", "job", ToolResult.plain("twice"))
    queue.register("c1", "job", started(), iteration=2)
    assert [e.call_id for e in queue.take_arrived()] == ["c1"]

    queue.complete("c2", "job", ToolResult.plain("early"))
    lost = queue.not_async("c2")
    assert lost is not None and (lost.state, lost.reason) == ("lost", "not_async")
    assert queue.not_async("c2") is None and queue.not_async("unknown") is None
    with pytest.raises(LateCompletion, match="not_async"):
        queue.complete("c2", "job", ToolResult.plain("late"))


def test_deadlines_per_call_win_and_only_expired_calls_are_lost() -> None:
    clock = Clock()
    queue = CompletionQueue(clock=clock)
    queue.register("short", "a", started(1), iteration=1)
    queue.register("default", "b", started(), iteration=1)
    waiting, longest = queue.start_wait(default_deadline=5)
    assert [e.call_id for e in waiting] == ["short", "default"] and longest == 5
    clock.now += 2
    assert [e.call_id for e in queue.lose("deadline", expired_only=True)] == ["short"]
    assert [e.call_id for e in queue.pending()] == ["default"]
    clock.now += 1
    _, longest = queue.start_wait(default_deadline=60)  # a started wait keeps its deadline
    assert longest == pytest.approx(2)
    clock.now += 10
    queue.wait()  # every deadline passed: returns at once
    assert [e.reason for e in queue.lose("deadline", expired_only=True)] == ["deadline"]


def test_close_loses_everything_open_and_refuses_later_callbacks() -> None:
    queue = CompletionQueue()
    queue.register("p", "job", started(), iteration=1)
    queue.register("a", "job", started(), iteration=1)
    queue.complete("a", "job", ToolResult.plain("arrived"))
    queue.complete("e", "other", ToolResult.plain("early"))
    lost = queue.close("run_failed")
    assert sorted((e.call_id, e.reason) for e in lost) == [
        ("a", "run_failed"),
        ("e", "not_async"),
        ("p", "run_failed"),
    ]
    assert queue.close("run_failed") == []
    assert not queue.is_open("new")
    with pytest.raises(LateCompletion) as err:
        queue.complete("new", "job", ToolResult.plain("x"))
    assert (err.value.reason, err.value.call_id) == ("run_ended", "new")
    with pytest.raises(LateCompletion, match="run_failed"):
        queue.complete("p", "job", ToolResult.plain("x"))


def test_wait_returns_when_the_last_pending_call_arrives_from_another_thread() -> None:
    queue = CompletionQueue()
    queue.register("c1", "job", started(), iteration=1)
    queue.register("c2", "job", started(), iteration=1)
    queue.start_wait(default_deadline=30)

    def report() -> None:
        queue.complete("c1", "job", ToolResult.plain("1"))
        time.sleep(0.02)
        queue.complete("c2", "job", ToolResult.plain("2"))

    begin = time.monotonic()
    threading.Thread(target=report).start()
    queue.wait()
    assert time.monotonic() - begin < 10
    assert [e.call_id for e in queue.take_arrived()] == ["c1", "c2"]


def test_wait_without_a_started_wait_or_pending_call_returns_at_once() -> None:
    queue = CompletionQueue()
    queue.wait()
    queue.register("c1", "job", started(), iteration=1)
    queue.wait()  # no deadline was set: nothing to wait for
    asyncio.run(queue.wait_async())


def test_wait_async_is_woken_by_a_thread_and_by_a_task() -> None:
    async def main() -> float:
        queue = CompletionQueue()
        queue.register("t", "job", started(), iteration=1)
        queue.register("k", "job", started(), iteration=1)
        queue.start_wait(default_deadline=30)
        threading.Timer(0.01, queue.complete, ("t", "job", ToolResult.plain("thread"))).start()

        async def task() -> None:
            await asyncio.sleep(0.02)
            queue.complete("k", "job", ToolResult.plain("task"))

        pending = asyncio.create_task(task())
        begin = time.monotonic()
        await queue.wait_async()
        await pending
        assert sorted(e.call_id for e in queue.take_arrived()) == ["k", "t"]
        assert queue._async_waiters == []
        return time.monotonic() - begin

    assert asyncio.run(main()) < 10


def test_wait_async_gives_up_at_the_deadline() -> None:
    queue = CompletionQueue()
    queue.register("c", "job", started(0.02), iteration=1)
    queue.start_wait(default_deadline=30)
    begin = time.monotonic()
    asyncio.run(queue.wait_async())
    assert 0.015 <= time.monotonic() - begin < 5
    assert [e.call_id for e in queue.lose("deadline", expired_only=True)] == ["c"]


def test_a_closed_event_loop_among_the_waiters_does_not_break_a_report() -> None:
    queue = CompletionQueue()
    queue.register("c", "job", started(), iteration=1)
    loop = asyncio.new_event_loop()
    future = loop.create_future()
    loop.close()
    queue._async_waiters.append((loop, future))
    queue.complete("c", "job", ToolResult.plain("ok"))  # no RuntimeError from the dead loop
    assert [e.call_id for e in queue.take_arrived()] == ["c"]


def test_follow_up_texts_name_the_tool_and_call_and_parse_back() -> None:
    text = follow_up_text("export", "call_9", "3 rows", is_error=False)
    assert text == FOLLOW_UP.format(
        name="export", call_id="call_9", verb="reported back", content="3 rows"
    )
    assert text == "[Async result] tool 'export' (call call_9) reported back:\n3 rows"
    assert follow_up_source(text) == ("export", "call_9")
    failed = follow_up_text("export", "id (x)", "boom", is_error=True)
    assert failed.startswith("[Async result] tool 'export' (call id (x)) failed:\n")
    assert follow_up_source(failed) == ("export", "id (x)")
    assert follow_up_source("just a user message") is None
    assert follow_up_source(None) is None


def test_the_longest_wait_is_never_negative() -> None:
    """A wait started earlier whose deadline has passed reports 0 seconds left (the
    ``CompletionsAwaited.deadline``), not a negative wait; nothing pending waits 0."""
    clock = Clock()
    queue = CompletionQueue(clock=clock)
    assert queue.start_wait(default_deadline=5) == ([], 0.0)
    queue.register("c1", "job", started(1), iteration=1)
    queue.start_wait(default_deadline=5)
    clock.now += 3
    waiting, longest = queue.start_wait(default_deadline=5)
    assert [e.call_id for e in waiting] == ["c1"] and longest == 0.0
