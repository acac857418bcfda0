"""``@llm_tool``: mark functions and methods as tools; turn marked things into ``Tool``s."""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar, overload

from harness._errors import ToolDefinitionError
from harness.tools._names import validate_name
from harness.tools._schema import ArgsSchema, build_args_schema, describe_callable
from harness.tools._tool import Tool

__all__ = [
    "ToolSpec",
    "as_tool",
    "as_tools",
    "llm_tool",
    "register_tool_converter",
    "tool_methods",
    "tool_spec",
    "tools_of",
]

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "__llm_tool__"
_BUILT = "__llm_tool_built__"
"""Where a decorated function keeps its ``Tool`` (with the spec it was built from)."""


@dataclasses.dataclass(frozen=True)
class ToolSpec:
    """What ``@llm_tool`` records on a function: checked once, at decoration time."""

    name: str
    """Model-visible name (defaults to the function name)."""
    description: str
    """Description (defaults to the docstring)."""
    args_schema: ArgsSchema
    """Argument model and schema from the signature."""
    category: str | None = None
    """Optional category, used by unfolding facades."""
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Extra metadata copied onto the tool."""


@overload
def llm_tool(func: F, /) -> F: ...
@overload
def llm_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Callable[[F], F]: ...
def llm_tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> F | Callable[[F], F]:
    """Mark a function or method as a tool; the function itself is returned unchanged.

    The signature is checked now: every problem is reported together, naming the
    function. Parameter descriptions come from ``Annotated[T, "text"]`` or the
    docstring; parameters annotated ``CallContext`` or a context type (``Emitter``,
    ``ChatContext``, ``@context_type`` classes, ``Injected[T]``) are hidden from the model.
    """

    def mark(target: F) -> F:
        if not callable(target):
            raise ToolDefinitionError(repr(target), ["@llm_tool needs a function or method"])
        args_schema = build_args_schema(target)
        tool_name = name or target.__name__
        try:
            validate_name(tool_name)
        except Exception as exc:
            raise ToolDefinitionError(describe_callable(target), [str(exc)]) from None
        spec = ToolSpec(
            name=tool_name,
            description=description if description is not None else args_schema.description,
            args_schema=args_schema,
            category=category,
            metadata=dict(metadata or {}),
        )
        setattr(target, _MARK, spec)
        return target

    if func is not None:
        return mark(func)
    return mark


def tool_spec(obj: Any) -> ToolSpec | None:
    """The ``ToolSpec`` recorded by ``@llm_tool`` on a function or bound method, if any."""
    target = getattr(obj, "__func__", obj)
    spec = getattr(target, _MARK, None)
    return spec if isinstance(spec, ToolSpec) else None


_CONVERTERS: list[Callable[[Any], Tool | None]] = []


def register_tool_converter(converter: Callable[[Any], Tool | None]) -> None:
    """Let ``as_tool`` (and so ``Toolset``, ``run(tools=...)``) accept more kinds of objects.

    ``converter(obj)`` returns a ``Tool`` for objects it knows, else ``None``; it is asked
    before the function rules. Registering the same converter twice has no effect.
    """
    if converter not in _CONVERTERS:
        _CONVERTERS.append(converter)


def as_tool(
    obj: Tool | Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    presets: Mapping[str, Any] | None = None,
    model_may_override: bool | Collection[str] | None = None,
    context: Iterable[object] = (),
) -> Tool:
    """Turn a ``Tool``, an ``@llm_tool`` function/bound method or a plain function into a ``Tool``.

    ``presets`` binds hidden parameters (e.g. an API key) that the model never sees;
    ``model_may_override`` (``True`` or some preset names) lets the model's value win
    for them instead; ``context`` registers typed context objects on the tool (see
    docs/context-injection.md).
    """
    context = tuple(context)
    if isinstance(obj, Tool):
        tool = obj
        if name:
            tool = tool.with_name(name)
        if description is not None:
            tool = tool.with_description(description)
        if presets or model_may_override is not None:
            tool = tool.with_presets(model_may_override=model_may_override, **(presets or {}))
        if context:
            tool = tool.with_context(*context)
        return tool
    for convert in _CONVERTERS:  # e.g. a @facade_class object becomes one facade tool
        made = convert(obj)
        if made is not None:
            return as_tool(
                made,
                name=name,
                description=description,
                presets=presets,
                model_may_override=model_may_override,
                context=context,
            )
    if not callable(obj):
        raise ToolDefinitionError(repr(obj), ["expected a Tool, a function or a bound method"])
    spec = tool_spec(obj)
    reusable = (
        spec is not None
        and isinstance(obj, types.FunctionType)
        and not name
        and description is None
        and not presets
        and not model_may_override
        and not context
    )
    if reusable:  # a decorated function: its Tool is built once and reused (Tools are immutable)
        built = obj.__dict__.get(_BUILT)
        if built is not None and built[0] is spec:
            reused: Tool = built[1]
            return reused
    metadata: dict[str, Any] = {}
    if spec is not None:
        metadata = dict(spec.metadata)
        if spec.category is not None:
            metadata["category"] = spec.category
    tool = Tool.from_function(
        obj,
        name=name or (spec.name if spec else None),
        description=description
        if description is not None
        else (spec.description if spec else None),
        presets=presets,
        args_schema=spec.args_schema if spec else None,
        metadata=metadata,
        model_may_override=model_may_override or False,
        context=context,
    )
    if reusable:
        obj.__dict__[_BUILT] = (spec, tool)
    return tool


def as_tools(items: Iterable[Tool | Callable[..., Any]]) -> list[Tool]:
    """``as_tool`` for each item."""
    return [as_tool(item) for item in items]


def tool_methods(cls: type) -> list[tuple[str, ToolSpec]]:
    """The ``@llm_tool`` methods of a class, in definition order (base classes first)."""
    found: dict[str, ToolSpec] = {}
    for klass in reversed(inspect.getmro(cls)):
        for attr, value in vars(klass).items():
            spec = tool_spec(value)
            if spec is not None:
                found[attr] = spec
            elif attr in found:
                del found[attr]
    return list(found.items())


def tools_of(instance: Any, *, flat: bool = False) -> list[Tool]:
    """The tools ``instance`` offers, as ``as_tool`` would take it.

    An object that is one tool (a ``@facade_class`` instance, or any kind a
    ``register_tool_converter`` converter knows) gives that one tool, seed 003's
    ``Tool.fromInstance``; any other object a tool for each of its ``@llm_tool`` methods,
    bound to it. ``flat=True`` gives the methods in every case (what a facade offers once
    unfolded).
    """
    if not flat:
        for convert in _CONVERTERS:  # e.g. a @facade_class object is its one facade tool
            made = convert(instance)
            if made is not None:
                return [made]
    return [as_tool(getattr(instance, attr)) for attr, _ in tool_methods(type(instance))]
