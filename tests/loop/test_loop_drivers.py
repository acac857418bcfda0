"""The sync and async drivers: same traces, concurrency, sync/async tools in both."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from loop_helpers import (
    InjectAfter,
    Recorder,
    add,
    assert_history_well_formed,
    boom,
    drive,
    echo,
    extra,
)

from harness import UsageError
from harness.loop import LoopOptions, Model, ModelRequest, ModelResponse, arun, run
from harness.messages import SystemMessage, UserMessage
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import as_tool, llm_tool


def _script() -> list:  # type: ignore[type-arg]
    return [
        calls(call("add", a=1, b=2), call("echo", text="x"), call("boom")),
        call("extra"),
        call("missing"),
        reply("done"),
    ]


def _trace_of(driver: str) -> tuple[dict, list, list]:  # type: ignore[type-arg]
    model = ScriptedModel(_script(), lenient=True)
    rec = Recorder()
    kwargs = dict(
        tools=[add, echo, boom],
        strategies=[InjectAfter("echo", [as_tool(extra)])],
        observers=[rec],
    )
    if driver == "sync":
        result = run(model, "go", **kwargs)  # type: ignore[arg-type]
    else:
        result = asyncio.run(arun(model, "go", **kwargs))  # type: ignore[arg-type]
    return result.trace.to_dict(), result.messages, list(rec.events)  # == ignores timestamps


def test_sync_and_async_drivers_give_identical_traces() -> None:
    sync_trace, sync_messages, sync_events = _trace_of("sync")
    async_trace, async_messages, async_events = _trace_of("async")
    assert sync_trace == async_trace
    assert sync_messages == async_messages
    assert sync_events == async_events
    assert [it["offered"] for it in sync_trace["iterations"]][1] == ["add", "echo", "boom", "extra"]
    assert [c["error_kind"] for c in sync_trace["iterations"][0]["calls"]] == [
        None,
        None,
        "exception",
    ]
    assert sync_trace["iterations"][2]["calls"][0]["error_kind"] == "unknown_tool"
    assert_history_well_formed(sync_messages)


def _barrier_tools(parties: int):  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(parties, timeout=5)
    order: list[str] = []

    @llm_tool
    def wait_a() -> str:
        """Waits for the others."""
        barrier.wait()
        time.sleep(0.05)  # finishes last: results must still be in call order
        order.append("a")
        return "a"

    @llm_tool
    def wait_b() -> str:
        """Waits for the others."""
        barrier.wait()
        order.append("b")
        return "b"

    return wait_a, wait_b, order


def test_sync_driver_runs_parallel_calls_concurrently_and_keeps_call_order() -> None:
    wait_a, wait_b, order = _barrier_tools(2)
    model = ScriptedModel([calls(call("wait_a"), call("wait_b")), reply("ok")])
    result = run(model, "go", tools=[wait_a, wait_b])  # would raise BrokenBarrierError if serial
    assert order == ["b", "a"]
    assert [c.content for c in result.trace.calls] == ["a", "b"]
    assert [m.content for m in result.messages[2:4]] == ["a", "b"]  # type: ignore[union-attr]
    assert all(not c.is_error for c in result.trace.calls)


def test_sync_driver_runs_calls_serially_when_parallel_is_off() -> None:
    wait_a, wait_b, _ = _barrier_tools(2)
    model = ScriptedModel([calls(call("wait_a"), call("wait_b")), reply("ok")])
    barrier_broken = run(
        model, "go", tools=[wait_a, wait_b], parallel_tool_calls=False, tool_timeout=0.2
    )
    # serial: the first call waits alone at the barrier and times out
    assert barrier_broken.trace.calls[0].error_kind == "timeout"


def test_async_driver_runs_parallel_async_calls_concurrently() -> None:
    async def scenario() -> None:
        first_started = asyncio.Event()
        second_started = asyncio.Event()

        @llm_tool
        async def first() -> str:
            """Needs the second to start."""
            first_started.set()
            await asyncio.wait_for(second_started.wait(), 2)
            await asyncio.sleep(0.02)
            return "first"

        @llm_tool
        async def second() -> str:
            """Needs the first to start."""
            second_started.set()
            await asyncio.wait_for(first_started.wait(), 2)
            return "second"

        model = ScriptedModel([calls(call("first"), call("second")), reply("ok")])
        result = await arun(model, "go", tools=[first, second])
        assert [c.content for c in result.trace.calls] == ["first", "second"]
        assert not any(c.is_error for c in result.trace.calls)

    asyncio.run(scenario())


def test_async_driver_runs_parallel_sync_calls_in_threads() -> None:
    wait_a, wait_b, order = _barrier_tools(2)
    model = ScriptedModel([calls(call("wait_a"), call("wait_b")), reply("ok")])
    result = asyncio.run(arun(model, "go", tools=[wait_a, wait_b]))
    assert order == ["b", "a"]
    assert [c.content for c in result.trace.calls] == ["a", "b"]


@llm_tool
async def slow_double(n: int) -> int:
    """Doubles, asynchronously."""
    await asyncio.sleep(0)
    return n * 2


@llm_tool
def where_am_i() -> str:
    """Reports whether an event loop runs in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return "no loop"
    return "in loop"


