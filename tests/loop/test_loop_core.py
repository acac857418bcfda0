"""The per-iteration protocol of the loop, through the sync driver and directly on the core."""

from __future__ import annotations

import dataclasses

import pytest
from loop_helpers import InjectAfter, Recorder, add, assert_history_well_formed, echo, extra

from harness import ToolNotFound, UsageError
from harness.loop import (
    LoopCore,
    LoopOptions,
    LoopPhase,
    ModelResponse,
    RunResult,
    StrategyChain,
    ToolsetChange,
    run,
)
from harness.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import ToolResult, Toolset, as_tool


def _run_injecting() -> tuple[ScriptedModel, InjectAfter, RunResult]:
    strategy = InjectAfter("echo", [as_tool(extra)])
    model = ScriptedModel(
        [
            calls(call("add", a=1, b=2, id="c1"), call("echo", text="hi", id="c2")),
            call("extra", id="c3"),
            reply("done"),
        ]
    )
    result = run(model, "go", tools=[add, echo], strategies=[strategy], system="be brief")
    return model, strategy, result


def test_offered_tools_per_request_and_injection_visible_from_next_request() -> None:
    model, _, result = _run_injecting()
    assert [r.tool_names for r in model.requests] == [
        ("add", "echo"),
        ("add", "echo", "extra"),
        ("add", "echo", "extra"),
    ]
    assert [r.iteration for r in model.requests] == [1, 2, 3]
    assert [d.name for d in model.requests[1].tools] == ["add", "echo", "extra"]
    assert [it.offered for it in result.trace] == [r.tool_names for r in model.requests]
    assert result.trace.iterations[0].injected == ("extra",)
    assert result.tools_injected == ["extra"]
    assert result.output == "done"
    assert result.iterations == 3


def test_history_order_assistant_then_tool_messages_in_call_order() -> None:
    _, _, result = _run_injecting()
    msgs = result.messages
    assert isinstance(msgs[0], SystemMessage) and msgs[0].content == "be brief"
    assert isinstance(msgs[1], UserMessage) and msgs[1].content == "go"
    assert isinstance(msgs[2], AssistantMessage)
    assert [c.id for c in msgs[2].tool_calls] == ["c1", "c2"]
    assert [(m.tool_call_id, m.name, m.content) for m in msgs[3:5]] == [  # type: ignore[union-attr]
        ("c1", "add", "3"),
        ("c2", "echo", "hi"),
    ]
    assert isinstance(msgs[5], AssistantMessage) and msgs[5].tool_calls[0].name == "extra"
    assert isinstance(msgs[6], ToolMessage) and msgs[6].content == "extra done"
    assert isinstance(msgs[7], AssistantMessage) and msgs[7].content == "done"
    assert len(msgs) == 8
    assert_history_well_formed(msgs)


def test_each_request_sees_the_history_as_it_was() -> None:
    model, _, result = _run_injecting()
    assert [len(r.messages) for r in model.requests] == [2, 5, 7]
    assert list(model.requests[1].messages) == result.messages[:5]


def test_strategy_asked_after_each_call_in_call_order() -> None:
    _, strategy, result = _run_injecting()
    assert strategy.seen == [(1, "c1", "add"), (1, "c2", "echo"), (2, "c3", "extra")]
    first, second = strategy.contexts[:2]
    assert first.result is not None and first.result.value == 3
    assert first.result.content == "3"
    assert second.call is not None and second.call.arguments == '{"text": "hi"}'
    # the history as it was when the strategy was asked: the call's own result is in
    # ``context.result``; its tool message is appended right after the strategy answered
    assert len(first.history) == 3 and len(second.history) == 4
    assert len(strategy.contexts[2].history) == 6
    assert dict(first.called) == {"add": 1}
    assert dict(second.called) == {"add": 1, "echo": 1}
    assert [c.name for c in result.trace.calls] == ["add", "echo", "extra"]
    change = result.trace.changes[0]
    assert change.after_call == "echo" and change.after_call_id == "c2"
    assert change.strategy == "InjectAfter" and change.reason == "echo was called"


def test_tool_injected_mid_turn_is_not_callable_in_the_same_turn() -> None:
    # ``extra`` is injected after c1; the model could not have seen it when it made c2.
    strategy = InjectAfter("echo", [as_tool(extra)])
    model = ScriptedModel(
        [
            calls(call("echo", text="x", id="c1"), call("extra", id="c2")),
            reply("ok"),
        ],
        lenient=True,
    )
    result = run(model, "go", tools=[echo], strategies=[strategy])
    assert [c.is_error for c in result.trace.calls] == [False, True]
    assert result.trace.calls[1].error_kind == "unknown_tool"
    assert "Available tools: echo." in result.trace.calls[1].content
    assert model.requests[1].tool_names == ("echo", "extra")


