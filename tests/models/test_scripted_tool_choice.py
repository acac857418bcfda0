"""The scripted model checks ``tool_choice`` (``expect_tool_choice``) and honours it; the
wire fakes honour it as the providers do."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from harness import ScriptError, ToolChoice, run
from harness.loop import ModelRequest, ModelSettings
from harness.models import (
    ExpectToolChoice,
    ScriptedModel,
    call,
    expect_tool_choice,
    fake_openai_client,
    reply,
    steps_from_data,
)
from harness.tools import Tool


def _request(choice: Any) -> ModelRequest:
    return ModelRequest(
        messages=[],
        tools=[],
        tool_names=("a", "b"),
        settings=ModelSettings(tool_choice=choice),
        iteration=1,
    )


def test_expect_tool_choice_passes_on_the_same_choice_and_names_both_when_not() -> None:
    model = ScriptedModel([expect_tool_choice("none"), reply("x")])
    assert model.request(_request("none")).message.content == "x"
    model = ScriptedModel([expect_tool_choice("required"), call("a")])
    with pytest.raises(
        ScriptError,
        match="step 1 \\(expect tool_choice 'required'\\): expected "
        "'required', the request has 'none'",
    ):
        model.request(_request("none"))
    model = ScriptedModel([expect_tool_choice(None), reply("x")])
    with pytest.raises(ScriptError, match="the request has tool 'a'"):
        model.request(_request("a"))


def test_expect_tool_choice_from_scenario_data() -> None:
    steps = steps_from_data(
        [
            {"expect_tool_choice": "none"},
            {"expect_tool_choice": None},
            {"expect_tool_choice": "get_weather"},
            {"expect_tool_choice": {"allowed": ["a", "b"], "mode": "required"}},
        ]
    )
    assert steps == [
        ExpectToolChoice(choice=ToolChoice.none()),
        ExpectToolChoice(choice=None),
        ExpectToolChoice(choice=ToolChoice.tool("get_weather")),
        ExpectToolChoice(choice=ToolChoice.allowed_tools(["a", "b"], mode="required")),
    ]
    with pytest.raises(ScriptError, match="step 1: expect_tool_choice: tool_choice must be"):
        steps_from_data([{"expect_tool_choice": ""}])
    with pytest.raises(ScriptError, match="step 1: unknown keys \\['usage'\\]"):
        steps_from_data([{"expect_tool_choice": "none", "usage": {}}])


@pytest.mark.parametrize(
    ("choice", "step", "problem"),
    [
        ("none", call("a"), "tool_choice 'none' forbids tool calls"),
        ("required", reply("x"), "'required' forbids a plain text answer"),
        ("a", call("b"), "forces 'a', got a call of 'b'"),
    ],
)
def test_a_strict_script_cannot_answer_against_the_tool_choice(
    choice: str, step: Any, problem: str
) -> None:
    with pytest.raises(ScriptError, match=problem) as info:
        ScriptedModel([step]).request(_request(choice))
    assert "a real model could not answer so" in str(info.value)
    assert ScriptedModel([step], lenient=True).request(_request(choice))  # lenient allows it


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, name, {"type": "object", "properties": {}}, lambda a: name)


def test_the_wire_fake_honours_tool_choice_through_the_real_sdk() -> None:
    class Stubborn(ScriptedModel):
        """A served model that ignores the tool choice (as no provider's model can)."""

    served = Stubborn([reply("text"), reply("text")], lenient=True, require_exhausted=False)
    client = fake_openai_client(served)
    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    ok = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "q"}], tools=tools, tool_choice="auto"
    )
    assert ok.choices[0].message.content == "text"
    with pytest.raises(
        openai.InternalServerError, match="answered against the request's tool_choice"
    ):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "q"}],
            tools=tools,  # type: ignore[arg-type]
            tool_choice="required",
        )


def test_the_loop_sends_the_schedule_and_the_script_checks_it_end_to_end() -> None:
    from harness import ToolChoiceSchedule

    model = ScriptedModel(
        [expect_tool_choice("a"), call("a"), expect_tool_choice("auto"), reply("ok")]
    )
    result = run(model, "q", tools=[_tool("a")], strategies=[ToolChoiceSchedule(["a", "auto"])])
    assert result.output == "ok"


ANTHROPIC_TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("a", "b")
]


@pytest.mark.parametrize(
    ("step", "choice", "problem"),
    [
        (reply("text"), {"type": "any"}, "forbids a plain text answer"),
        (call("a"), {"type": "none"}, "forbids tool calls"),
        (call("b"), {"type": "tool", "name": "a"}, "'a'"),
    ],
    ids=["any-text", "none-call", "forced-other-tool"],
)
def test_the_anthropic_fake_honours_tool_choice_through_the_real_sdk(
    step: Any, choice: dict[str, Any], problem: str
) -> None:
    import anthropic

    from harness.models import fake_anthropic_client

    served = ScriptedModel([step], lenient=True, require_exhausted=False)
    client = fake_anthropic_client(served)
    with pytest.raises(anthropic.InternalServerError) as raised:
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[{"role": "user", "content": "q"}],
            tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
            tool_choice=choice,  # type: ignore[arg-type]
        )
    assert "answered against the request's tool_choice" in str(raised.value)
    assert problem in str(raised.value)


def test_the_openai_fake_refuses_a_call_under_none_and_another_tool_than_the_forced_one() -> None:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("a", "b")
    ]
    served = ScriptedModel([call("a"), call("b")], lenient=True, require_exhausted=False)
    client = fake_openai_client(served)
    for choice in ("none", {"type": "function", "function": {"name": "a"}}):
        with pytest.raises(openai.InternalServerError, match="against the request's tool_choice"):
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "q"}],
                tools=tools,  # type: ignore[arg-type]
                tool_choice=choice,  # type: ignore[arg-type]
            )
