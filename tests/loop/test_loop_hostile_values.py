"""One value must not hang or kill the run (issue 27 section 3): non-finite deadlines,
results that cannot be serialised, endless iterators, background tasks of an async tool
under ``run()``, tools interrupted by a ``BaseException``. Each bounded by ``bounded``."""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
from typing import Any

import pytest
from hypothesis import given, strategies as st
from loop_helpers import assert_history_well_formed, drive

from harness import CallContext, ToolResult, UsageError
from harness._validation import MAX_SECONDS
from harness.injection import blackboard_tools
from harness.loop import LoopOptions
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import Tool, serialize_for_model

DRIVERS = ["sync", "async"]
HOSTILE_SECONDS = [math.nan, math.inf, -math.inf, 1e300, MAX_SECONDS + 1, -1.0, True, "5"]


# -- durations --------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", HOSTILE_SECONDS)
def test_a_hostile_completion_deadline_is_refused_where_it_is_given(seconds: Any) -> None:
    with pytest.raises(UsageError, match=r"completion_deadline must be a number of seconds"):
        ToolResult.started(completion_deadline=seconds)
    with pytest.raises(UsageError, match=r"completion_deadline must be a number of seconds"):
        ToolResult(content="x", is_async=True, completion_deadline=seconds)
    with pytest.raises(UsageError, match=r"completion_deadline must be a number of seconds"):
        LoopOptions(completion_deadline=seconds)
    with pytest.raises(UsageError, match=r"tool_timeout must be a number of seconds > 0"):
        LoopOptions(tool_timeout=seconds)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("seconds", [math.nan, math.inf, 1e300])
def test_a_tool_starting_work_with_a_hostile_deadline_fails_typed_and_the_run_ends(
    driver: str, seconds: float, bounded: Any
) -> None:
    def start() -> ToolResult:
        """Start background work."""
        return ToolResult.started(completion_deadline=seconds)

    model = ScriptedModel([call("start"), reply("done")])
    with bounded(20):
        result = drive(driver, model, "go", tools=[Tool.from_function(start)])
    (record,) = result.trace.calls
    assert record.error_kind == "exception"
    assert "UsageError: ToolResult.started(): completion_deadline must be" in record.content


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**20), 10**20))
def test_property_a_duration_is_accepted_only_when_finite_and_in_range(seconds: Any) -> None:
    fine = math.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS
    try:
        ToolResult.started(completion_deadline=seconds)
    except UsageError:
        assert not fine
    else:
        assert fine


# -- results that are not text ----------------------------------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")

    def __repr__(self) -> str:
        raise RuntimeError("no")


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("content", [None, 5, Unprintable()], ids=["None", "int", "unprintable"])
def test_a_tool_result_whose_content_is_not_text_is_an_error_result(
    driver: str, content: Any
) -> None:
    def odd() -> ToolResult:
        """Returns a malformed result."""
        return ToolResult(content=content)

    result = drive(driver, ScriptedModel([call("odd"), reply("done")]), "go", tools=[odd])
    (record,) = result.trace.calls
    assert record.error_kind == "exception"
    assert "ToolResult(content=...) must be a str (the text the model reads), got " in (
        record.content
    )
    assert "use ToolResult.ok(value)" in record.content
    assert result.output == "done"
    assert_history_well_formed(result.messages)


def test_user_content_must_be_text_too() -> None:
    with pytest.raises(UsageError, match=r"ToolResult\(user_content=...\) must be a str"):
        ToolResult(content="x", user_content=7)  # type: ignore[arg-type]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_tool_returning_an_endless_iterator_gets_an_unserializable_result(
    driver: str, bounded: Any
) -> None:
    def counter() -> Any:
        """Counts forever."""
        return {"n": itertools.count()}

    with bounded(20):
        result = drive(
            driver, ScriptedModel([call("counter"), reply("done")]), "go", tools=[counter]
        )
    (record,) = result.trace.calls
    assert record.error_kind == "unserializable"
    assert "a count is an iterator, which may never end; return a list" in record.content


def test_the_blackboard_names_an_endless_iterator_instead_of_aborting(bounded: Any) -> None:
    tools = {t.name: t for t in blackboard_tools()}
    context = CallContext(state={"n": itertools.count(), "ok": [1, 2]})
    with bounded(20):
        prepared = tools["blackboard_list"].prepare("{}", context)
        assert not isinstance(prepared, ToolResult)
        listing = tools["blackboard_list"].to_result(prepared.run_sync()).value
    assert listing == [
        {"key": "n", "type": "count", "preview": "<count object (not serialisable)>"},
        {"key": "ok", "type": "list", "preview": "[1,2]"},
    ]


def _containers(leaf: Any) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.just(leaf),
        lambda inner: (
            st.lists(inner, min_size=1, max_size=3).map(lambda xs: [1, *xs])
            | st.dictionaries(st.text(max_size=3), inner, min_size=1, max_size=3)
            | st.lists(inner, min_size=1, max_size=3).map(tuple)
        ),
        max_leaves=8,
    )


