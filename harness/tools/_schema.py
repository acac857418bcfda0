"""JSON Schema and argument validators generated from a function signature (with pydantic)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

import docstring_parser
from jsonschema.protocols import Validator
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, ValidationError, create_model

from harness._errors import ToolDefinitionError
from harness.tools._context import CallContext
from harness.tools._inject import InjectedParam, injected_type
from harness.tools._jsonschema import tool_validator

__all__ = [
    "UNSET",
    "ArgsSchema",
    "build_args_schema",
    "clean_schema",
    "describe_callable",
]

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
    fields: tuple[tuple[str, str], ...] = ()
    """``(model field, parameter)`` pairs; they differ only where a parameter name would
    clash with a pydantic attribute (``json``, ``schema``, ``model_*``): the field then
    carries the parameter name as its alias."""
    injected_params: tuple[InjectedParam, ...] = ()
    """Parameters filled with typed context objects (hidden from the model)."""
    overridable: tuple[str, ...] = ()
    """Preset parameters the model may send (``model_may_override``): in the schema, optional,
    with no default shown; an omitted one is ``UNSET`` in ``call_kwargs``."""

    @functools.cached_property
    def validator(self) -> Validator:
        """A jsonschema validator for ``json_schema`` (built on first use)."""
        return tool_validator(self.json_schema)

    def parse(self, raw: str) -> BaseModel:
        """Validate and convert the model's raw JSON arguments; raise ``ValidationError``.

        The fast path is pydantic in strict JSON mode. Where it refuses a value the JSON
        Schema allows (``3.0`` for an integer, a string with a lone surrogate escape), the
        JSON Schema decides: if jsonschema accepts the value, pydantic converts it in lax
        mode; otherwise the strict error is raised. So every value valid under
        ``json_schema`` is accepted.
        """
        try:  # the model's validator itself: model_validate_json without its wrapper
            parsed: BaseModel = self.model.__pydantic_validator__.validate_json(raw, strict=True)
            return parsed
        except ValidationError as strict_error:
            try:
                data = json.loads(raw, parse_constant=_reject_constant)
            except (ValueError, RecursionError):
                raise strict_error from None
            if not self.validator.is_valid(data):
                raise
            return self.model.model_validate(data, strict=False)

    def call_kwargs(self, parsed: BaseModel) -> dict[str, Any]:
        """The validated arguments as keyword arguments of the function."""
        values = parsed.__dict__
        if self._same_names:
            return dict(values)
        return {param: values[field] for field, param in self.fields}

    @functools.cached_property
    def _same_names(self) -> bool:
        """True when every field has its parameter's name: the kwargs are the values."""
        return all(field == param for field, param in self.fields)


class _Unset:
    """The value of an overridable preset parameter the model did not send."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

_OVERRIDE_NOTE = "Optional: when omitted, a value set by the application is used."


def _unset() -> Any:
    return UNSET


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _field_name(param: str, taken: Collection[str]) -> str:
    """A model field name for ``param`` that cannot clash with ``BaseModel`` attributes."""
    if not (hasattr(BaseModel, param) or param.startswith("model_")):
        return param
    candidate = f"{param}_"
    while candidate in taken or hasattr(BaseModel, candidate):
        candidate += "_"
    return candidate


def describe_callable(func: Callable[..., Any]) -> str:
    """A readable name for error messages: ``module.qualname``."""
    module = getattr(func, "__module__", None) or "?"
    qualname = getattr(func, "__qualname__", None) or repr(func)
    return f"{module}.{qualname}"


def _annotated_target(func: Callable[..., Any]) -> Any:
    """Where the annotations live: the wrapped function of a partial, ``__call__`` of an object."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.isroutine(func) or isinstance(func, type):
        return func
    return getattr(func, "__call__", func)  # noqa: B004 - the method, for its annotations


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


_LITERAL_KEYS = frozenset({"default", "const", "enum", "examples"})


