"""Tool argument schemas: checked once at definition; validated without fetching or hanging.

A schema may come from anyone a user connects to (an MCP server's ``inputSchema``), so

- **no reference is ever retrieved**: references resolve against the schema itself and
  the bundled JSON Schema metaschemas only (a ``referencing`` registry whose retrieval
  refuses). A ``$ref`` that does not resolve so (``http://...``, ``file:///...``, a
  missing ``#/$defs/...``) makes the schema invalid at definition, naming the reference;
- **depth is bounded**: a schema nested deeper than ``MAX_SCHEMA_DEPTH`` is refused at
  definition (the metaschema check alone would overflow the stack past ~90 levels);
- **patterns cannot hang**: ``pattern`` and ``patternProperties`` (also as read by
  ``additionalProperties``) are searched by ``harness.tools._patterns``: a linear-time
  engine, or a time budget (``tool_timeout``) for look-around patterns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012

if TYPE_CHECKING:
    from referencing._core import Resolver

from harness.tools._patterns import budget_open, pattern_search, time_budget

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "ArgumentValidator",
    "argument_errors",
    "schema_problems",
    "tool_validator",
]

MAX_SCHEMA_DEPTH = 64
"""Most levels of objects and arrays a tool's schema may nest (refusing deeper ones at
definition keeps every later walk of the schema far from Python's recursion limit)."""


def _refuse(uri: str) -> Resource[Any]:
    """The registry's retrieval: never fetch anything (no network, no file)."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


_REGISTRY: Registry[Any] = Registry(retrieve=_refuse).combine(METASCHEMAS)  # type: ignore[call-arg]
"""What a reference may resolve to besides the schema itself: the bundled metaschemas."""


# -- keywords that search patterns, on the bounded engine ------------------------------


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not pattern_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if pattern_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(pattern_search(p, key) for p in patterns)
    ]


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(each) for each in sorted(extras))
        if "patternProperties" in schema:
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{shown} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({shown} {verb} unexpected)"
            )


ArgumentValidator: type[Validator] = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)
"""Draft 2020-12 with the pattern keywords on the bounded engine."""


def tool_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for ``schema`` that never retrieves a reference and never hangs."""
    return ArgumentValidator(dict(schema), registry=_REGISTRY)


def argument_errors(validator: Validator, instance: Any) -> list[ValidationError]:
    """Every error of ``instance``, in path order.

    Patterns that need backtracking share one budget for this validation: an enclosing
    ``time_budget``, else the loop's ``tool_timeout`` (``validation_seconds``), else
    ``DEFAULT_BUDGET``; past it they raise ``PatternTimeout``.
    """
    if budget_open():
        errors = list(validator.iter_errors(instance))
    else:
        with time_budget(None):
            errors = list(validator.iter_errors(instance))
    return sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])


# -- the definition check ---------------------------------------------------------------

_CHECKED: dict[str, tuple[str, ...]] = {}
"""Problems per schema JSON text already checked (bounded: ``_CHECKED_MAX``)."""
_CHECKED_MAX = 2048


def schema_problems(schema: Mapping[str, Any], *, subject: str = "parameters") -> list[str]:
    """Why ``schema`` cannot be a tool's argument schema (``[]`` when it can).

    Checks the nesting depth, the metaschema and every ``$ref``/``$dynamicRef`` (each
    must resolve without retrieval, and so must those inside its target). Results are kept per
    schema text: facades and generated universes build the same schemas over and over.
    """
    depth = _depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        return [
            f"{subject} is nested {depth} levels deep; at most {MAX_SCHEMA_DEPTH} are "
            'supported (define recursive structures once under "$defs" and refer to them '
            'with "$ref")'
        ]
    try:
        key: str | None = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _CHECKED:
        return list(_CHECKED[key])
    problems = _problems(dict(schema), subject)
    if key is not None:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = tuple(problems)
    return problems


def _problems(schema: dict[str, Any], subject: str) -> list[str]:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [f"{subject} is not a valid JSON Schema: {exc.message}"]
    problems: list[str] = []
    resolver = _REGISTRY.resolver_with_root(DRAFT202012.create_resource(schema))
    stack: list[tuple[Any, Resolver[Any], str]] = [(schema, resolver, "")]
    seen: set[int] = set()
    while stack:  # iterative: a chain of references adds no stack frame
        node, resolver, path = stack.pop()
        if not isinstance(node, Mapping) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node.get("$id"), str):
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        for keyword in ("$ref", "$dynamicRef"):
            reference = node.get(keyword)
            if not isinstance(reference, str):
                continue
            try:  # the target too: it may lie outside the places walked below
                resolved = resolver.lookup(reference)
            except Exception as exc:  # Unresolvable, Unretrievable, a malformed pointer...
                problems.append(
                    f"{subject}: the reference {keyword}: {reference!r} at {path or '/'} "
                    f"does not resolve ({_short(exc)}); references are never retrieved (no "
                    'URL, no file): put that schema under "$defs" and refer to it as '
                    '"#/$defs/<name>"'
                )
            else:
                stack.append((resolved.contents, resolved.resolver, reference))
        stack.extend(_children(node, resolver, path))
    return problems


def _short(exc: Exception) -> str:
    text = str(exc)
    text = text if len(text) <= 120 else text[:117] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_IN_VALUE = frozenset(
    {
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_IN_ARRAY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_IN_VALUES = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)
"""Where draft 2020-12 keeps subschemas: a keyword's value, its items, its values."""


def _children(
    node: Mapping[str, Any], resolver: Resolver[Any], path: str
) -> Iterator[tuple[Any, Resolver[Any], str]]:
    """The subschemas of ``node`` with the resolver in force there and their JSON pointer."""
    for keyword, value in node.items():
        where = f"{path}/{_escape(keyword)}"
        if keyword in _IN_VALUE:
            yield value, resolver, where
        elif keyword in _IN_ARRAY and isinstance(value, list):
            yield from ((item, resolver, f"{where}/{i}") for i, item in enumerate(value))
        elif keyword in _IN_VALUES and isinstance(value, Mapping):
            yield from ((item, resolver, f"{where}/{_escape(n)}") for n, item in value.items())


def _escape(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def _depth(value: Any) -> int:
    """How many levels of objects and arrays ``value`` nests (iterative: any depth)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest
