"""@llm_tool and as_tool: schemas from signatures, descriptions, definition errors."""

import asyncio
import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from harness._errors import ToolDefinitionError, UsageError
from harness.formats.openai_chat import tool_param
from harness.tools import (
    CallContext,
    PreparedCall,
    Tool,
    ToolSpec,
    __all__ as tools_all,
    as_tool,
    as_tools,
    build_args_schema,
    llm_tool,
    tool_methods,
    tool_spec,
    tools_of,
)
from harness.tools._schema import clean_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    title: str = "home"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Order(BaseModel):
    id: str
    ship_to: Address
    points: list[Point] = []


def _props(tool: Tool) -> dict[str, Any]:
    props: dict[str, Any] = dict(tool.parameters["properties"])
    return props


def _run(tool: Tool, arguments: str) -> Any:
    prepared = tool.prepare(arguments, CallContext())
    assert isinstance(prepared, PreparedCall), prepared
    return prepared.run_sync()


# -- defining tools -----------------------------------------------------------------------


@llm_tool
def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}:{days}"


@llm_tool(name="lookup", description="Find a thing by id.")
async def find_thing(thing_id: str) -> dict[str, str]:
    """Ignored docstring."""
    await asyncio.sleep(0)
    return {"id": thing_id}


class Calculator:
    def __init__(self, offset: int) -> None:
        self.offset = offset

    @llm_tool
    def add(self, a: int, b: int) -> int:
        """Add two numbers and the offset."""
        return a + b + self.offset

    @llm_tool(name="mul")
    async def multiply(self, a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    def not_a_tool(self) -> None:
        """Plain method."""


def test_decorator_returns_the_function_unchanged() -> None:
    assert get_weather("Oslo") == "Oslo:1"
    spec = tool_spec(get_weather)
    assert isinstance(spec, ToolSpec)
    assert spec.name == "get_weather"
    assert spec.description == "Get the weather forecast for a city."
    assert tool_spec(lambda: None) is None


def test_sync_function_tool() -> None:
    tool = as_tool(get_weather)
    assert tool.name == "get_weather"
    assert not tool.is_async
    assert tool_param(tool.definition()) == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "default": 1},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    }
    assert _run(tool, '{"city": "Oslo", "days": 3}') == "Oslo:3"


def test_async_function_tool_with_overrides() -> None:
    tool = as_tool(find_thing)
    assert tool.name == "lookup"
    assert tool.description == "Find a thing by id."
    assert tool.is_async
    prepared = tool.prepare('{"thing_id": "t1"}', CallContext())
    assert not isinstance(prepared, type(None))
    assert asyncio.run(prepared.run_async()) == {"id": "t1"}  # type: ignore[union-attr]
    assert prepared.run_sync() == {"id": "t1"}  # type: ignore[union-attr]


def test_methods_become_tools_bound_to_the_instance() -> None:
    calc = Calculator(offset=10)
    assert [attr for attr, _ in tool_methods(Calculator)] == ["add", "multiply"]
    tools = tools_of(calc)
    assert [t.name for t in tools] == ["add", "mul"]
    add, mul = tools
    assert "self" not in _props(add)
    assert add.parameters["required"] == ["a", "b"]
    assert _run(add, '{"a": 1, "b": 2}') == 13
    assert mul.is_async
    assert _run(mul, '{"a": 3, "b": 4}') == 12
    # a second instance gives tools bound to it
    assert _run(tools_of(Calculator(offset=0))[0], '{"a": 1, "b": 2}') == 3


def test_tool_methods_follow_inheritance_and_overrides() -> None:
    class Base:
        @llm_tool
        def first(self) -> str:
            """First."""
            return "base"

        @llm_tool
        def second(self) -> str:
            """Second."""
            return "base"

    class Child(Base):
        def second(self) -> str:  # overridden without the decorator: no longer a tool
            return "child"

        @llm_tool
        def third(self) -> str:
            """Third."""
            return "child"

    assert [attr for attr, _ in tool_methods(Child)] == ["first", "third"]


def test_as_tool_overrides_name_and_description() -> None:
    tool = as_tool(get_weather, name="weather", description="Weather.")
    assert (tool.name, tool.description) == ("weather", "Weather.")
    assert as_tool(tool) is tool
    renamed = as_tool(tool, name="w2", description="W2.")
    assert (renamed.name, renamed.description) == ("w2", "W2.")
    assert (tool.name, tool.description) == ("weather", "Weather.")


def test_plain_undecorated_function_and_lambda() -> None:
    def shout(text: str) -> str:
        return text.upper()

    tool = as_tool(shout)
    assert tool.name == "shout"
    assert tool.description == ""
    assert _run(tool, '{"text": "hi"}') == "HI"
    assert [t.name for t in as_tools([shout, get_weather])] == ["shout", "get_weather"]


def test_category_and_metadata_reach_the_tool() -> None:
    @llm_tool(category="billing", metadata={"cost": 2})
    def refund(order_id: str) -> str:
        """Refund."""
        return order_id

    tool = as_tool(refund)
    assert tool.metadata == {"cost": 2, "category": "billing"}
    assert "metadata" not in str(tool.definition())


# -- descriptions -------------------------------------------------------------------------


def test_parameter_descriptions_from_annotated() -> None:
    def f(city: Annotated[str, "The city name"], n: Annotated[int, "How many"] = 2) -> None:
        """Summary."""

    props = _props(as_tool(f))
    assert props["city"] == {"type": "string", "description": "The city name"}
    assert props["n"] == {"type": "integer", "description": "How many", "default": 2}


def test_google_docstring() -> None:
    def f(city: str, days: int = 1) -> None:
        """Get the forecast.

        Uses the national service.

        Args:
            city: The city to look up.
            days: Number of days.

        Returns:
            The forecast.
        """

    tool = as_tool(f)
    assert tool.description == "Get the forecast.\n\nUses the national service."
    assert _props(tool)["city"]["description"] == "The city to look up."
    assert _props(tool)["days"]["description"] == "Number of days."


def test_rest_docstring_and_annotated_wins() -> None:
    def f(city: Annotated[str, "From Annotated"], days: int) -> None:
        """Get the forecast.

        :param city: from the docstring
        :param days: Number of days.
        """

    tool = as_tool(f)
    assert tool.description == "Get the forecast."
    assert _props(tool)["city"]["description"] == "From Annotated"
    assert _props(tool)["days"]["description"] == "Number of days."


def test_no_docstring_gives_empty_description_and_no_parameter_descriptions() -> None:
    def f(city: str) -> None:
        pass

    tool = as_tool(f)
    assert tool.description == ""
    assert _props(tool) == {"city": {"type": "string"}}


# -- schema per type ----------------------------------------------------------------------


def every_type(
    s: str,
    i: int,
    fl: float,
    b: bool,
    color: Color,
    priority: Priority,
    mode: Literal["fast", "slow"],
    tags: list[str],
    weights: dict[str, float],
    order: Order,
    point: Point,
    maybe: Optional[int],  # noqa: UP045 - the typing spelling is part of what is tested
    maybe_too: str | None,
    limit: int = 10,
    flags: list[bool] | None = None,
) -> dict[str, Any]:
    """Take every supported type."""
    return {
        "s": s,
        "i": i,
        "fl": fl,
        "b": b,
        "color": color,
        "priority": priority,
        "mode": mode,
        "tags": tags,
        "weights": weights,
        "order": order,
        "point": point,
        "maybe": maybe,
        "maybe_too": maybe_too,
        "limit": limit,
        "flags": flags,
    }