def clean_schema(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keys.

    Properties *named* ``title`` and values inside ``default``/``const``/``enum``/
    ``examples`` (data, not schema) are kept.
    """
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in _LITERAL_KEYS:
                out[key] = value
            elif key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
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


_SCHEMAS: dict[Any, ArgsSchema] = {}
_SCHEMAS_MAX = 4096


def _definition_key(
    func: Callable[..., Any], presets: Collection[str], model_name: Any, overridable: Any = ()
) -> Any:
    """What ``func``'s schema depends on, or ``None`` when it cannot be keyed.

    Functions made by one ``def`` (closures a strategy creates for each instance,
    methods bound to each discovered object) share their code, so their schema is built
    once; the name, docstring, annotations and defaults are part of the key, as they
    may be set per function.
    """
    bound = inspect.ismethod(func)
    target = func.__func__ if bound else func  # type: ignore[attr-defined]
    code = getattr(target, "__code__", None)
    if code is None or not isinstance(target, types.FunctionType):
        return None
    annotations = inspect.get_annotations(target)
    try:
        key = (
            code,
            bound,
            target.__name__,
            target.__qualname__,
            target.__doc__,
            tuple(annotations.items()),
            target.__defaults__,
            tuple(sorted((target.__kwdefaults__ or {}).items())),
            tuple(sorted(presets)),
            model_name,
            tuple(sorted(overridable)),
        )
        hash(key)
    except TypeError:  # an unhashable default or annotation: build every time
        return None
    return key


def build_args_schema(
    func: Callable[..., Any],
    *,
    presets: Collection[str] = (),
    model_name: str | None = None,
    overridable: Collection[str] = (),
) -> ArgsSchema:
    """Inspect ``func`` and build its argument model and schema.

    Every problem (missing annotation, ``*args``, unknown preset, unsupported
    type, ...) is collected and raised together as one ``ToolDefinitionError``.
    Functions of one definition share the result (it depends only on the signature).
    ``overridable`` presets stay in the schema (optional, no default shown).
    """
    key = _definition_key(func, presets, model_name, overridable)
    if key is not None:
        cached = _SCHEMAS.get(key)
        if cached is not None:
            return cached
    built = _build_args_schema(
        func, presets=presets, model_name=model_name, overridable=overridable
    )
    if key is not None:
        if len(_SCHEMAS) >= _SCHEMAS_MAX:
            _SCHEMAS.clear()
        _SCHEMAS[key] = built
    return built


def _signature_and_hints(
    func: Callable[..., Any], target: str
) -> tuple[inspect.Signature, dict[str, Any]]:
    """``func``'s signature and resolved annotations (``ToolDefinitionError`` if unreadable)."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(target, [f"cannot read its signature: {exc}"]) from None
    try:
        hints = typing.get_type_hints(_annotated_target(func), include_extras=True)
    except Exception as exc:  # unresolvable forward references, bad annotations
        raise ToolDefinitionError(
            target, [f"cannot resolve its type annotations: {type(exc).__name__}: {exc}"]
        ) from None
    return signature, hints


def _kind_problem(param: inspect.Parameter) -> str | None:
    """Why a parameter of this kind cannot be a model argument (``None``: it can)."""
    name = param.name
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"parameter *{name}: variadic arguments cannot be described to a model"
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        return f"parameter **{name}: variadic arguments cannot be described to a model"
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        return f"parameter {name}: positional-only parameters are not supported"
    return None


@dataclasses.dataclass
class _Parameters:
    """Where each parameter of a signature goes, gathered one parameter at a time, with
    every problem found on the way (raised together afterwards)."""

    presets: Collection[str]
    overridable: Collection[str]
    doc_params: Mapping[str, str]
    names: frozenset[str]
    """Every parameter name (a model field must not take one of them)."""
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)
    field_params: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    context: list[str] = dataclasses.field(default_factory=list)
    injected: list[InjectedParam] = dataclasses.field(default_factory=list)
    preset: list[str] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)

    def add(self, param: inspect.Parameter, annotation: Any) -> None:
        """File ``param``: a preset, an injected object, the context, or a model field."""
        name = param.name
        problem = _kind_problem(param)
        if problem is not None:
            self.problems.append(problem)
            return
        if name in self.presets:
            self.preset.append(name)
            if name not in self.overridable:
                return
        elif annotation is not inspect.Parameter.empty and not _is_context(annotation):
            injected, problem = injected_type(annotation)
            if problem is not None:
                self.problems.append(f"parameter {name!r}: {problem}")
                return
            if injected is not None:
                has_default = param.default is not inspect.Parameter.empty
                self.injected.append(InjectedParam(name, injected, has_default))
                return
        if annotation is inspect.Parameter.empty:
            self.problems.append(
                f"parameter {name!r} has no type annotation; add one (e.g. {name}: str)"
            )
        elif _is_context(annotation):
            self.context.append(name)
        elif name.startswith("_"):
            self.problems.append(
                f"parameter {name!r}: names starting with '_' cannot be model arguments"
            )
        else:
            self._add_field(param, annotation)

    def _add_field(self, param: inspect.Parameter, annotation: Any) -> None:
        name = param.name
        field_kwargs: dict[str, Any] = {}
        desc = _annotated_description(annotation) or self.doc_params.get(name)
        if desc:
            field_kwargs["description"] = desc
        if name in self.presets:  # overridable: optional, and the preset (a secret) is not shown
            field_kwargs["default_factory"] = _unset
            field_kwargs["description"] = " ".join(filter(None, (desc, _OVERRIDE_NOTE)))
        elif param.default is not inspect.Parameter.empty:
            field_kwargs["default"] = param.default
        elif _is_optional(annotation):
            field_kwargs["default"] = None
        field = _field_name(name, {*self.fields, *self.names})
        if field != name:
            field_kwargs["alias"] = name
        self.fields[field] = (annotation, Field(**field_kwargs))
        self.field_params.append((field, name))

    def check_presets(self, params: list[inspect.Parameter]) -> None:
        """Presets and overrides must name parameters (and overrides presets)."""
        unknown_overrides = sorted(set(self.overridable) - set(self.presets))
        if unknown_overrides:
            self.problems.append(
                f"model_may_override names {unknown_overrides}, which are not presets; "
                f"presets are {sorted(self.presets)}"
            )
        unknown_presets = sorted(set(self.presets) - self.names)
        if unknown_presets:
            self.problems.append(
                f"presets {unknown_presets} are not parameters of the function; "
                f"parameters are {[p.name for p in params]}"
            )