def test_async_tool_in_the_sync_driver() -> None:
    model = ScriptedModel([call("slow_double", n=21), reply("ok")])
    result = run(model, "go", tools=[slow_double])
    assert result.trace.calls[0].value == 42
    assert result.trace.calls[0].content == "42"


def test_sync_tool_in_the_async_driver() -> None:
    model = ScriptedModel(
        [call("where_am_i"), calls(call("slow_double", n=1), call("where_am_i")), reply("ok")]
    )
    result = asyncio.run(arun(model, "go", tools=[slow_double, where_am_i]))
    assert [c.content for c in result.trace.calls] == ["in loop", "2", "no loop"]


class Exploding(Model):
    def __init__(self) -> None:
        self.ended: list[bool] = []

    def request(self, request: ModelRequest) -> ModelResponse:
        raise ConnectionError("network down")

    def end_run(self, *, completed: bool) -> None:
        self.ended.append(completed)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_model_error_keeps_the_trace_and_ends_the_run(driver: str) -> None:
    model = Exploding()
    with pytest.raises(ConnectionError) as info:
        drive(driver, model, "go", tools=[echo])
    assert model.ended == [False]
    assert info.value.harness_trace.iterations[0].offered == ("echo",)  # type: ignore[attr-defined]
    assert info.value.harness_messages == [UserMessage(content="go")]  # type: ignore[attr-defined]


def test_end_run_is_told_about_success() -> None:
    ended = []

    class Once(ScriptedModel):
        def end_run(self, *, completed: bool) -> None:
            ended.append(completed)

    run(Once([reply("x")]), "go")
    asyncio.run(arun(Once([reply("x")]), "go"))
    assert ended == [True, True]


def test_prompts_as_text_with_system_or_as_messages() -> None:
    model = ScriptedModel([reply("a"), reply("b")], require_exhausted=False)
    run(model, "hello", system="sys")
    assert list(model.requests[0].messages) == [
        SystemMessage(content="sys"),
        UserMessage(content="hello"),
    ]
    history = [SystemMessage(content="s"), UserMessage(content="u")]
    run(model, history)
    assert list(model.requests[1].messages) == history


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prompt": [], "system": None}, "prompt is empty"),
        ({"prompt": [UserMessage(content="u")], "system": "s"}, "system= only with a text"),
        ({"prompt": "x", "max_iteration": 3}, "'max_iteration' \\(did you mean 'max_iterations'"),
        ({"prompt": "x", "options": LoopOptions(), "max_iterations": 3}, "either options="),
        ({"prompt": "x", "strategies": [object()]}, "InjectionStrategy instances"),
        ({"prompt": "x", "max_iterations": 0}, "max_iterations must be an int >= 1, got 0"),
    ],
)
def test_bad_run_arguments_raise_usage_errors_before_any_request(kwargs, match) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([reply("never")])
    prompt = kwargs.pop("prompt")
    with pytest.raises(UsageError, match=match):
        run(model, prompt, **kwargs)
    with pytest.raises(UsageError, match=match):
        asyncio.run(arun(model, prompt, **kwargs))
    assert model.requests == []


def test_async_tool_in_the_sync_driver_called_from_async_code() -> None:
    async def main() -> object:
        model = ScriptedModel([call("slow_double", n=4), reply("ok")])
        return run(model, "go", tools=[slow_double]).trace.calls[0]

    record = asyncio.run(main())
    assert (record.value, record.is_error) == (8, False)  # type: ignore[attr-defined]
