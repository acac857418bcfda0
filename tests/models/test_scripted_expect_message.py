"""``expect_message``: a script asserts what arrived since the model's previous turn."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CallContext, ScriptError, ToolResult, llm_tool, run
from harness.loop import ModelRequest, follow_up_text
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.models import (
    ExpectMessage,
    ScriptedModel,
    call,
    expect_message,
    reply,
    step_from_data,
    steps_from_data,
)


def request(messages: list[Message], iteration: int) -> ModelRequest:
    from harness.loop import HistoryView, ModelSettings

    return ModelRequest(
        messages=HistoryView(messages),
        tools=[],
        tool_names=(),
        settings=ModelSettings(),
        iteration=iteration,
    )


FOLLOW = follow_up_text("export", "call_1", "3 rows exported", is_error=False)


def history() -> list[Message]:
    return [
        UserMessage(content="Export."),
        AssistantMessage(tool_calls=(ToolCall(id="call_1", name="export"),)),
        ToolMessage(tool_call_id="call_1", name="export", content="started"),
        AssistantMessage(content="Exporting."),
        UserMessage(content=FOLLOW),
    ]


def play(step: ExpectMessage) -> None:
    """Two requests: the first sees the first three messages, the second all five."""
    model = ScriptedModel([reply("a"), step, reply("b")])
    messages = history()
    model.request(request(messages[:3], 1))
    model.request(request(messages, 2))


@pytest.mark.parametrize(
    "step",
    [
        expect_message("3 rows"),
        expect_message(tool="export"),
        expect_message(call_id="call_1"),
        expect_message("exported", tool="export", call_id="call_1", role="user"),
        expect_message(role="assistant"),
        expect_message("Exporting.", role="assistant"),
    ],
)
def test_a_matching_new_message_passes(step: ExpectMessage) -> None:
    play(step)


@pytest.mark.parametrize(
    "step",
    [
        expect_message("started"),  # the tool message came before the previous request
        expect_message(tool="import"),
        expect_message(call_id="call_2"),
        expect_message("3 rows", role="assistant"),
        expect_message(tool="export", role="assistant"),
    ],
)
def test_a_failure_names_what_arrived_instead(step: ExpectMessage) -> None:
    with pytest.raises(ScriptError) as err:
        play(step)
    text = str(err.value)
    assert text.startswith(f"step 2 ({step.describe()}): no message that arrived")
    assert "request of iteration 2" in text
    assert "assistant: 'Exporting.'" in text
    assert "follow-up of tool 'export' (call call_1): '3 rows exported'" in text
    assert "tool message of 'export'" not in text  # it was not new at this request


def test_the_first_request_checks_every_message() -> None:
    model = ScriptedModel([expect_message("hello"), reply("hi")])
    assert run(model, "hello there").output == "hi"
    model = ScriptedModel([expect_message(tool="export"), reply("hi")])
    with pytest.raises(ScriptError, match=r"Arrived instead: user: 'hello there'"):
        run(model, "hello there")


def test_a_script_checks_an_async_follow_up_end_to_end() -> None:
    @llm_tool
    def export(ctx: CallContext) -> ToolResult:
        """Export, reporting back at once."""
        ctx.report_back("3 rows exported")
        return ToolResult.started("started")

    model = ScriptedModel(
        [call("export"), expect_message("3 rows", tool="export", call_id="call_1"), reply("ok")]
    )
    assert run(model, "Export.", tools=[export]).output == "ok"
    model = ScriptedModel([call("export"), expect_message(tool="other"), reply("ok")])
    with pytest.raises(ScriptError) as err:
        run(model, "Export.", tools=[export])
    assert "assistant calls [export]; tool message of 'export' (call call_1): 'started'" in str(
        err.value
    )
    assert "follow-up of tool 'export' (call call_1): '3 rows exported'" in str(err.value)
    model = ScriptedModel([call("export"), reply("ok"), expect_message(tool="export"), reply("!")])
    with pytest.raises(ScriptError, match=r"step 3 .*follow-up of tool 'export'"):
        run(model, "Export.", tools=[export])  # it arrived one turn earlier than scripted


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give at least one of contains, tool=, call_id= or role="),
        ({"role": "usr"}, "role must be one of 'user', 'tool', 'assistant', 'system'"),
        ({"tool": ""}, "tool must be a non-empty string"),
        ({"call_id": 3}, "call_id must be a non-empty string, got 3"),
    ],
)
def test_builder_mistakes(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError, match="expect_message\\(\\): ") as err:
        expect_message(**kwargs)
    assert message in str(err.value)
    if kwargs.get("role") == "usr":
        assert "did you mean 'user'" in str(err.value)


def test_steps_read_from_data() -> None:
    assert step_from_data({"expect_message": "3 rows"}) == ExpectMessage(contains="3 rows")
    assert step_from_data({"expect_message": {"tool": "export", "call_id": "c"}}) == ExpectMessage(
        tool="export", call_id="c"
    )
    steps = steps_from_data([{"expect_message": {"role": "user", "contains": "x"}}])
    assert steps == [ExpectMessage(contains="x", role="user")]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"expect_message": 3}, "step 1: expect_message takes a text"),
        ({"expect_message": {"tool": "x", "from": "y"}}, "unknown keys ['from']"),
        ({"expect_message": {}}, "step 1: expect_message(): give at least one"),
        ({"expect_message": "x", "usage": {}}, "unknown keys ['usage'] for 'expect_message'"),
    ],
)
def test_bad_step_data_names_the_step(data: Any, message: str) -> None:
    with pytest.raises(ScriptError) as err:
        step_from_data(data)
    assert message in str(err.value)


def test_describe_lists_every_criterion() -> None:
    step = expect_message("x", tool="t", call_id="c", role="user")
    assert step.describe() == (
        "expect message follow-up of tool 't', follow-up of call 'c', role 'user', containing 'x'"
    )