def test_before_turn_changes_apply_before_the_request() -> None:
    class AddOnSecondTurn(StrategyChain):
        def __init__(self) -> None:
            super().__init__(())

        def before_turn(self, context):  # type: ignore[no-untyped-def, override]
            if context.iteration == 2:
                return [ToolsetChange(add=(as_tool(extra),), reason="turn 2")]
            return None

    model = ScriptedModel([call("echo", text="a"), reply("ok")])
    result = run(model, "go", tools=[echo], strategies=[AddOnSecondTurn()])
    assert [r.tool_names for r in model.requests] == [("echo",), ("echo", "extra")]
    assert result.trace.iterations[1].changes[0].after_call is None
    assert result.trace.iterations[1].injected == ("extra",)


def test_final_answer_without_tools_ends_after_one_iteration() -> None:
    rec = Recorder()
    result = run(ScriptedModel([reply("hello")]), "hi", observers=[rec])
    assert result.output == "hello"
    assert result.iterations == 1
    assert rec.kinds == ["IterationStarted", "ModelResponded", "RunFinished"]
    assert result.trace.iterations[0].answer == "hello"
    assert result.trace.iterations[0].finish_reason == "stop"


def test_refusal_becomes_the_output_when_there_is_no_text() -> None:
    core = _core([add])
    core.begin_iteration()
    core.receive_response(ModelResponse(message=AssistantMessage(refusal="no")))
    assert core.finished and core.result().output == "no"


def test_input_messages_are_copied_not_mutated() -> None:
    prompt = [UserMessage(content="hi")]
    result = run(ScriptedModel([call("echo", text="a"), reply("ok")]), prompt, tools=[echo])
    assert len(prompt) == 1
    assert len(result.messages) == 4


def test_toolset_passed_in_is_not_mutated_by_injection() -> None:
    toolset = Toolset([echo])
    strategy = InjectAfter("echo", [as_tool(extra)])
    run(
        ScriptedModel([call("echo", text="a"), reply("ok")]),
        "go",
        tools=toolset,
        strategies=[strategy],
    )
    assert toolset.names == ("echo",)


# -- the sans-IO core, driven by hand -----------------------------------------------------


def _core(tools: list, **options) -> LoopCore:  # type: ignore[no-untyped-def, type-arg]
    return LoopCore(
        messages=[UserMessage(content="go")],
        toolset=Toolset(tools),
        strategy=StrategyChain(()),
        options=LoopOptions(**options),
    )


def _assistant(*calls_: tuple[str, str, str]) -> ModelResponse:
    return ModelResponse(
        message=AssistantMessage(
            tool_calls=tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls_)
        ),
        finish_reason="tool_calls",
    )


def test_core_returns_prepared_calls_and_takes_results_in_order() -> None:
    core = _core([add, echo])
    request = core.begin_iteration()
    assert request.tool_names == ("add", "echo")
    pending = core.receive_response(
        _assistant(("a", "add", '{"a": 2, "b": 3}'), ("b", "nope", "{}"))
    )
    assert [p.call.id for p in pending] == ["a", "b"]
    assert pending[0].prepared is not None and pending[0].prepared.run_sync() == 5
    assert pending[1].prepared is None and pending[1].immediate is not None
    assert pending[1].immediate.error_kind == "unknown_tool"
    core.receive_results([(ToolResult.ok(5), 1), (pending[1].immediate, 0)])
    assert [m.content for m in core.messages[2:]] == [  # type: ignore[union-attr]
        "5",
        pending[1].immediate.content,
    ]
    core.begin_iteration()
    core.receive_response(ModelResponse(message=AssistantMessage(content="fine")))
    result = core.result()
    assert result.output == "fine"
    assert [c.attempts for c in result.trace.calls] == [1, 0]


def test_core_rejects_protocol_misuse() -> None:
    core = _core([add])
    assert core.phase is LoopPhase.READY
    with pytest.raises(
        UsageError,
        match=r"can't receive_response\(\) while the run is ready; "
        r"call begin_iteration\(\) next",
    ):
        core.receive_response(ModelResponse(message=AssistantMessage(content="x")))
    with pytest.raises(UsageError, match=r"can't receive_results\(\) while the run is ready"):
        core.receive_results([])
    with pytest.raises(UsageError, match=r"can't result\(\) while the run is ready"):
        core.result()
    assert core.phase is LoopPhase.READY  # a refused call changes nothing
    core.begin_iteration()
    with pytest.raises(UsageError, match=r"awaiting a response .*call receive_response\(\)"):
        core.begin_iteration()
    core.receive_response(_assistant(("a", "add", '{"a": 1, "b": 1}')))
    assert core.phase is LoopPhase.AWAITING_RESULTS
    with pytest.raises(UsageError, match=r"1 tool call\(s\) of iteration 1 are pending"):
        core.begin_iteration()
    with pytest.raises(UsageError, match="expected 1 tool results"):
        core.receive_results([])
    assert core.phase is LoopPhase.AWAITING_RESULTS
    core.receive_results([(ToolResult.ok(2), 1)])
    core.begin_iteration()
    core.receive_response(ModelResponse(message=AssistantMessage(content="x")))
    assert core.phase is LoopPhase.FINISHED and core.finished
    with pytest.raises(UsageError, match=r"while the run is finished; call result\(\) next"):
        core.begin_iteration()
    assert core.result().output == "x"


