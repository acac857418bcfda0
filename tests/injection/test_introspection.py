"""Run introspection tools: status, usage, history, progress and messages to a channel."""

from __future__ import annotations

import json

import pytest

from harness import Event, ScriptedModel, UsageError, call, calls, llm_tool, reply, run
from harness.injection import MessageSent, ProgressReported, RunInfo, RunIntrospection

INNER = ("run_status", "tool_usage", "call_history", "report_progress", "send_message")


@llm_tool
def work(step: str) -> str:
    """Do one step."""
    return f"did {step}"


def _json(result: object, index: int) -> object:
    return json.loads(result.trace.calls[index].content)  # type: ignore[attr-defined]


def test_the_tools_sit_behind_one_facade_that_unfolds() -> None:
    model = ScriptedModel([call("run_introspection"), reply("x")])
    result = run(model, "go", tools=[work], strategies=[RunIntrospection()])
    assert result.trace.iterations[0].offered == ("work", "run_introspection")
    assert result.trace.iterations[1].offered == (
        "work",
        "run_introspection",
        "run_introspection_context",
        *INNER,
    )


def test_status_usage_and_history_describe_the_run() -> None:
    model = ScriptedModel(
        [
            call("work", {"step": "a"}),
            call("work", {"step": "b"}),
            call("missing"),
            calls(call("run_status"), call("tool_usage"), call("call_history", {"last": 2})),
            call("call_history", {"last": 0}),
            reply("x"),
        ],
        lenient=True,
    )
    result = run(model, "go", tools=[work], strategies=[RunIntrospection(unfold=False)])
    status = _json(result, 3)
    assert isinstance(status, dict)
    assert status["iteration"] == 4
    assert status["offered_tools"] == 1 + len(INNER)
    assert 0 <= status["elapsed_seconds"] < 5
    assert _json(result, 4) == {"work": 2}
    assert _json(result, 5) == [
        {"iteration": 2, "tool": "work", "arguments": '{"step": "b"}', "ok": True},
        {"iteration": 3, "tool": "missing", "arguments": "{}", "ok": False},
    ]
    assert _json(result, 6) == []
    info = result.state["harness.run_info"]
    assert isinstance(info, RunInfo) and len(info.history) == 7


def test_history_is_bounded() -> None:
    steps = [call("work", {"step": str(n)}) for n in range(4)]
    model = ScriptedModel([*steps, call("call_history", {"last": 10}), reply("x")])
    result = run(
        model, "go", tools=[work], strategies=[RunIntrospection(unfold=False, history_limit=2)]
    )
    history = _json(result, 4)
    assert isinstance(history, list)
    assert [h["arguments"] for h in history] == ['{"step": "2"}', '{"step": "3"}']


def test_progress_and_messages_reach_the_channel_and_the_trace() -> None:
    channel: list[Event] = []
    observed: list[Event] = []
    model = ScriptedModel(
        [
            call("report_progress", {"message": "half", "percent": 50}),
            call("send_message", {"message": "hello"}),
            reply("x"),
        ]
    )
    result = run(
        model,
        "go",
        strategies=[RunIntrospection(channel=channel.append, unfold=False)],
        observers=[observed.append],
    )
    assert channel == [
        ProgressReported(iteration=1, message="half", percent=50.0),
        MessageSent(iteration=2, message="hello"),
    ]
    assert result.trace.events_of(ProgressReported) == [channel[0]]
    assert [e for e in observed if isinstance(e, MessageSent)] == [channel[1]]
    assert result.trace.calls[0].content == "progress report delivered"


def test_a_channel_from_the_call_context_wins() -> None:
    from_context: list[Event] = []
    from_constructor: list[Event] = []
    model = ScriptedModel([call("send_message", {"message": "hi"}), reply("x")])
    run(
        model,
        "go",
        strategies=[RunIntrospection(channel=from_constructor.append, unfold=False)],
        context={"output_channel": from_context.append},
    )
    assert len(from_context) == 1 and from_constructor == []


def test_no_channel_or_a_failing_channel_fails_gracefully() -> None:
    def broken(event: Event) -> None:
        raise ConnectionError("down")

    model = ScriptedModel([call("report_progress", {"message": "m"}), reply("x")])
    result = run(model, "go", strategies=[RunIntrospection(unfold=False)])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "no_channel"
    assert "No output channel is connected" in record.content
    model = ScriptedModel([call("send_message", {"message": "m"}), reply("x")])
    result = run(model, "go", strategies=[RunIntrospection(channel=broken, unfold=False)])
    record = result.trace.calls[0]
    assert record.error_kind == "channel_error" and "ConnectionError" in record.content
    assert result.output == "x"


def test_tools_used_without_the_strategy_say_how_to_enable_it() -> None:
    tools = RunIntrospection(unfold=False).tools
    model = ScriptedModel(
        [calls(call("run_status"), call("tool_usage"), call("call_history")), reply("x")]
    )
    result = run(model, "go", tools=tools)
    for record in result.trace.calls:
        assert record.error_kind == "unavailable"
        assert "add RunIntrospection() to the strategies" in record.content


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(UsageError, match="history_limit must be an int >= 1, got 0"):
        RunIntrospection(history_limit=0)
    with pytest.raises(UsageError, match="channel must be a function"):
        RunIntrospection(channel="stdout")  # type: ignore[arg-type]