def _build_args_schema(
    func: Callable[..., Any],
    *,
    presets: Collection[str],
    model_name: str | None,
    overridable: Collection[str] = (),
) -> ArgsSchema:
    target = describe_callable(func)
    signature, hints = _signature_and_hints(func, target)
    description, doc_params = _parse_docstring(func)
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls") and params[0].name not in hints:
        params = params[1:]
    found = _Parameters(
        presets=presets,
        overridable=overridable,
        doc_params=doc_params,
        names=frozenset(p.name for p in params),
    )
    for param in params:
        found.add(param, hints.get(param.name, inspect.Parameter.empty))
    found.check_presets(params)
    if found.problems:
        raise ToolDefinitionError(target, found.problems + _field_problems(found.fields))

    safe_name = model_name or f"{getattr(func, '__name__', 'tool')}_arguments"
    try:
        model = create_model(
            safe_name,
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **found.fields,
        )
        json_schema = clean_schema(model.model_json_schema())
    except (PydanticUserError, TypeError, ValueError, AttributeError) as exc:
        problems = _field_problems(found.fields) or [f"schema generation failed: {exc}"]
        raise ToolDefinitionError(target, problems) from None
    json_schema.setdefault("properties", {})
    return ArgsSchema(
        model=model,
        json_schema=json_schema,
        context_params=tuple(found.context),
        preset_params=tuple(found.preset),
        description=description,
        fields=tuple(found.field_params),
        injected_params=tuple(found.injected),
        overridable=tuple(name for name in found.preset if name in overridable),
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
                f"parameter {info.alias or name!r}: type {shown} cannot be described as "
                "JSON Schema "
                f"({type(exc).__name__}); use str/int/float/bool, enums, lists, dicts, "
                "pydantic models or dataclasses"
            )
    return problems