def test_after_a_failure_every_call_gives_the_same_advice() -> None:
    core = _core([add], unknown_tool="raise")
    core.begin_iteration()
    with pytest.raises(ToolNotFound) as info:
        core.receive_response(_assistant(("a", "ghost", "{}")))
    assert core.phase is LoopPhase.FAILED and core.error is info.value
    for attempt in (
        core.begin_iteration,
        lambda: core.receive_response(ModelResponse(message=AssistantMessage(content="x"))),
        lambda: core.receive_results([]),
        core.result,
    ):
        with pytest.raises(UsageError) as refused:
            attempt()
        message = str(refused.value)
        assert "while the run is failed (it ended with ToolNotFound" in message
        assert "start a new run with a new LoopCore" in message


def test_an_observer_raising_moves_the_run_to_failed_and_keeps_the_error() -> None:
    boom = RuntimeError("observer broke")

    def observer(event: object) -> None:
        if type(event).__name__ == "ModelResponded":
            raise boom

    core = LoopCore(
        messages=[UserMessage(content="go")],
        toolset=Toolset([add]),
        strategy=StrategyChain(()),
        options=LoopOptions(),
        observers=[observer],
    )
    core.begin_iteration()
    with pytest.raises(RuntimeError, match="observer broke"):
        core.receive_response(ModelResponse(message=AssistantMessage(content="x")))
    assert core.phase is LoopPhase.FAILED and core.error is boom
    assert boom.harness_trace is core.trace  # type: ignore[attr-defined]
    assert len(core.trace.iterations) == 1  # the open iteration was closed into the trace
    with pytest.raises(UsageError, match="RuntimeError: observer broke"):
        core.result()


def test_abort_from_a_driver_fails_an_unfinished_run_but_not_a_finished_one() -> None:
    core = _core([add])
    core.begin_iteration()
    exc = ConnectionError("model unreachable")
    core.abort(exc)
    assert core.phase is LoopPhase.FAILED and core.error is exc
    done = _core([add])
    done.begin_iteration()
    done.receive_response(ModelResponse(message=AssistantMessage(content="x")))
    done.abort(RuntimeError("end_run failed"))
    assert done.phase is LoopPhase.FINISHED and done.error is None


@dataclasses.dataclass(frozen=True)
class _FrozenError(Exception):
    """An exception that refuses attribute assignment (``FrozenInstanceError``)."""

    reason: str


def test_abort_with_an_exception_refusing_attributes_still_fails_the_run() -> None:
    core = _core([add])
    core.begin_iteration()
    exc = _FrozenError("model unreachable")
    core.abort(exc)  # must not raise FrozenInstanceError out of the failure handling
    assert core.phase is LoopPhase.FAILED and core.error is exc
    assert len(core.trace.iterations) == 1  # the trace is closed although it cannot be attached
    assert not hasattr(exc, "harness_trace") and not hasattr(exc, "harness_messages")


def test_an_observer_raising_a_frozen_exception_surfaces_that_exception() -> None:
    boom = _FrozenError("observer broke")

    def observer(event: object) -> None:
        if type(event).__name__ == "ModelResponded":
            raise boom

    core = LoopCore(
        messages=[UserMessage(content="go")],
        toolset=Toolset([add]),
        strategy=StrategyChain(()),
        options=LoopOptions(),
        observers=[observer],
    )
    core.begin_iteration()
    with pytest.raises(_FrozenError) as caught:
        core.receive_response(ModelResponse(message=AssistantMessage(content="x")))
    assert caught.value is boom
    assert core.phase is LoopPhase.FAILED and core.error is boom


def test_core_generates_ids_for_calls_without_one() -> None:
    core = _core([add])
    core.begin_iteration()
    pending = core.receive_response(_assistant(("", "add", '{"a": 1, "b": 1}')))
    assert pending[0].call.id == "call_1_0"
    core.receive_results([(ToolResult.ok(2), 1)])
    assert core.messages[-1].tool_call_id == "call_1_0"  # type: ignore[union-attr]
    assert core.messages[1].tool_calls[0].id == "call_1_0"  # type: ignore[union-attr]


def test_usage_is_summed_over_responses() -> None:
    from harness.loop import Usage

    core = _core([add])
    core.begin_iteration()
    core.receive_response(
        ModelResponse(
            message=AssistantMessage(tool_calls=(ToolCall(id="a", name="add", arguments="{}"),)),
            usage=Usage(input_tokens=10, output_tokens=2, total_tokens=12),
        )
    )
    core.receive_results([(ToolResult.error("bad", kind="invalid_arguments"), 0)])
    core.begin_iteration()
    core.receive_response(
        ModelResponse(
            message=AssistantMessage(content="done"),
            usage=Usage(input_tokens=20, output_tokens=3, total_tokens=23),
        )
    )
    assert core.result().usage == Usage(input_tokens=30, output_tokens=5, total_tokens=35)
