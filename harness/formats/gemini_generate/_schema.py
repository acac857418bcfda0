"""A function declaration's OpenAPI-subset ``parameters`` as the JSON Schema the harness
speaks.

Gemini takes a tool's arguments either as JSON Schema (``parametersJsonSchema``, what the
harness sends) or as its ``Schema`` object, a subset of OpenAPI 3.0 (``parameters``):
upper-case type names (``OBJECT``), or their numbers under ``enum-encoding=int``
(``"type": 6``), ``nullable`` instead of a ``null`` type, ``propertyOrdering``, and field
names in either case. Reading a recording or a client's request turns the second into
the first; the original is kept beside it (``provider_extra``) so it is sent back as it
came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.formats.gemini_generate._wire import TYPES, enum_name, snake

__all__ = ["json_schema"]

_NESTED = ("properties",)
_LISTS = ("anyOf",)
_ONE = ("items",)
_DROPPED = frozenset({"nullable", "propertyOrdering", "type"})
_KEYS = (
    "format",
    "title",
    "description",
    "enum",
    "maxItems",
    "minItems",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "default",
    "minimum",
    "maximum",
)


def _field(schema: Mapping[str, Any], name: str) -> Any:
    return schema[name] if name in schema else schema.get(snake(name))


def _type(schema: Mapping[str, Any]) -> Any:
    name = enum_name(_field(schema, "type"), TYPES)
    if name is None or name == "TYPE_UNSPECIFIED":
        return None
    kind = name.lower()
    return [kind, "null"] if _field(schema, "nullable") is True and kind != "null" else kind


def json_schema(schema: Any, depth: int = 0) -> Any:
    """The JSON Schema of an OpenAPI-subset ``Schema`` (anything else is returned as is).
    Keys it does not know are kept."""
    if not isinstance(schema, Mapping) or depth > 64:
        return schema
    out: dict[str, Any] = {}
    kind = _type(schema)
    if kind is not None:
        out["type"] = kind
    known = {*_DROPPED, *_NESTED, *_LISTS, *_ONE, *_KEYS}
    for name in _KEYS:
        value = _field(schema, name)
        if value is not None:
            out[name] = value
    properties = _field(schema, "properties")
    if isinstance(properties, Mapping):
        out["properties"] = {str(k): json_schema(v, depth + 1) for k, v in properties.items()}
    items = _field(schema, "items")
    if items is not None:
        out["items"] = json_schema(items, depth + 1)
    any_of = _field(schema, "anyOf")
    if isinstance(any_of, list):
        out["anyOf"] = [json_schema(v, depth + 1) for v in any_of]
    spelled = {*known, *(snake(k) for k in known)}
    out.update({k: v for k, v in schema.items() if k not in spelled})
    return out