@given(_containers("LEAF"), st.sampled_from(["count", "generator", "map", "cycle"]))
def test_property_an_iterator_anywhere_is_refused_and_nothing_else_is(
    shape: Any, kind: str
) -> None:
    def make() -> Any:
        return {
            "count": itertools.count(),
            "generator": (i for i in itertools.count()),
            "map": map(str, itertools.count()),
            "cycle": itertools.cycle([1]),
        }[kind]

    def place(node: Any) -> Any:
        if node == "LEAF":
            return make()
        if isinstance(node, dict):
            return {k: place(v) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return type(node)(place(v) for v in node)
        return node

    with pytest.raises(ValueError, match="is an iterator, which may never end"):
        serialize_for_model(place(shape))
    serialize_for_model(shape)  # the same shape with plain leaves serialises


# -- async completions --------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_completion_that_cannot_be_serialised_is_delivered_as_an_error(
    driver: str, bounded: Any
) -> None:
    def start(ctx: CallContext) -> ToolResult:
        """Starts work that reports undecodable bytes."""
        threading.Thread(target=ctx.completion, args=({"b": b"\xff"},)).start()
        return ToolResult.started()

    model = ScriptedModel([call("start"), reply("waiting"), reply("done")], require_exhausted=False)
    with bounded(20):
        result = drive(driver, model, "go", tools=[start], completion_deadline=15)
    (completion,) = result.trace.completions
    assert completion.status == "delivered" and completion.error_kind == "unserializable"
    assert completion.content is not None
    assert completion.content.startswith("Tool 'start' reported back a dict that cannot be")


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_background_failure_whose_message_cannot_be_read_is_still_delivered(
    driver: str, bounded: Any
) -> None:
    def start(ctx: CallContext) -> ToolResult:
        """Starts work that fails with an unprintable exception."""
        threading.Thread(target=ctx.completion.fail, args=(UnprintableError(),)).start()
        return ToolResult.started()

    model = ScriptedModel([call("start"), reply("waiting"), reply("done")], require_exhausted=False)
    with bounded(20):
        result = drive(driver, model, "go", tools=[start], completion_deadline=15)
    (completion,) = result.trace.completions
    assert completion.status == "delivered" and completion.is_error
    assert completion.content == (
        "Tool 'start' failed in the background: UnprintableError: (its message could not be "
        "read: RuntimeError while formatting it)"
    )


def test_an_async_tool_under_run_reporting_from_a_task_is_delivered(bounded: Any) -> None:
    async def start(ctx: CallContext) -> ToolResult:
        """Starts a background task on its own event loop."""

        async def work() -> None:
            await asyncio.sleep(0.05)
            ctx.completion("finished in a task")

        asyncio.get_running_loop().create_task(work())
        return ToolResult.started()

    model = ScriptedModel([call("start"), reply("waiting"), reply("done")], require_exhausted=False)
    with bounded(20):
        result = drive("sync", model, "go", tools=[start], completion_deadline=15)
    (completion,) = result.trace.completions
    assert (completion.status, completion.content) == ("delivered", "finished in a task")
    assert result.output == "done"


def test_the_private_loop_runs_tasks_started_by_tasks_and_then_closes(bounded: Any) -> None:
    from harness.tools._private_loop import run_awaitable

    seen: list[str] = []
    done = threading.Event()
    loops: list[asyncio.AbstractEventLoop] = []

    async def tool() -> str:
        async def second() -> None:
            await asyncio.sleep(0.01)
            seen.append("second")
            done.set()

        async def first() -> None:
            await asyncio.sleep(0.01)
            seen.append("first")
            asyncio.get_running_loop().create_task(second())

        loops.append(asyncio.get_running_loop())
        asyncio.get_running_loop().create_task(first())
        return "returned"

    with bounded(20):
        assert run_awaitable(tool()) == "returned"
        assert done.wait(10)
        while not loops[0].is_closed():
            threading.Event().wait(0.01)
    assert seen == ["first", "second"]


# -- interrupted tools ----------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(
    "interruption", [KeyboardInterrupt, SystemExit, asyncio.CancelledError, GeneratorExit]
)
def test_a_tool_raising_a_base_exception_leaves_every_call_answered(
    driver: str, interruption: type[BaseException]
) -> None:
    def stop() -> str:
        """Interrupts."""
        raise interruption("stop")

    def fine() -> str:
        """Works."""
        return "ok"

    model = ScriptedModel([calls(call("stop"), call("fine")), reply("done")])
    with pytest.raises(interruption) as caught:
        drive(driver, model, "go", tools=[stop, fine])
    messages = caught.value.harness_messages  # type: ignore[attr-defined]
    assert_history_well_formed(messages)
    answers = [m for m in messages if m.role == "tool"]
    assert [a.content for a in answers] == [
        f"Tool 'stop' was not run: the run ended with {interruption.__name__}.",
        f"Tool 'fine' was not run: the run ended with {interruption.__name__}.",
    ]
