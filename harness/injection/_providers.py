"""``@tool_provider``: classes whose instances expose their ``@llm_tool`` methods as tools."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from harness._errors import InvalidToolProvider
from harness.tools import ToolSpec, make_name, readable_part, sanitize_part, tool_methods

__all__ = [
    "WALK_LIMIT",
    "ProviderSpec",
    "find_providers",
    "provider_id",
    "provider_spec",
    "scan_providers",
    "tool_provider",
]

C = TypeVar("C", bound=type)
_SCALARS = (str, bytes, int, float, bool)
_MARK = "__tool_provider__"
WALK_LIMIT = 10_000
"""Most objects one discovery walk visits in a tool result."""


@dataclasses.dataclass(frozen=True)
class ProviderSpec:
    """What ``@tool_provider`` records on a class."""

    prefix: str
    """Name prefix of the generated tools (default: the lower-cased class name)."""
    id_attr: str
    """Attribute holding the instance id used in tool names."""
    methods: tuple[tuple[str, ToolSpec], ...]
    """The class's ``@llm_tool`` methods (attribute name, spec)."""


@overload
def tool_provider(cls: C, /, *, prefix: str | None = None, id_attr: str = "id") -> C: ...


@overload
def tool_provider(
    cls: None = None, /, *, prefix: str | None = None, id_attr: str = "id"
) -> Callable[[C], C]: ...


def tool_provider(
    cls: C | None = None, /, *, prefix: str | None = None, id_attr: str = "id"
) -> C | Callable[[C], C]:
    """Mark a class whose instances, when returned by a tool, expose their methods as tools.

    Tools are named ``{prefix}_{id}_{method}``; the id keeps only letters, digits
    and underscores, and long names are shortened deterministically.
    """

    def mark(target: C) -> C:
        if not isinstance(target, type):
            raise InvalidToolProvider(
                f"@tool_provider decorates classes, got {target!r}", reason="not_a_class"
            )
        methods = tuple(tool_methods(target))
        if not methods:
            raise InvalidToolProvider(
                f"@tool_provider class {target.__qualname__} has no @llm_tool methods; "
                "decorate at least one method with @llm_tool",
                provider_class=target,
                reason="no_tool_methods",
            )
        chosen = prefix if prefix is not None else target.__name__.lower()
        if not sanitize_part(chosen):
            raise InvalidToolProvider(
                f"@tool_provider prefix {chosen!r} for {target.__qualname__} has no letters or "
                "digits; pass prefix='something'",
                provider_class=target,
                reason="bad_prefix",
            )
        if not isinstance(id_attr, str) or not id_attr:
            raise InvalidToolProvider(
                f"id_attr must be an attribute name, got {id_attr!r}",
                provider_class=target,
                reason="bad_id_attr",
            )
        setattr(target, _MARK, ProviderSpec(prefix=chosen, id_attr=id_attr, methods=methods))
        return target

    if cls is not None:
        return mark(cls)
    return mark


def provider_spec(obj_or_cls: Any) -> ProviderSpec | None:
    """The ``ProviderSpec`` of an instance or class, if it is a tool provider."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    spec = cls.__dict__.get(_MARK) or getattr(cls, _MARK, None)
    return spec if isinstance(spec, ProviderSpec) else None


def provider_id(instance: Any, spec: ProviderSpec) -> str:
    """The id of a provider instance, or ``InvalidToolProvider`` naming the fix."""
    try:
        value = getattr(instance, spec.id_attr)
    except AttributeError:
        raise InvalidToolProvider(
            f"{type(instance).__qualname__} instance has no attribute {spec.id_attr!r} to use as "
            f"its id; add it, or pass id_attr='<attribute>' to @tool_provider",
            provider_class=type(instance),
            reason="missing_id",
        ) from None
    where = f"{type(instance).__qualname__}.{spec.id_attr}"
    if value is None:
        raise InvalidToolProvider(
            f"{where}=None cannot name tools: give the instance an id",
            provider_class=type(instance),
            reason="none_id",
        )
    if isinstance(value, str):
        text = value
    elif isinstance(value, (int, uuid.UUID)) and not isinstance(value, bool):
        text = str(value)
    else:
        raise InvalidToolProvider(
            f"{where} is a {type(value).__name__} ({_short(value)}); an id must be a str, "
            "int or UUID so tool names are stable and readable: store a string id there, "
            "or pass id_attr='<attribute>' to @tool_provider",
            provider_class=type(instance),
            reason="bad_id_type",
        )
    if not text.strip():
        raise InvalidToolProvider(
            f"{where}={value!r} cannot name tools: the id is empty",
            provider_class=type(instance),
            reason="empty_id",
        )
    return text


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def tool_names_for(spec: ProviderSpec, instance_id: str) -> list[tuple[str, str]]:
    """``(attribute, tool name)`` pairs for one instance."""
    part = readable_part(instance_id)
    return [(attr, make_name(spec.prefix, part, ms.name)) for attr, ms in spec.methods]


def find_providers(value: Any, *, limit: int = WALK_LIMIT) -> Iterator[Any]:
    """Provider instances in ``value``: itself, in lists/tuples/sets/dicts, or in model fields."""
    return iter(scan_providers(value, limit=limit)[0])


def scan_providers(value: Any, *, limit: int = WALK_LIMIT) -> tuple[list[Any], bool]:
    """``(providers found, complete)``: the walk visits each object once (cycles are
    fine) and stops after ``limit`` objects, in which case ``complete`` is False."""
    if value is None or isinstance(value, _SCALARS):
        return [], True
    seen: set[int] = set()
    stack = [value]
    visited = 0
    found: list[Any] = []
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, _SCALARS) or id(item) in seen:
            continue
        if visited >= limit:
            return found, False
        visited += 1
        seen.add(id(item))
        if provider_spec(item) is not None and not isinstance(item, type):
            found.append(item)
            continue
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(reversed(list(item)))
        elif isinstance(item, BaseModel):
            stack.extend(reversed([getattr(item, f) for f in type(item).model_fields]))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(reversed([getattr(item, f.name) for f in dataclasses.fields(item)]))
    return found, True
