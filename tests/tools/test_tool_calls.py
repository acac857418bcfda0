"""Calling tools: argument validation, schema tools, typed tools and copies."""

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from harness._errors import InvalidToolName, ToolDefinitionError
from harness.formats.openai_chat import tool_param
from harness.tools import CallContext, PreparedCall, Tool, ToolResult, as_tool


def get_weather(city: str, days: int = 1) -> str:
    """Get the weather."""
    return f"{city}:{days}"


WEATHER = as_tool(get_weather)

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _prepare(tool: Tool, arguments: str, context: CallContext | None = None) -> PreparedCall:
    prepared = tool.prepare(arguments, context or CallContext())
    assert isinstance(prepared, PreparedCall), prepared
    return prepared


def _error(tool: Tool, arguments: str) -> ToolResult:
    result = tool.prepare(arguments, CallContext())
    assert isinstance(result, ToolResult), result
    assert result.is_error
    assert result.error_kind == "invalid_arguments"
    assert result.content.startswith(f"Tool {tool.name!r}")
    return result


# -- argument validation for function tools -----------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"city": ', "the arguments are not valid JSON (Invalid JSON: EOF while parsing"),
        ("{'city': 'Oslo'}", "the arguments are not valid JSON"),
        ("[1, 2]", "the arguments must be a JSON object, got [1, 2]"),
        ('"Oslo"', "the arguments must be a JSON object, got 'Oslo'"),
        ("null", "the arguments must be a JSON object, got None"),
        ('{"city": 5}', "argument 'city': Input should be a valid string (got 5)"),
        ('{"city": "Oslo", "days": "3"}', "argument 'days': Input should be a valid integer"),
        ('{"city": "Oslo", "days": 2.5}', "argument 'days': Input should be a valid integer"),
        ("{}", "argument 'city' is required but missing"),
        ('{"city": "Oslo", "when": "now"}', "argument 'when' is not a parameter of this tool"),
    ],
    ids=[
        "truncated",
        "python-dict",
        "array",
        "string",
        "null",
        "wrong-type",
        "string-for-int",
        "fraction-for-int",
        "missing",
        "extra",
    ],
)
def test_bad_arguments_give_an_error_result(arguments: str, expected: str) -> None:
    result = _error(WEATHER, arguments)
    assert expected in result.content
    assert result.value is None
    assert result.exception is None


def test_several_problems_are_listed_together() -> None:
    result = _error(WEATHER, '{"days": "x", "extra": 1}')
    assert "argument 'city' is required but missing" in result.content
    assert "argument 'days'" in result.content
    assert "argument 'extra' is not a parameter" in result.content


def test_nested_argument_paths_are_named() -> None:
    class Item(BaseModel):
        sku: str
        qty: int

    def order(items: list[Item]) -> int:
        return len(items)

    result = _error(as_tool(order), '{"items": [{"sku": "a", "qty": 1}, {"sku": "b"}]}')
    assert "argument 'items.1.qty' is required but missing" in result.content


def test_long_bad_inputs_are_truncated_in_the_message() -> None:
    result = _error(WEATHER, json.dumps({"city": ["x" * 1000]}))
    assert len(result.content) < 400
    assert "..." in result.content


@pytest.mark.parametrize("arguments", ["", "   ", "\n"])
def test_empty_arguments_mean_no_arguments(arguments: str) -> None:
    def ping() -> str:
        return "pong"

    assert _prepare(as_tool(ping), arguments).run_sync() == "pong"
    assert "argument 'city' is required but missing" in _error(WEATHER, arguments).content


def test_valid_arguments_are_converted_and_defaults_filled() -> None:
    prepared = _prepare(WEATHER, '{"city": "Oslo"}')
    assert prepared.kwargs == {"city": "Oslo", "days": 1}
    assert prepared.run_sync() == "Oslo:1"
    assert _prepare(WEATHER, '{"days": 3, "city": "Rome"}').run_sync() == "Rome:3"


