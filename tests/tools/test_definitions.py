"""The neutral tool model: ``ToolDefinition`` and ``ToolChoice`` (``harness.tools``), and their
plain-data form."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from hypothesis import given, strategies as st

import harness
import harness.formats
import harness.tools
from harness import ToolChoice, ToolDefinition, UsageError, as_tool
from harness.formats import anthropic_messages, openai_chat, openai_responses
from harness.loop import LoopOptions, ModelSettings
from tests.formats.format_strategies import FORMATS, search_tools, tool_choices, tool_definitions


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


def test_the_formats_package_re_exports_the_same_objects() -> None:
    assert harness.tools.ToolDefinition is harness.formats.ToolDefinition is ToolDefinition
    assert harness.tools.ToolChoice is harness.formats.ToolChoice is ToolChoice
    assert ToolDefinition.__module__ == "harness.tools._definitions"


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
        # the plain data to_data writes, and the scenario files' {allowed: [...], mode: ...}
        ({"mode": "tool", "name": "f", "allowed": None}, ToolChoice.tool("f")),
        ({"mode": "none"}, ToolChoice.none()),
        ({"allowed": ["a"], "mode": "required"}, ToolChoice.allowed_tools(["a"], mode="required")),
        ({"allowed": ["a", "b"]}, ToolChoice.allowed_tools(["a", "b"])),
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
        (lambda: ToolChoice.of({"allowed": "ab"}), "takes a list of names"),
        (lambda: ToolChoice.of({"allowed": 3}), "takes a list of names"),
        (lambda: ToolChoice.of({"mode": "tool"}), "needs the name"),
        (lambda: LoopOptions(tool_choice={"type": "?"}), "invalid loop options: tool_choice"),
    ],
)
def test_bad_tool_choices_are_refused(build: Any, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        build()


# A provider's tool_choice dict is that provider's shape: its format reads it. The neutral
# model still reads the ones it read before 0.2.0, with a warning, until 0.3.0.
PROVIDER_DICTS = [
    (openai_chat, {"type": "function", "function": {"name": "f"}}, ToolChoice.tool("f")),
    (
        openai_chat,
        {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "auto",
                "tools": [{"type": "function", "function": {"name": "a"}}],
            },
        },
        ToolChoice.allowed_tools(["a"]),
    ),
    (openai_responses, {"type": "function", "name": "f"}, ToolChoice.tool("f")),
    (
        openai_responses,
        {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "a"}]},
        ToolChoice.allowed_tools(["a"], mode="required"),
    ),
    (anthropic_messages, {"type": "tool", "name": "f"}, ToolChoice.tool("f")),
    (anthropic_messages, {"type": "any"}, ToolChoice.required()),
    (anthropic_messages, {"type": "none"}, ToolChoice.none()),
]


@pytest.mark.parametrize(("module", "value", "expected"), PROVIDER_DICTS)
def test_a_provider_dict_is_read_by_its_format(
    module: Any, value: dict[str, Any], expected: ToolChoice
) -> None:
    assert module.tool_choice_from_param(value) == expected
    assert ModelSettings(tool_choice=module.tool_choice_from_param(value)).tool_choice == expected


@pytest.mark.parametrize(("module", "value", "expected"), PROVIDER_DICTS)
def test_the_neutral_model_reads_the_old_provider_dicts_until_0_3_with_a_warning(
    module: Any, value: dict[str, Any], expected: ToolChoice
) -> None:
    shown = {
        "tool": f"ToolChoice.tool({expected.name!r})",
        "required": "ToolChoice.allowed_tools" if expected.allowed else "ToolChoice.required()",
        "none": "ToolChoice.none()",
        "auto": "ToolChoice.allowed_tools",
    }[expected.mode]
    says = rf"since 0\.2\.0 and will be removed in 0\.3\.0: write harness\.{re.escape(shown)}"
    for read in (
        ToolChoice.of,
        lambda v: ModelSettings(tool_choice=v).tool_choice,
        lambda v: LoopOptions(tool_choice=v).tool_choice,
    ):
        with pytest.warns(DeprecationWarning, match=says):
            assert read(value) == expected


def test_a_dict_no_provider_wrote_is_refused_naming_the_fixes() -> None:
    with pytest.raises(UsageError, match=r"not a choice the harness reads.*harness\.formats\."):
        ToolChoice.of({"type": "required", "name": "x"})


@given(
    st.sampled_from(FORMATS).flatmap(
        lambda name: (
            tool_definitions(format_name=name, names=("a", "b"))
            | st.lists(search_tools(name), min_size=1, max_size=1)
        )
    )
)
def test_definitions_round_trip_through_plain_data(definitions: list[ToolDefinition]) -> None:
    for definition in definitions:
        data = definition.to_data()
        assert json.loads(json.dumps(data)) == data
        assert ToolDefinition.from_data(data) == definition


@given(
    st.sampled_from(FORMATS).flatmap(
        lambda name: tool_choices(format_name=name, names=("a", "b", "c"))
    )
)
def test_choices_round_trip_through_plain_data(choice: ToolChoice | None) -> None:
    if choice is not None:
        assert ToolChoice.from_data(choice.to_data()) == choice
        assert ToolChoice.of(choice.to_data()) == choice


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"name": "f", "defer": True}, "unknown key.s. defer; the keys are name, description"),
        ({"name": "f", "search": "semantic"}, "search must be one of"),
        (["f"], "must be a mapping"),
    ],
)
def test_bad_plain_definitions_are_refused_naming_the_key(data: Any, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        ToolDefinition.from_data(data)