def test_schema_for_every_supported_type() -> None:
    tool = as_tool(every_type)
    schema = tool.parameters
    Draft202012Validator.check_schema(schema)
    props = _props(tool)
    assert props["s"] == {"type": "string"}
    assert props["i"] == {"type": "integer"}
    assert props["fl"] == {"type": "number"}
    assert props["b"] == {"type": "boolean"}
    assert props["color"] == {"$ref": "#/$defs/Color"}
    assert schema["$defs"]["Color"] == {"enum": ["red", "blue"], "type": "string"}
    assert schema["$defs"]["Priority"] == {"enum": [1, 2], "type": "integer"}
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["order"] == {"$ref": "#/$defs/Order"}
    assert schema["$defs"]["Order"]["properties"]["ship_to"] == {"$ref": "#/$defs/Address"}
    # a field *named* title is kept; pydantic's generated titles are dropped
    assert schema["$defs"]["Address"]["properties"]["title"] == {
        "type": "string",
        "default": "home",
    }
    assert "title" not in schema
    assert schema["$defs"]["Point"]["required"] == ["x"]
    assert props["maybe"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert props["maybe_too"]["default"] is None
    assert props["limit"] == {"type": "integer", "default": 10}
    assert schema["required"] == [
        "s",
        "i",
        "fl",
        "b",
        "color",
        "priority",
        "mode",
        "tags",
        "weights",
        "order",
        "point",
    ]
    assert schema["additionalProperties"] is False


def test_every_type_is_converted_before_the_call() -> None:
    tool = as_tool(every_type)
    got = _run(
        tool,
        """{"s": "x", "i": 1, "fl": 2, "b": true, "color": "blue", "priority": 2,
            "mode": "slow", "tags": ["a"], "weights": {"k": 0.5},
            "order": {"id": "o1", "ship_to": {"street": "Main"}, "points": [{"x": 1}]},
            "point": {"x": 1.5, "y": 2}, "maybe_too": "yes"}""",
    )
    assert got["color"] is Color.BLUE
    assert got["priority"] is Priority.HIGH
    assert got["fl"] == 2.0
    assert isinstance(got["fl"], float)
    assert got["order"] == Order(id="o1", ship_to=Address(street="Main"), points=[Point(x=1)])
    assert got["point"] == Point(x=1.5, y=2.0)
    assert (got["maybe"], got["maybe_too"], got["limit"], got["flags"]) == (None, "yes", 10, None)


def test_defaults_that_look_like_schema_keys_are_kept() -> None:
    def f(book: dict[str, str] = {"title": "Dune"}) -> None:  # noqa: B006
        """Keep the default's data."""

    assert _props(as_tool(f))["book"]["default"] == {"title": "Dune"}
    assert clean_schema({"title": "T", "const": {"title": "x"}, "enum": [{"title": "y"}]}) == {
        "const": {"title": "x"},
        "enum": [{"title": "y"}],
    }


@pytest.mark.parametrize("param", ["json", "schema", "copy", "dict", "validate", "model_name"])
def test_parameters_named_like_pydantic_attributes(param: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def f({param}: str, other: int = 1):\n    return ({param}, other)", namespace)
    tool = as_tool(namespace["f"])
    assert list(_props(tool)) == [param, "other"]
    assert tool.parameters["required"] == [param]
    assert _run(tool, f'{{"{param}": "v"}}') == ("v", 1)
    bad = tool.prepare(f'{{"{param}_": "v"}}', CallContext())
    assert isinstance(bad, type(tool.to_result(None)))
    assert f"argument '{param}' is required but missing" in bad.content


# -- definition errors --------------------------------------------------------------------


class Opaque:
    """A class pydantic cannot describe."""


def test_all_signature_problems_are_reported_together() -> None:
    def broken(a, *args: int, _secret: str, c: Opaque, **kwargs: int) -> None:  # type: ignore[no-untyped-def]
        """Broken."""

    with pytest.raises(ToolDefinitionError) as info:
        llm_tool(broken)
    err = info.value
    assert isinstance(err, UsageError)
    assert err.target.endswith("test_all_signature_problems_are_reported_together.<locals>.broken")
    assert len(err.problems) == 5, err.problems
    joined = "\n".join(err.problems)
    assert "parameter 'a' has no type annotation" in joined
    assert "parameter *args: variadic" in joined
    assert "parameter **kwargs: variadic" in joined
    assert "parameter '_secret': names starting with '_'" in joined
    assert "parameter 'c': type Opaque cannot be described as JSON Schema" in joined
    message = str(err)
    assert "cannot make a tool from" in message
    assert "broken" in message
    assert all(p in message for p in err.problems)


def test_positional_only_and_unsupported_type_alone() -> None:
    def f(a: int, /) -> None:
        pass

    with pytest.raises(ToolDefinitionError, match="positional-only"):
        as_tool(f)

    def g(x: Opaque, y: int) -> None:
        pass

    with pytest.raises(ToolDefinitionError) as info:
        as_tool(g)
    assert info.value.problems == (
        "parameter 'x': type Opaque cannot be described as JSON Schema "
        "(PydanticSchemaGenerationError); use str/int/float/bool, enums, lists, dicts, "
        "pydantic models or dataclasses",
    )


def test_unresolvable_annotation_is_reported() -> None:
    def f(x: "NoSuchType") -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(ToolDefinitionError, match="cannot resolve its type annotations"):
        as_tool(f)


def test_unreadable_signature_is_reported() -> None:
    class Weird:
        __signature__ = "not a signature"

        def __call__(self) -> None:
            pass

    with pytest.raises(ToolDefinitionError, match="cannot read its signature"):
        build_args_schema(Weird())


def test_invalid_tool_name_on_the_decorator() -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name 'bad name'"):

        @llm_tool(name="bad name")
        def f() -> None:
            pass


def test_not_callable() -> None:
    with pytest.raises(ToolDefinitionError, match="needs a function"):
        llm_tool(42)  # type: ignore[call-overload]
    with pytest.raises(ToolDefinitionError, match="expected a Tool, a function"):
        as_tool(42)  # type: ignore[arg-type]


def test_unknown_preset_is_reported() -> None:
    def f(a: int, api_key: str) -> None:
        pass

    with pytest.raises(ToolDefinitionError, match=r"presets \['nope'\] are not parameters"):
        as_tool(f, presets={"api_key": "sk-abcdefgh1234", "nope": 1})


def test_public_api_is_pinned() -> None:
    import types

    import harness.tools as module

    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(tools_all) == public  # everything exported, nothing exported by accident
    assert len(tools_all) == len(set(tools_all))
    assert {
        "ArgsSchema",
        "CallContext",
        "PreparedCall",
        "Tool",
        "ToolResult",
        "ToolSpec",
        "Toolset",
        "as_tool",
        "as_tools",
        "build_args_schema",
        "is_valid_name",
        "llm_tool",
        "make_name",
        "sanitize_part",
        "serialize_for_model",
        "tool_methods",
        "tool_spec",
        "tools_of",
        "validate_name",
    } <= set(tools_all)


def test_clashing_parameter_names_get_distinct_fields() -> None:
    def f(json: str, json_: int) -> tuple[str, int]:
        return (json, json_)

    tool = as_tool(f)
    assert list(_props(tool)) == ["json", "json_"]
    assert _run(tool, '{"json": "a", "json_": 2}') == ("a", 2)

    def g(json_: int, json: str) -> tuple[str, int]:
        return (json, json_)

    assert _run(as_tool(g), '{"json": "b", "json_": 3}') == ("b", 3)


def test_annotated_constraints_without_description() -> None:
    from pydantic import Field

    def f(n: Annotated[int, Field(ge=0)], tag: Annotated[str, Field(max_length=3), "A tag"]) -> int:
        return n

    tool = as_tool(f)
    assert _props(tool)["n"] == {"type": "integer", "minimum": 0}
    assert _props(tool)["tag"] == {"type": "string", "maxLength": 3, "description": "A tag"}
    assert _run(tool, '{"n": 1, "tag": "ab"}') == 1
    result = tool.prepare('{"n": -1, "tag": "abcd"}', CallContext())
    assert "argument 'n'" in result.content  # type: ignore[union-attr]
    assert "argument 'tag'" in result.content  # type: ignore[union-attr]


def test_callable_without_a_name_needs_an_explicit_name() -> None:
    import functools

    def power(base: int, exp: int) -> int:
        return int(base**exp)

    square = functools.partial(power, exp=2)
    with pytest.raises(ToolDefinitionError, match="pass name="):
        as_tool(square)
    tool = as_tool(square, name="square")
    assert list(_props(tool)) == ["base", "exp"]
    assert _run(tool, '{"base": 3}') == 9


def test_callable_object_tool() -> None:
    class Scaler:
        def __init__(self, factor: int) -> None:
            self.factor = factor

        def __call__(self, value: Annotated[int, "The value to scale"]) -> int:
            """Scale a value."""
            return value * self.factor

    tool = as_tool(Scaler(3), name="scale")
    assert _props(tool) == {"value": {"type": "integer", "description": "The value to scale"}}
    assert _run(tool, '{"value": 2}') == 6