def test_integer_valued_floats_are_accepted_like_json_schema_does() -> None:
    # JSON Schema counts 3.0 as an integer; pydantic strict mode alone would refuse it
    prepared = _prepare(WEATHER, '{"city": "Oslo", "days": 3.0}')
    assert prepared.kwargs["days"] == 3
    assert type(prepared.kwargs["days"]) is int


def test_lone_surrogate_escape_is_accepted_like_json_schema_does() -> None:
    prepared = _prepare(WEATHER, '{"city": "\\ud800"}')
    assert prepared.kwargs["city"] == "\ud800"


def test_non_standard_json_constants_are_rejected() -> None:
    def count(n: int) -> int:
        return n

    assert "argument 'n'" in _error(as_tool(count), '{"n": NaN}').content


# -- schema tools -------------------------------------------------------------------------


def test_schema_tool_handler_receives_the_argument_dict() -> None:
    seen: list[Any] = []

    def search(arguments: dict[str, Any]) -> list[str]:
        seen.append(arguments)
        return [arguments["query"]]

    tool = Tool.from_schema("search", "Search things.", SEARCH_SCHEMA, search)
    assert tool_param(tool.definition()) == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search things.",
            "parameters": SEARCH_SCHEMA,
        },
    }
    assert _prepare(tool, '{"query": "x", "limit": 2}').run_sync() == ["x"]
    assert seen == [{"query": "x", "limit": 2}]


def test_schema_tool_handler_with_context() -> None:
    def search(arguments: dict[str, Any], context: CallContext) -> str:
        return f"{arguments['query']}@{context['tenant']}"

    tool = Tool.from_schema("search", "Search.", SEARCH_SCHEMA, search)
    assert tool.takes_context
    assert _prepare(tool, '{"query": "x"}', CallContext({"tenant": "acme"})).run_sync() == "x@acme"


def test_async_schema_tool() -> None:
    async def search(arguments: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return str(arguments["query"])

    tool = Tool.from_schema("search", "Search.", SEARCH_SCHEMA, search)
    assert tool.is_async
    assert asyncio.run(_prepare(tool, '{"query": "q"}').run_async()) == "q"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"query": ', "the arguments are not valid JSON (Expecting value at position 10)"),
        ("[1]", "[1] is not of type 'object'"),
        ('{"query": 5}', "argument 'query': 5 is not of type 'string'"),
        ('{"query": "x", "limit": 0}', "argument 'limit': 0 is less than the minimum of 1"),
        ("{}", "'query' is a required property"),
        ("", "'query' is a required property"),
        ('{"query": "x", "when": 1}', "('when' was unexpected)"),
    ],
)
def test_schema_tool_arguments_are_checked_with_jsonschema(arguments: str, expected: str) -> None:
    tool = Tool.from_schema("search", "Search.", SEARCH_SCHEMA, lambda a: a)
    assert expected in _error(tool, arguments).content


def test_schema_tool_reports_every_problem() -> None:
    tool = Tool.from_schema("search", "Search.", SEARCH_SCHEMA, lambda a: a)
    content = _error(tool, '{"limit": "many", "x": 1}').content
    assert "'query' is a required property" in content
    assert "argument 'limit'" in content
    assert "'x' was unexpected" in content


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ({"type": "objekt"}, "parameters is not a valid JSON Schema"),
        ({"type": "object", "required": "query"}, "parameters is not a valid JSON Schema"),
        ({"type": "string"}, "parameters must be an object schema"),
        ({"properties": {}}, "parameters must be an object schema"),
        ("not a dict", "parameters must be a JSON Schema dict"),
    ],
)
def test_invalid_schema_is_rejected_at_construction(parameters: Any, expected: str) -> None:
    with pytest.raises(ToolDefinitionError, match=expected) as info:
        Tool.from_schema("search", "Search.", parameters, lambda a: a)
    assert info.value.target == "tool 'search'"


