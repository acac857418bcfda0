"""JSON Schema and argument validators generated from a function signature (with pydantic)."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model

from harness._errors import ToolDefinitionError
from harness.tools._context import CallContext

__all__ = ["ArgsSchema", "build_args_schema", "clean_schema", "describe_callable"]

_NONE_TYPES = (type(None),)


@dataclasses.dataclass(frozen=True)
class ArgsSchema:
    """What a signature turns into: the model-visible schema and how to build the call."""

    model: type[BaseModel]
    """Pydantic model validating and converting the model's arguments."""
    json_schema: dict[str, Any]
    """The ``parameters`` schema offered to the model."""
    context_params: tuple[str, ...]
    """Parameters that receive the ``CallContext`` (hidden from the model)."""
    preset_params: tuple[str, ...]
    """Parameters bound at registration (hidden from the model)."""
    description: str
    """Description from the docstring (summary and body, without the parameter list)."""


def describe_callable(func: Callable[..., Any]) -> str:
    """A readable name for error messages: ``module.qualname``."""
    module = getattr(func, "__module__", None) or "?"
    qualname = getattr(func, "__qualname__", None) or repr(func)
    return f"{module}.{qualname}"


def _is_context(annotation: Any) -> bool:
    if annotation is CallContext:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a not in _NONE_TYPES]
        return len(args) == 1 and args[0] is CallContext
    return False


def _is_optional(annotation: Any) -> bool:
    base = annotation
    if get_origin(base) is Annotated:
        base = get_args(base)[0]
    return get_origin(base) in (Union, types.UnionType) and any(
        a in _NONE_TYPES for a in get_args(base)
    )


def _annotated_description(annotation: Any) -> str | None:
    if get_origin(annotation) is not Annotated:
        return None
    for meta in get_args(annotation)[1:]:
        if isinstance(meta, str):
            return meta
    return None


def clean_schema(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keys (keeping properties *named* title)."""
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {name: clean_schema(sub) for name, sub in value.items()}
            else:
                out[key] = clean_schema(value)
        return out
    if isinstance(schema, list):
        return [clean_schema(item) for item in schema]
    return schema


def _parse_docstring(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(func) or ""
    if not doc:
        return "", {}
    parsed = docstring_parser.parse(doc)
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    params = {p.arg_name: p.description for p in parsed.params if p.description}
    return "\n\n".join(parts), params


def build_args_schema(
    func: Callable[..., Any],
    *,
    presets: Collection[str] = (),
    model_name: str | None = None,
) -> ArgsSchema:
    """Inspect ``func`` and build its argument model and schema.

    Every problem (missing annotation, ``*args``, unknown preset, unsupported
    type, ...) is collected and raised together as one ``ToolDefinitionError``.
    """
    target = describe_callable(func)
    problems: list[str] = []
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(target, [f"cannot read its signature: {exc}"]) from None
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # unresolvable forward references, bad annotations
        raise ToolDefinitionError(
            target, [f"cannot resolve its type annotations: {type(exc).__name__}: {exc}"]
        ) from None

    description, doc_params = _parse_docstring(func)
    fields: dict[str, Any] = {}
    context_params: list[str] = []
    preset_params: list[str] = []
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls") and params[0].name not in hints:
        params = params[1:]
    for param in params:
        name = param.name
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            problems.append(f"parameter *{name}: variadic arguments cannot be described to a model")
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            problems.append(
                f"parameter **{name}: variadic arguments cannot be described to a model"
            )
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            problems.append(f"parameter {name}: positional-only parameters are not supported")
            continue
        if name in presets:
            preset_params.append(name)
            continue
        annotation = hints.get(name, inspect.Parameter.empty)
        if annotation is inspect.Parameter.empty:
            problems.append(
                f"parameter {name!r} has no type annotation; add one (e.g. {name}: str)"
            )
            continue
        if _is_context(annotation):
            context_params.append(name)
            continue
        if name.startswith("_"):
            problems.append(
                f"parameter {name!r}: names starting with '_' cannot be model arguments"
            )
            continue
        field_kwargs: dict[str, Any] = {}
        desc = _annotated_description(annotation) or doc_params.get(name)
        if desc:
            field_kwargs["description"] = desc
        if param.default is not inspect.Parameter.empty:
            field_kwargs["default"] = param.default
        elif _is_optional(annotation):
            field_kwargs["default"] = None
        fields[name] = (annotation, Field(**field_kwargs))
    unknown_presets = sorted(set(presets) - {p.name for p in params})
    if unknown_presets:
        problems.append(
            f"presets {unknown_presets} are not parameters of the function; "
            f"parameters are {[p.name for p in params]}"
        )
    if problems:
        raise ToolDefinitionError(target, problems)

    safe_name = model_name or f"{getattr(func, '__name__', 'tool')}_arguments"
    try:
        model = create_model(
            safe_name,
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
        json_schema = clean_schema(model.model_json_schema())
    except (PydanticUserError, TypeError, ValueError, AttributeError) as exc:
        problems.extend(_field_problems(fields) or [f"schema generation failed: {exc}"])
        raise ToolDefinitionError(target, problems) from None
    json_schema.setdefault("properties", {})
    return ArgsSchema(
        model=model,
        json_schema=json_schema,
        context_params=tuple(context_params),
        preset_params=tuple(preset_params),
        description=description,
    )


def _field_problems(fields: Mapping[str, Any]) -> list[str]:
    """Find which fields pydantic cannot describe, one problem per field."""
    problems = []
    for name, (annotation, info) in fields.items():
        try:
            create_model("probe", **{name: (annotation, info)}).model_json_schema()  # type: ignore[call-overload]
        except Exception as exc:
            shown = getattr(annotation, "__name__", repr(annotation))
            problems.append(
                f"parameter {name!r}: type {shown} cannot be described as JSON Schema "
                f"({type(exc).__name__}); use str/int/float/bool, enums, lists, dicts, "
                "pydantic models or dataclasses"
            )
    return problems
