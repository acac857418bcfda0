"""Declarative facades: a class decorator, and wrapping any object's ``@llm_tool`` methods."""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from harness._errors import FacadeError, UsageError
from harness.injection._facade import Facade
from harness.tools import Tool, register_tool_converter, tool_methods, tools_of

__all__ = ["FacadeClassSpec", "facade_class", "facade_of", "facade_spec"]

C = TypeVar("C", bound=type)
_MARK = "__facade_class__"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FacadeClassSpec:
    """What ``@facade_class`` records on a class."""

    name: str
    """The facade's tool name."""
    description: str
    """What the facade's tools are for."""
    notes: tuple[str, ...] = ()
    """Child usage notes, shown once in the ``<name>_context`` tool."""
    category_param: str = "category"
    """Name of the category parameter."""
    exclusive: bool = False
    """Hide every other tool once unfolded."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@overload
def facade_class(cls: C, /) -> C: ...
@overload
def facade_class(
    *,
    name: str | None = None,
    description: str | None = None,
    notes: Sequence[str] = (),
    category_param: str = "category",
    exclusive: bool = False,
) -> Callable[[C], C]: ...
def facade_class(
    cls: C | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    notes: Sequence[str] = (),
    category_param: str = "category",
    exclusive: bool = False,
) -> C | Callable[[C], C]:
    """Mark a class whose ``@llm_tool`` methods (``category=`` optional) form a facade.

    ``name`` defaults to the class name in snake case, ``description`` to the class
    docstring. Inner classes marked with ``@facade_class`` become nested facades.
    Build the tool with ``facade_of(TheClass)`` (or of an instance).
    """

    def mark(target: C) -> C:
        if not isinstance(target, type):
            raise UsageError(f"@facade_class decorates classes, got {target!r}")
        text = description if description is not None else inspect.getdoc(target)
        if not text:
            raise UsageError(
                f"@facade_class {target.__qualname__} needs a description: pass "
                "description='...' or give the class a docstring"
            )
        spec = FacadeClassSpec(
            name=name or _snake(target.__name__),
            description=text,
            notes=tuple(notes),
            category_param=category_param,
            exclusive=exclusive,
        )
        setattr(target, _MARK, spec)
        return target

    if cls is not None:
        return mark(cls)
    return mark


def facade_spec(obj_or_cls: Any) -> FacadeClassSpec | None:
    """The ``FacadeClassSpec`` of a decorated class or instance (not inherited)."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    spec = cls.__dict__.get(_MARK)
    return spec if isinstance(spec, FacadeClassSpec) else None


def _nested_classes(cls: type) -> list[type]:
    found: dict[str, type] = {}
    for klass in reversed(inspect.getmro(cls)):
        for attr, value in vars(klass).items():
            if isinstance(value, type) and facade_spec(value) is not None:
                found[attr] = value
    return list(found.values())


def _build(obj: Any, overrides: dict[str, Any], stack: list[type]) -> Facade:
    cls = obj if isinstance(obj, type) else type(obj)
    if cls in stack:
        path = " -> ".join(c.__qualname__ for c in [*stack, cls])
        raise FacadeError(f"cycle in nested facade classes: {path}; a facade cannot contain itself")
    spec = facade_spec(cls)
    fields: dict[str, Any] = dataclasses.asdict(spec) if spec is not None else {}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    if not fields.get("name") or not fields.get("description"):
        raise UsageError(
            f"facade_of({cls.__qualname__}): the class is not decorated with @facade_class, so "
            "pass name='...' and description='...'"
        )
    if isinstance(obj, type):
        try:
            instance = obj()
        except TypeError as exc:
            raise UsageError(
                f"facade_of({cls.__qualname__}) must create an instance with no arguments, "
                f"which failed ({exc}); pass an instance instead"
            ) from None
    else:
        instance = obj
    children: list[Tool | Facade] = list(tools_of(instance, flat=True)) if tool_methods(cls) else []
    children += [_build(inner, {}, [*stack, cls]) for inner in _nested_classes(cls)]
    if not children:
        raise UsageError(
            f"facade_of({cls.__qualname__}): no @llm_tool methods and no nested @facade_class "
            "classes; decorate at least one method with @llm_tool"
        )
    return Facade(
        fields["name"],
        fields["description"],
        children,
        notes=tuple(fields.get("notes", ())),
        category_param=fields.get("category_param", "category"),
        exclusive=bool(fields.get("exclusive", False)),
    )


def facade_of(
    obj: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    notes: Sequence[str] | None = None,
    category_param: str | None = None,
    exclusive: bool | None = None,
) -> Tool:
    """A facade tool over the ``@llm_tool`` methods of ``obj`` (a class or an instance).

    A ``@facade_class`` class (or instance) uses its decorator's settings; any other
    object needs ``name`` and ``description``. A class is instantiated with no
    arguments; its nested ``@facade_class`` classes become nested facades.
    """
    overrides = {
        "name": name,
        "description": description,
        "notes": notes,
        "category_param": category_param,
        "exclusive": exclusive,
    }
    return _build(obj, overrides, []).tool()


def _facade_tool(obj: Any) -> Tool | None:
    """``as_tool``'s converter: a ``Facade``, or a ``@facade_class`` class or instance,
    becomes its one facade tool (not a flat list of its methods)."""
    if isinstance(obj, Facade):
        return obj.tool()
    if not isinstance(obj, Tool) and facade_spec(obj) is not None:
        return facade_of(obj)
    return None


register_tool_converter(_facade_tool)