def test_schema_tool_needs_a_callable_handler_and_a_valid_name() -> None:
    with pytest.raises(ToolDefinitionError, match="handler must be callable"):
        Tool.from_schema("search", "Search.", SEARCH_SCHEMA, "search")  # type: ignore[arg-type]
    with pytest.raises(InvalidToolName, match="'bad name'"):
        Tool.from_schema("bad name", "Search.", SEARCH_SCHEMA, lambda a: a)


# -- typed tools --------------------------------------------------------------------------


class Query(BaseModel):
    text: str
    limit: int = 5


class Hits(BaseModel):
    items: list[str]
    total: int


def test_typed_tool_model_output_is_serialised() -> None:
    def search(query: Query) -> Hits:
        return Hits(items=[query.text] * 2, total=query.limit)

    tool = Tool.from_model("search", "Search.", Query, search)
    assert tool.parameters == {
        "type": "object",
        "properties": {"text": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
        "required": ["text"],
    }
    prepared = _prepare(tool, '{"text": "a"}')
    assert prepared.args == (Query(text="a"),)
    result = tool.to_result(prepared.run_sync())
    assert json.loads(result.content) == {"items": ["a", "a"], "total": 5}
    assert result.value == Hits(items=["a", "a"], total=5)


def test_typed_tool_str_output_is_passed_through() -> None:
    tool = Tool.from_model("echo", "Echo.", Query, lambda q: f'{{"said": "{q.text}"}}')
    result = tool.to_result(_prepare(tool, '{"text": "hi"}').run_sync())
    assert result.content == '{"said": "hi"}'  # not re-encoded as a JSON string


def test_typed_tool_validation_errors() -> None:
    tool = Tool.from_model("search", "Search.", Query, lambda q: q)
    assert "argument 'text' is required but missing" in _error(tool, "{}").content
    assert "not valid JSON" in _error(tool, "{").content
    assert "argument 'limit'" in _error(tool, '{"text": "a", "limit": "5"}').content


def test_typed_tool_needs_a_model_class() -> None:
    with pytest.raises(ToolDefinitionError, match="input_model must be a pydantic model class"):
        Tool.from_model("search", "Search.", dict, lambda q: q)  # type: ignore[arg-type]


# -- copies -------------------------------------------------------------------------------


def test_with_copies_leave_the_original_unchanged() -> None:
    original = WEATHER
    before = original.definition()

    described = original.with_description("Weather, briefly.")
    noted = original.with_note("Use metric units.").with_note("Max 7 days.")
    renamed = original.with_name("weather2")
    tagged = original.with_metadata(category="info")

    assert described.description == "Weather, briefly."
    assert noted.full_description == "Get the weather.\n\nUse metric units.\n\nMax 7 days."
    assert noted.definition().description == noted.full_description
    assert renamed.name == "weather2"
    assert renamed.definition().name == "weather2"
    assert tagged.metadata == {"category": "info"}
    for copy in (described, noted, renamed, tagged):
        assert copy is not original
        assert _prepare(copy, '{"city": "Oslo"}').run_sync() == "Oslo:1"
    assert original.definition() == before
    assert original.notes == ()
    assert original.metadata == {}


def test_with_name_validates_the_name() -> None:
    with pytest.raises(InvalidToolName):
        WEATHER.with_name("no spaces allowed")


def test_tools_are_immutable() -> None:
    with pytest.raises(AttributeError):
        WEATHER.name = "x"  # type: ignore[misc]


def test_sync_tool_runs_inline_on_the_event_loop() -> None:
    assert asyncio.run(_prepare(WEATHER, '{"city": "Oslo"}').run_async()) == "Oslo:1"


def test_prepared_call_repr_hides_arguments() -> None:
    prepared = _prepare(WEATHER, '{"city": "Atlantis"}')
    assert "Atlantis" not in repr(prepared)
    assert "get_weather" in repr(prepared)
