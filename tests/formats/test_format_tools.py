"""Tool definitions and tool choices in each format's shape, both directions, field by field."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ToolChoice, ToolDefinition, UsageError
from harness.formats import WireError, anthropic_messages, openai_chat, openai_responses

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
FULL = ToolDefinition(
    name="get_weather",
    description="Weather of a city.",
    parameters=SCHEMA,
    strict=True,
    defer_loading=True,
    cache_control={"type": "ephemeral"},
)


# -- Chat Completions --------------------------------------------------------------------


def test_chat_tool_entry() -> None:
    plain = ToolDefinition(name="get_weather", description="Weather of a city.", parameters=SCHEMA)
    entry = openai_chat.tool_param(plain)
    assert entry == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": SCHEMA,
        },
    }
    assert openai_chat.tool_from_param(entry) == plain
    hinted = ToolDefinition(
        name="f",
        strict=False,
        cache_control={"type": "ephemeral"},  # no per-tool cache hints: not sent
        provider_extra={"openai-chat": {"x_vendor": 1}, "anthropic-messages": {"y": 2}},
    )
    entry = openai_chat.tool_param(hinted)
    assert entry["function"] == {
        "name": "f",
        "parameters": {"type": "object", "properties": {}},
        "strict": False,
        "x_vendor": 1,
    }
    back = openai_chat.tool_from_param(entry)
    assert back.strict is False and back.provider_extra == {"openai-chat": {"x_vendor": 1}}


@pytest.mark.parametrize(
    ("field", "shown"),
    [({"namespace": "crm"}, "namespace"), ({"search": "bm25"}, "search='bm25'")],
)
def test_chat_refuses_what_it_cannot_send(field: dict[str, Any], shown: str) -> None:
    with pytest.raises(UsageError, match=f"has {shown} set, which Chat Completions"):
        openai_chat.tool_param(ToolDefinition(name="f", **field))


@pytest.mark.parametrize(
    ("entry", "code", "param"),
    [
        ({"type": "function"}, "missing_required_parameter", "tools[3].function.name"),
        ({"type": "function", "function": {"name": ""}}, "missing_required_parameter", None),
        (
            {"type": "function", "function": {"name": "f", "parameters": [1]}},
            "invalid_function_parameters",
            "tools[3].function.parameters",
        ),
    ],
)
def test_chat_tool_entries_the_api_refuses(entry: Any, code: str, param: str | None) -> None:
    with pytest.raises(WireError) as info:
        openai_chat.tool_from_param(entry, 3)
    assert info.value.status == 400 and info.value.code == code
    assert info.value.param == (param or "tools[3].function.name")


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice.auto(), "auto"),
        (ToolChoice.none(), "none"),
        (ToolChoice.required(), "required"),
        (ToolChoice.tool("f"), {"type": "function", "function": {"name": "f"}}),
        (
            ToolChoice.allowed_tools(["f", "g"], mode="required"),
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [
                        {"type": "function", "function": {"name": "f"}},
                        {"type": "function", "function": {"name": "g"}},
                    ],
                },
            },
        ),
        (
            ToolChoice(
                mode="tool", provider_extra={"openai-chat": {"type": "custom", "name": "c"}}
            ),
            {"type": "custom", "name": "c"},
        ),
    ],
)
def test_chat_tool_choice_both_ways(choice: ToolChoice, wire: Any) -> None:
    assert openai_chat.tool_choice_param(choice) == wire
    assert openai_chat.tool_choice_from_param(wire) == choice


def test_chat_tool_choice_of_the_wrong_type_is_the_apis_400() -> None:
    with pytest.raises(WireError) as info:
        openai_chat.tool_choice_from_param(7)
    assert info.value.status == 400 and info.value.param == "tool_choice"


# -- Responses ---------------------------------------------------------------------------


def test_responses_tool_entries_and_namespaces() -> None:
    a = ToolDefinition(name="a", namespace="crm", defer_loading=True)
    b = ToolDefinition(name="b", description="B.")
    c = ToolDefinition(name="c", namespace="crm", strict=True)
    tools = openai_responses.tool_params([a, b, c])
    empty = {"type": "object", "properties": {}}
    assert tools == [
        {
            "type": "namespace",
            "name": "crm",
            "tools": [
                {
                    "type": "function",
                    "name": "a",
                    "parameters": empty,
                    "strict": False,
                    "defer_loading": True,
                },
                {"type": "function", "name": "c", "parameters": empty, "strict": True},
            ],
        },
        {
            "type": "function",
            "name": "b",
            "description": "B.",
            "parameters": empty,
            "strict": False,
        },
    ]
    hosted = [{"type": "web_search_preview"}, {"type": "tool_search"}]
    body = {"model": "m", "input": "hi", "tools": [*tools, *hosted]}
    read = openai_responses.request_from_body(body).request
    assert [(t.name, t.namespace, t.defer_loading, t.search) for t in read.tools] == [
        ("a", "crm", True, None),
        ("c", "crm", False, None),
        ("b", None, False, None),
        ("tool_search", None, False, "hosted"),
    ]  # the hosted web search is the API's tool, not one the harness offers
    assert read.tool_names == ("a", "c", "b", "tool_search")


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice.required(), "required"),
        (ToolChoice.tool("f"), {"type": "function", "name": "f"}),
        (
            ToolChoice.allowed_tools(["f"]),
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]},
        ),
        (
            ToolChoice(mode="tool", provider_extra={"openai-responses": {"type": "file_search"}}),
            {"type": "file_search"},
        ),
    ],
)
def test_responses_tool_choice_both_ways(choice: ToolChoice, wire: Any) -> None:
    assert openai_responses.tool_choice_param(choice) == wire
    assert openai_responses.tool_choice_from_param(wire) == choice


def test_responses_tool_without_a_name_is_the_apis_400() -> None:
    with pytest.raises(WireError) as info:
        openai_responses.request_from_body(
            {"model": "m", "input": "hi", "tools": [{"type": "function"}]}
        )
    assert info.value.param == "tools[0].name" and info.value.code == "missing_required_parameter"


# -- Anthropic Messages ------------------------------------------------------------------


def test_anthropic_tool_entry_carries_every_neutral_field() -> None:
    entry = anthropic_messages.tool_param(FULL)
    assert entry == {
        "name": "get_weather",
        "description": "Weather of a city.",
        "input_schema": SCHEMA,
        "strict": True,
        "defer_loading": True,
        "cache_control": {"type": "ephemeral"},
    }
    assert anthropic_messages.tool_from_param(entry) == FULL
    extra = ToolDefinition(
        name="f", provider_extra={"anthropic-messages": {"input_examples": [{}]}}
    )
    entry = anthropic_messages.tool_param(extra)
    assert entry["input_examples"] == [{}]
    assert anthropic_messages.tool_from_param(entry) == extra


def test_anthropic_refuses_what_it_cannot_say() -> None:
    with pytest.raises(UsageError, match="namespace='crm'"):
        anthropic_messages.tool_param(ToolDefinition(name="f", namespace="crm"))
    with pytest.raises(UsageError, match=r"allows only \['f'\]"):
        anthropic_messages.tool_choice_param(ToolChoice.allowed_tools(["f"]))


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        (ToolChoice.auto(), None, {"type": "auto"}),
        (ToolChoice.required(), False, {"type": "any", "disable_parallel_tool_use": True}),
        (ToolChoice.none(), False, {"type": "none"}),
        (ToolChoice.tool("f"), None, {"type": "tool", "name": "f"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        (None, None, None),
        (
            ToolChoice(mode="tool", provider_extra={"anthropic-messages": {"type": "web_search"}}),
            None,
            {"type": "web_search"},
        ),
    ],
)
def test_anthropic_tool_choice_both_ways(
    choice: ToolChoice | None, parallel: bool | None, wire: Any
) -> None:
    assert anthropic_messages.tool_choice_param(choice, parallel_tool_calls=parallel) == wire
    if wire is not None:
        expected = choice or ToolChoice.auto()
        assert anthropic_messages.tool_choice_from_param(wire) == expected
