"""Async tools: a call returns ``ToolResult.started`` and reports back later through its
completion callback; the loop delivers the result at the next turn, waits at the end of
the run (or records the call as lost), in both drivers."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from loop_helpers import Recorder, assert_history_well_formed, drive

from harness import (
    CallContext,
    CompletionError,
    LateCompletion,
    ProviderError,
    ToolResult,
    UsageError,
    llm_tool,
)
from harness.loop import (
    CompletionDelivered,
    CompletionLost,
    CompletionQueued,
    CompletionsAwaited,
    Event,
    LoopCore,
    LoopOptions,
    LoopPhase,
    ToolsetChange,
    UserNotified,
    default_strategy,
    follow_up_source,
    return_direct,
)
from harness.messages import ToolMessage, UserMessage
from harness.models import (
    ScriptedModel,
    call,
    calls,
    expect_message,
    raise_error,
    reply,
)
from harness.scenarios import timeline_rows
from harness.tools import Completion, Tool, Toolset

DRIVERS = ["sync", "async"]


class Jobs:
    """Async tools whose completions the test fires at chosen moments."""

    def __init__(self) -> None:
        self.completions: dict[str, Completion] = {}

    def tools(self) -> list[Any]:
        jobs = self

        @llm_tool
        def start(job: str, ctx: CallContext) -> ToolResult:
            """Start a background job."""
            jobs.completions[job] = ctx.completion
            return ToolResult.started(f"Job {job} started.", user_content=f"Working on {job}.")

        @llm_tool
        def start_now(job: str, ctx: CallContext) -> ToolResult:
            """A job that finishes before the tool returns (the callback beats the result)."""
            ctx.report_back(ToolResult.user(f"{job} finished early."))
            return ToolResult.started(f"Job {job} started.")

        return [start, start_now]

    def on(self, kind: type[Event], job: str, result: Any, *, iteration: int | None = None):  # type: ignore[no-untyped-def]
        """An observer that reports ``result`` for ``job`` at the first ``kind`` event."""
        fired: list[bool] = []

        def observe(event: Event) -> None:
            if fired or not isinstance(event, kind):
                return
            if iteration is not None and event.iteration != iteration:
                return
            fired.append(True)
            self.completions[job](result)

        return observe


def follow_ups(messages: Any) -> list[str]:
    return [
        m.content for m in messages if isinstance(m, UserMessage) and follow_up_source(m.content)
    ]


# -- delivery ----------------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_completion_reaches_the_next_turn_attributed_to_its_tool_and_call(driver: str) -> None:
    jobs = Jobs()
    recorder = Recorder()
    model = ScriptedModel(
        [
            call("start", job="build", id="c-build"),
            expect_message("build done", tool="start", call_id="c-build"),
            reply("Built."),
        ]
    )

    def report_after_call(event: Event) -> None:
        if event.kind == "ToolCalled":
            jobs.completions["build"](ToolResult.user("build done"))

    result = drive(
        driver, model, "Build it.", tools=jobs.tools(), observers=[recorder, report_after_call]
    )
    assert result.output == "Built."
    started = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert (started.tool_call_id, started.content) == ("c-build", "Job build started.")
    assert follow_ups(result.messages) == [
        "[Async result] tool 'start' (call c-build) reported back:\nbuild done"
    ]
    assert follow_up_source(follow_ups(result.messages)[0]) == ("start", "c-build")
    assert result.user_outputs == ["Working on build.", "build done"]
    [record] = result.trace.completions
    assert (record.call_id, record.name, record.status) == ("c-build", "start", "delivered")
    assert (record.started_iteration, record.iteration, record.content) == (1, 2, "build done")
    assert result.trace.calls[0].is_async
    kinds = [e.kind for e in recorder.events if e.kind.startswith("Completion")]
    assert kinds == ["CompletionQueued", "CompletionDelivered"]
    delivered = result.trace.events_of(CompletionDelivered)[0]
    assert isinstance(delivered, CompletionDelivered)
    assert (delivered.call_id, delivered.iteration, delivered.started_iteration) == (
        "c-build",
        2,
        1,
    )
    notified = [e for e in result.trace.events_of(UserNotified) if isinstance(e, UserNotified)]
    assert [(e.call_id, e.iteration, e.content) for e in notified][-1] == (
        "c-build",
        2,
        "build done",
    )
    assert_history_well_formed(result.messages)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_callback_before_the_tool_returns_is_held_then_delivered(driver: str) -> None:
    model = ScriptedModel(
        [call("start_now", job="x"), expect_message(tool="start_now"), reply("ok")]
    )
    result = drive(driver, model, "go", tools=Jobs().tools())
    assert follow_ups(result.messages) == [
        "[Async result] tool 'start_now' (call call_1) reported back:\nx finished early."
    ]
    assert [r.status for r in result.trace.completions] == ["delivered"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_worker_thread_reports_back_during_the_run(driver: str) -> None:
    gate, reported = threading.Event(), threading.Event()

    @llm_tool
    def export(ctx: CallContext) -> ToolResult:
        """Export in a worker thread."""
        completion = ctx.completion

        def work() -> None:
            gate.wait(10)
            completion({"rows": 3})  # a plain value: serialised like a tool's return
            reported.set()

        threading.Thread(target=work, daemon=True).start()
        return ToolResult.started()

    @llm_tool
    def approve() -> str:
        """Let the export finish and wait for its report."""
        gate.set()
        assert reported.wait(10)
        return "approved"

    model = ScriptedModel(
        [
            call("export"),
            call("approve"),
            expect_message('{"rows":3}', tool="export"),
            reply("Exported 3 rows."),
        ]
    )
    result = drive(driver, model, "Export.", tools=[export, approve])
    assert result.output == "Exported 3 rows."
    assert result.trace.calls[0].content == (
        "Task started; the result will be reported back when it is ready."
    )
    assert result.trace.completions[0].value == {"rows": 3}
    rows = timeline_rows(result.trace)
    assert [r.started for r in rows] == [("export",), (), ()]
    assert [r.follow_ups for r in rows] == [(), (), ("export",)]
    assert "follow_ups=export" in rows[2].render()


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_end_of_run_wait_delivers_with_a_further_turn(driver: str) -> None:
    jobs = Jobs()
    recorder = Recorder()
    releaser = threading.Timer(0.02, lambda: jobs.completions["report"]("report ready"))

    def start_timer(event: Event) -> None:
        if isinstance(event, CompletionsAwaited):
            releaser.start()  # reported from another thread while the loop waits

    model = ScriptedModel(
        [
            call("start", job="report"),
            reply("I'll tell you when the report is ready."),
            expect_message("report ready", tool="start", role="user"),
            reply("The report is ready."),
        ]
    )
    started = time.monotonic()
    result = drive(
        driver,
        model,
        "Make the report.",
        tools=jobs.tools(),
        observers=[recorder, start_timer],
        completion_deadline=10,
    )
    assert time.monotonic() - started < 5  # woken by the arrival, not the deadline
    assert result.output == "The report is ready."
    assert result.iterations == 3
    awaited = [e for e in recorder.events if isinstance(e, CompletionsAwaited)]
    assert [(e.iteration, e.call_ids) for e in awaited] == [(2, ("call_1",))]
    assert awaited[0].deadline == pytest.approx(10, abs=1)
    assert [r.status for r in result.trace.completions] == ["delivered"]
    assert result.trace.completions[0].iteration == 3
    assert [e.kind for e in recorder.events][-1] == "RunFinished"
    assert sum(e.kind == "RunFinished" for e in recorder.events) == 1
    assert_history_well_formed(result.messages)


def test_an_asyncio_task_reports_back_under_arun() -> None:
    @llm_tool
    async def crawl(url: str, ctx: CallContext) -> ToolResult:
        """Crawl in a background task."""
        completion = ctx.completion

        async def work() -> None:
            while not waiting:  # finishes once the loop waits at the end of the run
                await asyncio.sleep(0.005)
            completion(ToolResult.user(f"crawled {url}"))

        tasks.append(asyncio.get_running_loop().create_task(work()))
        return ToolResult.started("crawling")

    tasks: list[asyncio.Task[None]] = []
    waiting: list[Event] = []
    model = ScriptedModel(
        [
            call("crawl", url="a.test"),
            reply("Crawling."),
            expect_message(tool="crawl"),
            reply("Done."),
        ]
    )
    result = drive(
        "async",
        model,
        "Crawl a.test",
        tools=[crawl],
        observers=[lambda e: waiting.append(e) if isinstance(e, CompletionsAwaited) else None],
        completion_deadline=10,
    )
    assert result.output == "Done."
    assert result.user_outputs == ["crawled a.test"]
    assert all(t.done() for t in tasks)


# -- lost --------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_policy_lost_records_pending_calls_at_once(driver: str) -> None:
    jobs = Jobs()
    recorder = Recorder()
    model = ScriptedModel([call("start", job="slow"), reply("Started.")])
    started = time.monotonic()
    result = drive(
        driver,
        model,
        "go",
        tools=jobs.tools(),
        observers=[recorder],
        pending_completions="lost",
        completion_deadline=30,
    )
    assert time.monotonic() - started < 5  # no wait
    assert result.output == "Started."
    [record] = result.trace.completions
    assert (record.status, record.reason, record.call_id) == ("lost", "run_ended", "call_1")
    [lost] = [e for e in recorder.events if isinstance(e, CompletionLost)]
    assert lost.reason == "run_ended" and "pending_completions='lost'" in lost.message
    assert not [e for e in recorder.events if isinstance(e, CompletionsAwaited)]
    completion = jobs.completions["slow"]
    assert not completion.is_open
    with pytest.raises(
        LateCompletion, match=r"call 'call_1' \(tool 'start'\).*lost \(run_ended\)"
    ) as err:
        completion("too late")
    assert (err.value.call_id, err.value.tool_name, err.value.reason) == (
        "call_1",
        "start",
        "run_ended",
    )
    assert len(result.trace.completions) == 1  # the trace is final once the run returned


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_async_tool_that_never_calls_back_is_lost_at_the_deadline(driver: str) -> None:
    jobs = Jobs()
    recorder = Recorder()
    model = ScriptedModel([call("start", job="never"), reply("Waiting.")])
    started = time.monotonic()
    result = drive(
        driver,
        model,
        "go",
        tools=jobs.tools(),
        observers=[recorder],
        completion_deadline=0.05,
    )
    elapsed = time.monotonic() - started
    assert 0.05 <= elapsed < 5
    assert result.output == "Waiting."
    assert [(r.status, r.reason) for r in result.trace.completions] == [("lost", "deadline")]
    kinds = [e.kind for e in recorder.events]
    assert kinds[-3:] == ["CompletionsAwaited", "CompletionLost", "RunFinished"]
    with pytest.raises(LateCompletion, match="deadline"):
        jobs.completions["never"]("finally")


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_calls_own_deadline_wins_over_the_runs(driver: str) -> None:
    @llm_tool
    def quick() -> ToolResult:
        """Gives up fast."""
        return ToolResult.started("started", completion_deadline=0.01)

    started = time.monotonic()
    result = drive(
        driver,
        ScriptedModel([call("quick"), reply("ok")]),
        "go",
        tools=[quick],
        completion_deadline=60,
    )
    assert time.monotonic() - started < 5
    assert result.trace.completions[0].reason == "deadline"

    patience: list[Completion] = []

    @llm_tool
    def patient(ctx: CallContext) -> ToolResult:
        """Waits longer than the run's deadline."""
        patience.append(ctx.completion)
        return ToolResult.started("started", completion_deadline=10)

    def report_later(event: Event) -> None:  # 0.1 s into the wait: past the run's deadline
        if isinstance(event, CompletionsAwaited):
            threading.Timer(0.1, patience[0], ("late but awaited",)).start()

    model = ScriptedModel(
        [call("patient"), reply("ok"), expect_message("late but awaited"), reply("done")]
    )
    result = drive(
        driver, model, "go", tools=[patient], observers=[report_later], completion_deadline=0.01
    )
    assert result.output == "done"
    assert [r.status for r in result.trace.completions] == ["delivered"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_return_direct_tool_ends_the_run_and_loses_pending_completions(driver: str) -> None:
    jobs = Jobs()

    @return_direct
    @llm_tool
    def finish() -> str:
        """End the run now."""
        return "finished"

    model = ScriptedModel([calls(call("start", job="j"), call("finish"))])
    result = drive(driver, model, "go", tools=[*jobs.tools(), finish])
    assert result.output == "finished"
    assert [(r.status, r.reason) for r in result.trace.completions] == [("lost", "return_direct")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_completion_after_the_last_allowed_turn_is_lost(driver: str) -> None:
    jobs = Jobs()
    model = ScriptedModel([call("start", job="j"), reply("Answered.")])
    result = drive(
        driver,
        model,
        "go",
        tools=jobs.tools(),
        observers=[jobs.on(CompletionsAwaited, "j", "arrived")],
        max_iterations=2,
    )
    assert result.output == "Answered."  # the model's answer stands
    [record] = result.trace.completions
    assert (record.status, record.reason, record.value) == ("lost", "max_iterations", "arrived")
    lost = result.trace.events_of(CompletionLost)[0]
    assert isinstance(lost, CompletionLost) and "max_iterations=2" in lost.message


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_failed_run_loses_its_pending_completions(driver: str) -> None:
    jobs = Jobs()
    model = ScriptedModel([call("start", job="j"), raise_error("server_error")])
    with pytest.raises(ProviderError) as err:
        drive(driver, model, "go", tools=jobs.tools())
    trace = err.value.trace
    assert [(r.status, r.reason) for r in trace.completions] == [("lost", "run_failed")]
    with pytest.raises(LateCompletion, match="run_failed"):
        jobs.completions["j"]("after the failure")


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_callback_called_twice_names_the_call_and_keeps_the_first(driver: str) -> None:
    jobs = Jobs()
    errors: list[BaseException] = []

    def twice(event: Event) -> None:
        if event.kind == "ToolCalled":
            completion = jobs.completions["j"]
            completion("first")
            assert not completion.is_open
            try:
                completion("second")
            except CompletionError as exc:
                errors.append(exc)

    model = ScriptedModel([call("start", job="j", id="c-7"), expect_message("first"), reply("ok")])
    result = drive(driver, model, "go", tools=jobs.tools(), observers=[twice])
    [error] = errors
    assert not isinstance(error, LateCompletion)
    assert "call 'c-7' (tool 'start') was called twice" in str(error)
    assert "first result is kept" in str(error)
    assert follow_ups(result.messages)[0].endswith("first")
    with pytest.raises(CompletionError, match=r"called twice.*delivered to the model"):
        jobs.completions["j"]("third, after delivery")


def test_wrong_values_are_refused_with_the_fix_and_nothing_is_queued() -> None:
    jobs = Jobs()
    problems: list[str] = []

    def misuse(event: Event) -> None:
        if event.kind != "ToolCalled":
            return
        completion = jobs.completions["j"]

        async def not_awaited() -> str:
            return "x"

        bad: list[Any] = [
            ValueError("boom"),
            not_awaited(),
            ToolResult.started(),
            ToolResult(content="x", change=ToolsetChange()),
        ]
        for value in bad:
            with pytest.raises(CompletionError) as err:
                completion(value)
            problems.append(str(err.value))
        with pytest.raises(CompletionError, match="takes an error message or an exception"):
            completion.fail(42)  # type: ignore[arg-type]
        assert completion.is_open  # nothing was accepted
        completion.fail(RuntimeError("disk full"))

    model = ScriptedModel([call("start", job="j"), expect_message("disk full"), reply("ok")])
    result = drive("sync", model, "go", tools=jobs.tools(), observers=[misuse])
    assert "completion.fail(exc)" in problems[0]
    assert "await it" in problems[1]
    assert "another ToolResult.started" in problems[2]
    assert "cannot change the toolset" in problems[3]
    assert all("call 'call_1' (tool 'start')" in p for p in problems)
    [text] = follow_ups(result.messages)
    assert text == (
        "[Async result] tool 'start' (call call_1) failed:\n"
        "Tool 'start' failed in the background: RuntimeError: disk full"
    )
    [queued] = result.trace.events_of(CompletionQueued)
    assert isinstance(queued, CompletionQueued) and queued.is_error
    record = result.trace.completions[0]
    assert (record.is_error, record.error_kind) == (True, "exception")
    assert isinstance(record.exception, RuntimeError)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_report_for_a_call_that_returned_a_finished_result_is_lost_not_delivered(
    driver: str,
) -> None:
    @llm_tool
    def confused(ctx: CallContext) -> str:
        """Reports back, then returns a plain result anyway."""
        ctx.report_back("from the callback")
        return "plain result"

    model = ScriptedModel([call("confused"), reply("ok")])
    result = drive(driver, model, "go", tools=[confused])
    assert follow_ups(result.messages) == []
    assert not result.trace.calls[0].is_async
    [record] = result.trace.completions
    assert (record.status, record.reason, record.started_iteration) == ("lost", "not_async", 0)
    assert record.value == "from the callback"


def test_a_silent_completion_reaches_the_model_but_not_the_user() -> None:
    jobs = Jobs()
    model = ScriptedModel([call("start", job="j"), expect_message("indexed"), reply("ok")])

    def quietly(event: Event) -> None:
        if event.kind == "ToolCalled":
            jobs.completions["j"](ToolResult.background("indexed", user_content="Index rebuilt."))

    result = drive("sync", model, "go", tools=jobs.tools(), observers=[quietly])
    assert result.user_outputs == ["Working on j."]  # the started text only
    record = result.trace.completions[0]
    assert record.silent and record.user_content == "Index rebuilt."


def test_the_call_context_outside_a_run_has_no_completion() -> None:
    with pytest.raises(CompletionError, match="not part of a run's tool call"):
        _ = CallContext({"user": "u1"}).completion
    with pytest.raises(UsageError, match="completion_deadline must be a number of seconds >= 0"):
        ToolResult.started(completion_deadline=-1)
    with pytest.raises(UsageError, match="completion_deadline must be a number"):
        ToolResult.started(completion_deadline=True)  # type: ignore[arg-type]


def test_loop_options_validate_the_policy_and_deadline() -> None:
    with pytest.raises(UsageError) as err:
        LoopOptions(pending_completions="later", completion_deadline=-1)  # type: ignore[arg-type]
    assert "pending_completions" in str(err.value) and "'wait'" in str(err.value)
    assert "completion_deadline must be a number of seconds >= 0" in str(err.value)
    assert LoopOptions(completion_deadline=0).completion_deadline == 0


def test_the_core_waits_in_its_own_phase_and_refuses_other_calls() -> None:
    jobs = Jobs()
    core = LoopCore(
        messages=[UserMessage(content="go")],
        toolset=Toolset.of(jobs.tools()),
        strategy=default_strategy(None),
        options=LoopOptions(completion_deadline=5),
    )
    model = ScriptedModel([call("start", job="j"), reply("waiting"), reply("done")])
    pending = core.receive_response(model.request(core.begin_iteration()))
    outcome = pending[0].prepared.run_sync()  # type: ignore[union-attr]
    core.receive_results([(outcome, 1)])
    assert core.receive_response(model.request(core.begin_iteration())) == []
    assert core.phase is LoopPhase.AWAITING_COMPLETIONS and not core.finished
    with pytest.raises(UsageError, match=r"can't begin_iteration\(\).*settle_completions\(\)"):
        core.begin_iteration()
    core.settle_completions()  # nothing arrived and the deadline is ahead: still waiting
    assert core.phase is LoopPhase.AWAITING_COMPLETIONS
    jobs.completions["j"]("here")
    core.completions.wait()  # returns at once: nothing is pending any more
    core.settle_completions()
    assert core.phase is LoopPhase.READY
    request = core.begin_iteration()
    assert follow_ups(request.messages) == [
        "[Async result] tool 'start' (call call_1) reported back:\nhere"
    ]
    core.receive_response(model.request(request))
    assert core.finished and core.result().output == "done"


def test_trace_dicts_show_async_parts_only_when_present() -> None:
    plain = drive("sync", ScriptedModel([reply("hi")]), "hi")
    assert "completions" not in plain.trace.to_dict()
    jobs = Jobs()
    result = drive(
        "sync",
        ScriptedModel([call("start", job="j"), reply("ok")]),
        "go",
        tools=jobs.tools(),
        pending_completions="lost",
    )
    data = result.trace.to_dict()
    assert data["iterations"][0]["calls"][0]["is_async"] is True
    assert data["completions"] == [
        {
            "call_id": "call_1",
            "name": "start",
            "started_iteration": 1,
            "status": "lost",
            "iteration": 2,
            "content": None,
            "is_error": False,
            "error_kind": None,
            "user_content": None,
            "silent": False,
            "reason": "run_ended",
        }
    ]
    assert [e["kind"] for e in data["events"]][-2:] == ["CompletionLost", "RunFinished"]


def test_the_harness_logger_tells_start_delivery_and_loss(caplog: pytest.LogCaptureFixture) -> None:
    jobs = Jobs()
    model = ScriptedModel([calls(call("start_now", job="a"), call("start", job="b")), reply("ok")])
    with caplog.at_level("INFO", logger="harness"):
        drive("sync", model, "go", tools=jobs.tools(), completion_deadline=0)
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name.startswith("harness")]
    assert any(
        level == "INFO" and m.endswith("iteration 1: start_now (call call_1) started async work")
        for level, m in lines
    )
    assert any(m.endswith("async call call_1 of start_now delivered") for _, m in lines)
    [lost] = [m for level, m in lines if level == "WARNING"]
    assert "async call 'call_2' of tool 'start'" in lost and "deadline" in lost


def test_an_observer_failing_on_a_lost_completion_does_not_hide_the_runs_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    jobs = Jobs()

    def fragile(event: Event) -> None:
        if isinstance(event, CompletionLost):
            raise RuntimeError("observer broke")

    model = ScriptedModel([call("start", job="j"), raise_error("server_error")])
    with caplog.at_level("ERROR", logger="harness"), pytest.raises(ProviderError) as err:
        drive("sync", model, "go", tools=jobs.tools(), observers=[fragile])
    assert [(r.status, r.reason) for r in err.value.trace.completions] == [("lost", "run_failed")]
    assert any(
        "an observer failed while recording lost completions" in r.getMessage()
        for r in caplog.records
    )


def test_every_call_lost_to_a_failure_is_recorded_even_when_an_observer_breaks() -> None:
    jobs = Jobs()
    seen: list[str] = []

    def fragile(event: Event) -> None:
        if isinstance(event, CompletionLost):
            seen.append(event.call_id)
            raise RuntimeError("observer broke")

    model = ScriptedModel(
        [calls(call("start", job="a"), call("start", job="b")), raise_error("server_error")]
    )
    with pytest.raises(ProviderError) as err:
        drive("sync", model, "go", tools=jobs.tools(), observers=[fragile])
    records = err.value.trace.completions
    assert [(r.call_id, r.status, r.reason) for r in records] == [
        ("call_1", "lost", "run_failed"),
        ("call_2", "lost", "run_failed"),
    ]
    assert seen == ["call_1", "call_2"]  # each call announced once, the second one too


def test_a_completion_shows_its_call_but_not_the_context_values() -> None:
    jobs = Jobs()

    @llm_tool
    def peek(ctx: CallContext) -> ToolResult:
        """Keeps its completion."""
        jobs.completions["peek"] = ctx.completion
        return ToolResult.started()

    drive(
        "sync",
        ScriptedModel([call("peek", id="c-1"), reply("ok")]),
        "go",
        tools=[peek],
        context={"api_key": "sk-never-shown-123"},
        pending_completions="lost",
    )
    shown = repr(jobs.completions["peek"])
    assert shown == "Completion(call_id='c-1', tool_name='peek')"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_background_failure_hides_call_context_and_preset_values(driver: str) -> None:
    """``completion.fail(exc)`` builds a model-visible message from the exception: the
    call context's values and the tool's presets in it are hidden, as for a tool that
    raises."""
    token = "ctx-token-5f1e9a2b"
    preset = "preset-key-77c0d4e1"
    started: list[Completion] = []

    def export(report: str, api_key: str, ctx: CallContext) -> ToolResult:
        """Export a report in the background."""
        started.append(ctx.completion)
        return ToolResult.started("Export started.")

    tool = Tool.from_function(export, presets={"api_key": preset})

    def fail_after_call(event: Event) -> None:
        if event.kind == "ToolCalled" and started:
            started[0].fail(RuntimeError(f"upload refused for {token} with key {preset}"))

    model = ScriptedModel(
        [call("export", report="q3", id="c-exp"), expect_message("upload refused"), reply("ok")]
    )
    result = drive(
        driver,
        model,
        "Export.",
        tools=[tool],
        observers=[fail_after_call],
        context={"token": token},
    )
    shown = [m.content for m in result.messages if isinstance(m.content, str)]
    shown += [c.content or "" for c in result.trace.completions]
    assert any("upload refused for [hidden]" in text for text in shown), shown
    for text in shown:
        assert token not in text and preset not in text, text


def test_a_background_failure_hides_context_values_of_four_characters_or_more() -> None:
    """The same length rule as a raising tool: shorter values are too common to hide."""
    started: list[Completion] = []

    @llm_tool
    def job(ctx: CallContext) -> ToolResult:
        """Start a job."""
        started.append(ctx.completion)
        return ToolResult.started()

    def fail_after_call(event: Event) -> None:
        if event.kind == "ToolCalled" and started:
            started[0].fail("codes abc and abcd refused")

    model = ScriptedModel([call("job"), expect_message("refused"), reply("ok")])
    result = run_sync(model, [job], fail_after_call, context={"short": "abc", "four": "abcd"})
    [record] = result.trace.completions
    assert record.content == "codes abc and [hidden] refused"


@pytest.mark.parametrize("message", ["refused 0000000:", "refused", ""])
def test_a_background_failure_keeps_the_exception_text_whole(message: str) -> None:
    """The message is shown whole before it is scrubbed: trimming a trailing ':' (meant
    for an empty message) cut a secret ending in ':' short of its hidden form."""
    started: list[Completion] = []

    @llm_tool
    def job(ctx: CallContext) -> ToolResult:
        """Start a job."""
        started.append(ctx.completion)
        return ToolResult.started()

    def fail_after_call(event: Event) -> None:
        if event.kind == "ToolCalled" and started:
            started[0].fail(RuntimeError(message))

    model = ScriptedModel([call("job"), reply("ok")])
    result = run_sync(
        model, [job], fail_after_call, context={"key": "0000000:"}, pending_completions="wait"
    )
    [record] = result.trace.completions
    expected = (
        "RuntimeError: refused [hidden]"
        if ":" in message
        else (f"RuntimeError: {message}" if message else "RuntimeError")
    )
    assert record.content == f"Tool 'job' failed in the background: {expected}"


def run_sync(model: Any, tools: list[Any], observer: Any, **options: Any) -> Any:
    return drive("sync", model, "Go.", tools=tools, observers=[observer], **options)
