"""Bad input from the model, tools and strategies: clear messages, nothing lost."""

from __future__ import annotations

import asyncio

import pytest
from loop_helpers import (
    Recorder,
    add,
    assert_history_well_formed,
    boom,
    drive,
    echo,
    tool_messages,
)

from harness import DuplicateToolName, StrategyError
from harness.loop import (
    InjectionContext,
    InjectionStrategy,
    StrategyWarning,
    ToolFailed,
    ToolsetChange,
    arun,
    run,
)
from harness.messages import AssistantMessage
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import Tool, ToolResult


def test_malformed_json_arguments_become_an_error_result() -> None:
    rec = Recorder()
    model = ScriptedModel([call("add", '{"a": 1, "b":'), reply("oops")])
    result = run(model, "go", tools=[add], observers=[rec])
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "invalid_arguments"
    assert record.arguments == '{"a": 1, "b":'
    assert record.content.startswith("Tool 'add': the arguments are not valid JSON")
    assert record.attempts == 0
    assert [e.error_kind for e in rec.events if isinstance(e, ToolFailed)] == ["invalid_arguments"]
    assert tool_messages(result.messages)[0].content == record.content
    # the malformed arguments are kept verbatim in the history
    assert result.messages[1].tool_calls[0].arguments == '{"a": 1, "b":'  # type: ignore[union-attr]


def test_schema_invalid_arguments_name_the_argument() -> None:
    model = ScriptedModel(
        [calls(call("add", a="one", b=2), call("add", a=1), call("add", a=1, b=2, c=3)), reply("x")]
    )
    result = run(model, "go", tools=[add])
    wrong_type, missing, _extra = (c.content for c in result.trace.calls)
    assert "Tool 'add': invalid arguments: argument 'a'" in wrong_type and "'one'" in wrong_type
    assert "argument 'b' is required but missing" in missing
    assert all(c.error_kind == "invalid_arguments" for c in result.trace.calls[:2])
    assert_history_well_formed(result.messages)


