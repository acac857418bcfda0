"""The neutral tool model: ``ToolDefinition`` and ``ToolChoice`` (``harness.formats``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

import harness
from harness import ToolChoice, ToolDefinition, UsageError, as_tool
from harness.loop import LoopOptions, ModelSettings


def weather(city: str) -> str:
    """Weather of a city."""
    return city


def test_a_tool_offers_a_neutral_definition_built_once() -> None:
    tool = as_tool(weather)
    definition = tool.definition()
    assert definition == ToolDefinition(
        name="weather", description="Weather of a city.", parameters=tool.parameters
    )
    assert tool.offered_definition is tool.offered_definition  # cached: built once per tool
    assert harness.ToolDefinition is ToolDefinition and harness.ToolChoice is ToolChoice


def test_defaults_and_plain_data() -> None:
    bare = ToolDefinition(name="ping")
    assert bare.parameters == {"type": "object", "properties": {}}
    assert bare.parameters is not ToolDefinition(name="pong").parameters  # never shared
    assert bare.to_data() == {"name": "ping", "parameters": {"type": "object", "properties": {}}}
    full = ToolDefinition(
        name="f",
        description="d",
        strict=True,
        defer_loading=True,
        namespace="crm",
        cache_control={"type": "ephemeral"},
        provider_extra={"anthropic-messages": {"input_examples": [{"a": 1}]}},
    )
    data = full.to_data()
    assert json.loads(json.dumps(data)) == data
    assert data["defer_loading"] is True and data["namespace"] == "crm" and data["strict"] is True
    assert full.extra_for("anthropic-messages") == {"input_examples": [{"a": 1}]}
    assert full.extra_for("openai-chat") == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        full.name = "g"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"name": ""}, "non-empty name"),
        ({"name": 5}, "non-empty name"),
        ({"name": "f", "description": 3}, "description must be a string"),
        ({"name": "f", "parameters": ["x"]}, "parameters must be a JSON Schema object"),
        ({"name": "f", "strict": "yes"}, "strict must be True, False or None"),
        ({"name": "f", "defer_loading": None}, "defer_loading must be a bool"),
        ({"name": "f", "namespace": ""}, "namespace must be a non-empty string"),
        ({"name": "f", "cache_control": "ephemeral"}, "cache_control must be a mapping"),
        ({"name": "f", "provider_extra": {"openai-chat": 1}}, "provider_extra must map"),
    ],
)
def test_bad_definitions_are_refused_naming_the_field(fields: dict[str, Any], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        ToolDefinition(**fields)


def test_tool_choices_by_constructor() -> None:
    assert ToolChoice.auto().mode == "auto" and ToolChoice.auto() == ToolChoice(mode="auto")
    assert ToolChoice.none().mode == "none" and ToolChoice.required().mode == "required"
    assert ToolChoice.tool("f") == ToolChoice(mode="tool", name="f")
    subset = ToolChoice.allowed_tools(["a", "b"], mode="required")
    assert subset.allowed == ("a", "b") and subset.mode == "required"
    assert subset.to_data() == {"mode": "required", "allowed": ["a", "b"], "name": None}
    assert ToolChoice.tool("f").to_data() == {"mode": "tool", "allowed": None, "name": "f"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("auto", ToolChoice.auto()),
        ("none", ToolChoice.none()),
        ("required", ToolChoice.required()),
        ("any", ToolChoice.required()),
        ("get_weather", ToolChoice.tool("get_weather")),
        (ToolChoice.tool("x"), ToolChoice.tool("x")),
        # the provider dicts the settings took before ToolChoice
        ({"type": "function", "function": {"name": "f"}}, ToolChoice.tool("f")),
        ({"type": "function", "name": "f"}, ToolChoice.tool("f")),
        ({"type": "tool", "name": "f"}, ToolChoice.tool("f")),
        ({"type": "any"}, ToolChoice.required()),
        ({"type": "none"}, ToolChoice.none()),
        (
            {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "a"}],
            },
            ToolChoice.allowed_tools(["a"], mode="required"),
        ),
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "auto",
                    "tools": [{"type": "function", "function": {"name": "a"}}],
                },
            },
            ToolChoice.allowed_tools(["a"]),
        ),
    ],
)
def test_tool_choice_of(value: Any, expected: ToolChoice | None) -> None:
    assert ToolChoice.of(value) == expected
    assert ModelSettings(tool_choice=value).tool_choice == expected  # type: ignore[arg-type]
    assert LoopOptions(tool_choice=value).tool_choice == expected


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: ToolChoice(mode="sometimes"), "mode must be one of"),  # type: ignore[arg-type]
        (lambda: ToolChoice(mode="tool"), "needs the name"),
        (lambda: ToolChoice(mode="auto", name="f"), "needs mode='tool'"),
        (lambda: ToolChoice(mode="none", allowed=("a",)), "needs mode 'auto' or 'required'"),
        (lambda: ToolChoice.allowed_tools([]), "non-empty list of tool names"),
        (lambda: ToolChoice.allowed_tools("abc"), "takes a list of names"),
        (lambda: ToolChoice.of(""), "a tool name, got ''"),
        (lambda: ToolChoice.of(3), "got int: 3"),  # type: ignore[arg-type]
        (lambda: ToolChoice.of({"type": "web_search"}), "not a choice the harness reads"),
        (lambda: LoopOptions(tool_choice={"type": "?"}), "invalid loop options: tool_choice"),
    ],
)
def test_bad_tool_choices_are_refused(build: Any, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        build()
