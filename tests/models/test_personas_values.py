"""Seeded argument generation from JSON Schema: valid, deterministic, varied."""

from __future__ import annotations

import datetime
import random
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from harness.models._personas._values import SchemaValues, wrong_type_value


class Address(BaseModel):
    street: str
    city: str
    zip_code: Annotated[str, Field(min_length=5, max_length=5)]


class Order(BaseModel):
    order_id: str
    quantity: Annotated[int, Field(ge=1, le=10, multiple_of=2)]
    price: Annotated[float, Field(gt=0, lt=1000)]
    status: Literal["open", "shipped", "closed"]
    shipped_on: datetime.date | None = None
    created: datetime.datetime
    ship_to: Address
    notes: list[Annotated[str, Field(max_length=12)]] = []
    flags: dict[str, bool] = {}
    email: str = Field(json_schema_extra={"format": "email"})


SCHEMAS: list[dict[str, Any]] = [
    Order.model_json_schema(),
    {"type": "object", "properties": {}},
    {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 5}}},
    {"type": "object", "properties": {"x": {"type": "number", "maximum": -3}}, "required": ["x"]},
    {
        "type": "object",
        "properties": {"x": {"type": "integer", "minimum": 1000}},
        "required": ["x"],
    },
    {"type": ["string", "null"], "pattern": "^[a-z]+$"},
    {"const": 7},
    {"enum": ["a", 1, None]},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]}]},
    {
        "type": "array",
        "prefixItems": [{"type": "string", "format": "uuid"}, {"type": "integer"}],
        "minItems": 2,
        "maxItems": 2,
    },
    {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "maxItems": 3},
    {"oneOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
    {"type": "string", "format": "time"},
    {"properties": {"u": {"format": "uri"}, "h": {"format": "ipv4"}}, "required": ["u", "h"]},
    {"items": {"type": "null"}},
    {
        "type": "object",
        "properties": {"customer_id": {"type": "string"}},
        "required": ["customer_id"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_generated_values_validate(schema: dict[str, Any]) -> None:
    values = SchemaValues()
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for seed in range(25):
        value = values.generate(schema, random.Random(seed))
        errors = [e.message for e in validator.iter_errors(value)]
        assert not errors, (seed, value, errors)


def test_same_seed_same_value_different_seed_different_value() -> None:
    schema = Order.model_json_schema()
    first = SchemaValues().generate(schema, random.Random(3))
    again = SchemaValues().generate(schema, random.Random(3))
    assert first == again
    others = {repr(SchemaValues().generate(schema, random.Random(s))) for s in range(10)}
    assert len(others) > 5


def test_strings_follow_property_names() -> None:
    schema = {
        "type": "object",
        "properties": {"email": {"type": "string"}, "city": {"type": "string"}},
        "required": ["email", "city"],
    }
    value = SchemaValues().generate(schema, random.Random(0))
    assert "@" in value["email"]
    assert value["city"]


def test_unsatisfiable_pattern_gives_a_best_effort_value() -> None:
    schema = {"type": "string", "pattern": "^[0-9]{3}-[A-Z]{9}$"}
    value = SchemaValues().generate(schema, random.Random(0))
    assert isinstance(value, str)
    assert not Draft202012Validator(schema).is_valid(value)


def test_deep_recursion_is_bounded() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    for seed in range(10):
        value = SchemaValues().generate(schema, random.Random(seed))
        assert Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "object"},
        {"type": "array"},
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        {"type": ["integer", "string", "object"]},
        {},
    ],
)
def test_wrong_type_value_is_rejected_by_the_schema(schema: dict[str, Any]) -> None:
    checked = schema or {"type": "string"}
    value = wrong_type_value(schema)
    assert not Draft202012Validator(checked).is_valid(value)


def test_wrong_type_value_for_a_schema_accepting_every_candidate_is_a_fixed_object() -> None:
    # Every candidate (integer, string, object, array) is accepted: no wrong type
    # exists among them, and the fallback is a stable object, not an exception.
    schema = {"type": ["integer", "string", "object", "array"]}
    assert wrong_type_value(schema) == {"unexpected": True}
    assert wrong_type_value({"anyOf": [{"type": t} for t in schema["type"]]}) == {
        "unexpected": True
    }