def test_schema_tool_arguments_are_checked_with_jsonschema() -> None:
    lookup = Tool.from_schema(
        "lookup",
        "Look up a key.",
        {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        lambda args: {"found": args["key"]},
    )
    model = ScriptedModel([call("lookup", key=5), call("lookup", key="k"), reply("x")])
    result = run(model, "go", tools=[lookup])
    bad, good = result.trace.calls
    assert bad.error_kind == "invalid_arguments" and "argument 'key'" in bad.content
    assert good.content == '{"found":"k"}' and good.value == {"found": "k"}


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_tool_raising_keeps_the_exception_and_tells_the_model(driver: str) -> None:
    rec = Recorder()
    model = ScriptedModel([call("boom", reason="disk full"), reply("recovered")])
    if driver == "sync":
        result = run(model, "go", tools=[boom], observers=[rec])
    else:
        result = asyncio.run(arun(model, "go", tools=[boom], observers=[rec]))
    record = result.trace.calls[0]
    assert isinstance(record.exception, ValueError) and str(record.exception) == "disk full"
    assert record.content == "Tool 'boom' failed: ValueError: disk full"
    assert record.error_kind == "exception" and record.attempts == 1
    failed = next(e for e in rec.events if isinstance(e, ToolFailed))
    assert (failed.name, failed.message) == ("boom", record.content)
    assert "exception" not in result.trace.to_dict()["iterations"][0]["calls"][0]
    assert result.output == "recovered"


def test_duplicate_tool_call_ids_are_renamed_and_each_answered_once() -> None:
    rec = Recorder()
    model = ScriptedModel(
        [
            calls(call("echo", text="1", id="same"), call("echo", text="2", id="same")),
            call("echo", text="3", id="same"),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[echo], observers=[rec])
    ids = [c.id for c in result.trace.calls]
    assert ids == ["same", "same_dup2", "same_dup3"]
    assert [m.tool_call_id for m in tool_messages(result.messages)] == ids
    assert [m.content for m in tool_messages(result.messages)] == ["1", "2", "3"]
    first_turn = result.messages[1]
    assert isinstance(first_turn, AssistantMessage)
    assert [c.id for c in first_turn.tool_calls] == ["same", "same_dup2"]
    warnings = [e for e in rec.events if isinstance(e, StrategyWarning)]
    assert len(warnings) == 2
    assert warnings[0].strategy == "loop"
    assert "reused tool call id 'same'" in warnings[0].message
    assert "'same_dup2'" in warnings[0].message
    assert_history_well_formed(result.messages)


class Explodes(InjectionStrategy):
    def __init__(self, on: str) -> None:
        self.on = on

    def on_tool_result(self, context: InjectionContext) -> None:
        assert context.call is not None
        if context.call.name == self.on:
            raise RuntimeError("strategy bug")

    def before_turn(self, context: InjectionContext) -> None:
        if self.on == "before_turn" and context.iteration == 2:
            raise KeyError("missing")


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_strategy_raising_is_a_strategy_error_with_nothing_lost(driver: str) -> None:
    model = ScriptedModel(
        [calls(call("add", a=1, b=1), call("echo", text="hi"), call("add", a=2, b=2)), reply("x")],
        require_exhausted=False,
    )
    kwargs = dict(tools=[add, echo], strategies=[Explodes("echo")])
    with pytest.raises(StrategyError) as info:
        drive(driver, model, "go", **kwargs)
    exc = info.value
    assert "strategy 'Explodes' in on_tool_result at iteration 1" in str(exc)
    assert "RuntimeError: strategy bug" in str(exc)
    assert isinstance(exc.__cause__, RuntimeError)
    # all three calls ran, are in the trace and are answered in the history
    assert [c.content for c in exc.trace.calls] == ["2", "hi", "4"]
    assert exc.messages is not None
    assert [m.content for m in tool_messages(exc.messages)] == ["2", "hi", "4"]
    assert_history_well_formed(exc.messages)


def test_a_strategy_raising_before_a_turn() -> None:
    model = ScriptedModel([call("echo", text="a"), reply("x")], require_exhausted=False)
    with pytest.raises(StrategyError, match="in before_turn at iteration 2 raised KeyError"):
        run(model, "go", tools=[echo], strategies=[Explodes("before_turn")])
    assert len(model.requests) == 1


class ReturnsJunk(InjectionStrategy):
    def __init__(self, junk: object) -> None:
        self.junk = junk

    def on_tool_result(self, context: InjectionContext):  # type: ignore[no-untyped-def]
        return self.junk


@pytest.mark.parametrize(
    ("junk", "match"),
    [
        ("add tools please", "returned 'add tools please'; return a ToolsetChange"),
        (42, "returned 42; return a ToolsetChange"),
        ([ToolsetChange(), "x"], "returned 'x' in its list"),
    ],
)
def test_a_strategy_returning_junk_is_a_strategy_error(junk: object, match: str) -> None:
    model = ScriptedModel([call("echo", text="a"), reply("x")], require_exhausted=False)
    with pytest.raises(StrategyError, match=match) as info:
        run(model, "go", tools=[echo], strategies=[ReturnsJunk(junk)])
    assert "strategy 'ReturnsJunk'" in str(info.value)
    assert tool_messages(info.value.messages or [])[0].content == "a"


def test_a_strategy_adding_an_existing_name_fails_clearly_with_history_kept() -> None:
    class Dup(InjectionStrategy):
        def on_tool_result(self, context: InjectionContext) -> ToolsetChange:
            return ToolsetChange(add=(context.tools["echo"].with_description("other"),))

    model = ScriptedModel([call("echo", text="a"), reply("x")], require_exhausted=False)
    with pytest.raises(DuplicateToolName, match="'echo' is already in the toolset") as info:
        run(model, "go", tools=[echo], strategies=[Dup()])
    assert info.value.trace.calls[0].content == "a"


def test_a_tool_declaring_a_bad_change_is_a_strategy_error() -> None:
    def declares(args: dict) -> ToolResult:  # type: ignore[type-arg]
        return ToolResult(content="ok", change="not a change")

    tool = Tool.from_schema("declares", "d", {"type": "object"}, declares)
    model = ScriptedModel([call("declares"), reply("x")], require_exhausted=False)
    with pytest.raises(StrategyError, match=r"strategy .declared. .*ToolResult.change must be"):
        run(model, "go", tools=[tool])
