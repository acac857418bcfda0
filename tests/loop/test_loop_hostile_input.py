"""Attacks on the loop: nothing escapes ``run``/``arun`` and the history stays complete."""

from __future__ import annotations

import json
from typing import Any

import pytest
from loop_helpers import assert_history_well_formed, drive
from pydantic import BaseModel

from harness import ToolNotFound
from harness.loop import ToolFailed
from harness.loop._unknown import CLOSEST, LIST_ALL, closest_names, unknown_tool_message
from harness.models import ScriptedModel, call, calls, reply
from harness.tools import Tool, ToolResult, llm_tool

DRIVERS = ["sync", "async"]
DEEP = "[" * 10_000


class _Ints(BaseModel):
    a: list[Any]


def _deep_tools() -> list[Tool]:
    def flat(a: list[Any]) -> str:
        """A function tool."""
        return "ran"

    return [
        Tool.from_schema("schema_only", "d", {"type": "object"}, lambda args: "ran"),
        Tool.from_schema(
            "schema_items",
            "d",
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "array"}}}},
            lambda args: "ran",
        ),
        Tool.from_function(flat),
        Tool.from_model("typed", "d", _Ints, lambda m: "ran"),
    ]


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("arguments", [DEEP, '{"a": ' + DEEP])
def test_deeply_nested_arguments_become_error_results(driver: str, arguments: str) -> None:
    tools = _deep_tools()
    model = ScriptedModel(
        [calls(*(call(t.name, arguments) for t in tools)), reply("x")], lenient=True
    )
    result = drive(driver, model, "go", tools=tools)
    assert result.output == "x"
    records = result.trace.calls
    assert [r.error_kind for r in records] == ["invalid_arguments"] * len(tools)
    for record in records:
        assert record.content.startswith(f"Tool {record.name!r}:")
    assert_history_well_formed(result.messages)


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


@llm_tool
def unprintable() -> str:
    """Raises an exception that cannot be printed."""
    raise _Unprintable()


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("timeout", [None, 5.0])
def test_an_exception_whose_str_raises_becomes_an_error_result(
    driver: str, timeout: float | None
) -> None:
    model = ScriptedModel([call("unprintable"), reply("x")])
    result = drive(driver, model, "go", tools=[unprintable], tool_timeout=timeout)
    record = result.trace.calls[0]
    assert record.error_kind == "exception"
    assert isinstance(record.exception, _Unprintable)
    assert record.content == (
        "Tool 'unprintable' failed: _Unprintable (its message could not be read: "
        "RuntimeError while formatting it)."
    )
    assert_history_well_formed(result.messages)


@llm_tool
def surrogate() -> str:
    """Returns a lone surrogate."""
    return "left \ud800 right"


@llm_tool
def surrogate_result() -> ToolResult:
    """Returns a ToolResult with surrogates, one of them a pair written as two code points."""
    return ToolResult(content="\udfff and \ud83d\ude00", user_content="\ud800")


@pytest.mark.parametrize("driver", DRIVERS)
def test_lone_surrogates_in_results_are_replaced(driver: str) -> None:
    model = ScriptedModel([calls(call("surrogate"), call("surrogate_result")), reply("x")])
    result = drive(driver, model, "go", tools=[surrogate, surrogate_result])
    first, second = result.trace.calls
    assert first.content == "left \ufffd right"
    assert second.content == "\ufffd and \U0001f600"
    for message in result.messages:  # the next request can be encoded
        json.dumps(message.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")
    assert first.value == "left \ud800 right"  # strategies still see the Python value


def test_tool_result_keeps_ascii_and_valid_text_unchanged() -> None:
    text = "plain ascii, é, 日本, \U0001f600"
    assert ToolResult(content=text).content is text


@pytest.mark.parametrize("driver", DRIVERS)
def test_unknown_tool_raise_answers_every_call_before_raising(driver: str) -> None:
    @llm_tool
    def known() -> str:
        """A known tool."""
        return "ok"

    model = ScriptedModel(
        [calls(call("known"), call("nope"), call("known")), reply("x")], lenient=True
    )
    with pytest.raises(ToolNotFound) as info:
        drive(driver, model, "go", tools=[known], unknown_tool="raise")
    messages = info.value.messages
    assert messages is not None
    assert_history_well_formed(messages)
    answers = [m for m in messages if m.role == "tool"]
    assert [a.content for a in answers] == [
        "Tool 'known' was not run: the run ended with ToolNotFound.",
        "Tool 'nope' was not run: the run ended with ToolNotFound.",
        "Tool 'known' was not run: the run ended with ToolNotFound.",
    ]
    trace = info.value.trace
    assert [c.error_kind for c in trace.calls] == ["not_run"] * 3
    assert not any(isinstance(e, ToolFailed) for e in trace.events)


# -- unknown tools among many offered -----------------------------------------------------


def _many(n: int) -> list[str]:
    return [f"tool_{i:05d}_lookup" for i in range(n)]


def test_few_offered_tools_are_all_listed() -> None:
    names = _many(LIST_ALL)
    message = unknown_tool_message("nope", names)
    assert all(name in message for name in names)


def test_many_offered_tools_list_only_the_closest_and_the_count() -> None:
    names = _many(10_000)
    message = unknown_tool_message("tool_00042_lookpu", names)
    assert "10000 tools are offered; the closest names: tool_00042_lookup" in message
    assert len(message) < 600
    listed = message.split("closest names: ")[1].split(". Call")[0].split(", ")
    assert 1 <= len(listed) <= CLOSEST


def test_many_offered_tools_without_a_close_name_show_a_few() -> None:
    message = unknown_tool_message("zzz", _many(100))
    assert "100 tools are offered; none has a similar name (the first 8: tool_00000_lookup" in (
        message
    )


def test_a_huge_unknown_name_is_shortened() -> None:
    message = unknown_tool_message("x" * 100_000, ["a"])
    assert len(message) < 400


def test_closest_names_is_bounded() -> None:
    names = _many(50_000)
    assert len(closest_names("tool_1", names, n=3)) <= 3
    assert closest_names("unrelated", names) == []


def test_many_unknown_calls_among_ten_thousand_tools_stay_small() -> None:
    names = _many(10_000)
    tools = [Tool.from_schema(n, "d", {"type": "object"}, lambda a: "ok") for n in names]
    unknown = [call(f"tool_{i:05d}_lokup") for i in range(200)]
    model = ScriptedModel([calls(*unknown), reply("x")], lenient=True)
    result = drive("sync", model, "go", tools=tools)
    total = sum(len(m.content or "") for m in result.messages if m.role == "tool")
    assert total < 200 * 600  # 1,000 such calls made 181 MiB when each listed every tool
    assert all(c.error_kind == "unknown_tool" for c in result.trace.calls)
