"""The tool model: what the model sees (name, description, schema) and how a call runs."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from jsonschema.protocols import Validator
from pydantic import BaseModel, ValidationError

from harness._errors import ToolDefinitionError
from harness._frozen import maker
from harness._secrets import (
    hidden_values,
    is_secret_value,
    register_secret,
    scrub_text,
    secrets_known,
)
from harness.tools._context import CallContext
from harness.tools._definitions import SearchMode, ToolDefinition
from harness.tools._inject import EMPTY, ContextObjects, resolve_injected
from harness.tools._jsonschema import argument_errors, schema_problems, tool_validator
from harness.tools._names import validate_name
from harness.tools._objects import Emitter
from harness.tools._patterns import PatternTimeout
from harness.tools._private_loop import run_awaitable
from harness.tools._result import ToolResult, serialize_for_model, unserializable_result
from harness.tools._schema import UNSET, ArgsSchema, build_args_schema, clean_schema

__all__ = ["PreparedCall", "Tool"]


class _Hidden:
    """Holds preset values so no repr, log line or trace can show them; the secret ones
    (``harness._secrets.is_secret_value``) are registered, so no text shows them either."""

    __slots__ = ("secret", "values")

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)
        self.secret = {n: v for n, v in self.values.items() if is_secret_value(n, v)}
        """The presets that are secrets: hidden from results too."""
        for name, value in self.secret.items():
            register_secret(value, source=f"preset {name!r}")

    def __repr__(self) -> str:
        return f"<{len(self.values)} preset value(s) hidden>"


@dataclasses.dataclass(slots=True)
class PreparedCall:
    """A validated call, ready to execute; ``run_sync``/``run_async`` do the I/O.

    The arguments hold preset values and the call context, so they stay out of the repr.
    """

    tool: Tool
    function: Callable[..., Any] = dataclasses.field(repr=False)
    args: tuple[Any, ...] = dataclasses.field(repr=False)
    kwargs: dict[str, Any] = dataclasses.field(repr=False)
    is_async: bool
    context: CallContext | None = dataclasses.field(default=None, repr=False)
    """The call context the call was prepared with (used to scrub error messages)."""

    def error_result(self, exc: BaseException) -> ToolResult:
        """``Tool.error_result`` for this call, scrubbing its context and preset values."""
        return self.tool.error_result(exc, context=self.context)

    def run_sync(self) -> Any:
        """Call the tool in this thread (an async tool runs on a private event loop, which
        keeps running the tasks it leaves behind: ``harness.tools._private_loop``)."""
        value = self.function(*self.args, **self.kwargs)
        if type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
            return run_awaitable(value)
        return value

    async def run_async(self) -> Any:
        """Call the tool on the running event loop (a sync tool runs inline)."""
        value = self.function(*self.args, **self.kwargs)
        if inspect.isawaitable(value):
            value = await value
        return value


def _overridable(policy: bool | Collection[str], presets: Mapping[str, Any]) -> frozenset[str]:
    """The preset names the model may send (``model_may_override``)."""
    if policy is True:
        return frozenset(presets)
    if policy is False:
        return frozenset()
    if isinstance(policy, str) or not isinstance(policy, Collection):
        raise ToolDefinitionError(
            "model_may_override",
            [f"expected True, False or a collection of preset names, got {policy!r}"],
        )
    return frozenset(policy)


_NEVER_AWAITABLE = frozenset({str, int, float, bool, type(None), dict, list, tuple, bytes})
"""Exact types ``run_sync`` need not test with ``inspect.isawaitable``."""


# built without type.__call__ on every call: what it buys, measured, in harness/loop/_fast.py
_PreparedCall = maker(PreparedCall)
_ToolResult = maker(ToolResult)


_SHOWN_INPUT = 200


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_INPUT else text[: _SHOWN_INPUT - 3] + "..."


def _format_pydantic_error(tool: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ()))
        if err.get("type") == "json_invalid":
            return (
                f"Tool {tool!r}: the arguments are not valid JSON ({err.get('msg')}). "
                "Send a JSON object matching the tool's parameters."
            )
        if err.get("type") in ("model_type", "model_attributes_type", "dict_type") and not loc:
            got = _shown(err.get("input"))
            return f"Tool {tool!r}: the arguments must be a JSON object, got {got}."
        if err.get("type") == "extra_forbidden":
            problems.append(f"argument {loc!r} is not a parameter of this tool")
        elif err.get("type") == "missing":
            problems.append(f"argument {loc!r} is required but missing")
        else:
            problems.append(f"argument {loc!r}: {err.get('msg')} (got {_shown(err.get('input'))})")
    return f"Tool {tool!r}: invalid arguments: " + "; ".join(problems) + "."


@dataclasses.dataclass(frozen=True, eq=False)
class Tool:
    """A tool offered to the model.

    Build one with ``@llm_tool`` / ``as_tool`` (from a function or method),
    ``Tool.from_schema`` (name, description, JSON schema, handler) or
    ``Tool.from_model`` (pydantic input model -> output). Tools are immutable;
    ``with_*`` methods return changed copies.
    """

    name: str
    """The model-visible name (``^[a-zA-Z0-9_-]{1,64}$``)."""
    description: str
    """What the tool does, for the model."""
    parameters: Mapping[str, Any]
    """JSON Schema of the arguments."""
    handler: Callable[..., Any] = dataclasses.field(repr=False)
    """The Python callable behind the tool."""
    notes: tuple[str, ...] = ()
    """Usage notes appended to the description."""
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Free-form data for strategies (e.g. ``category``); never sent to the model."""
    args_schema: ArgsSchema | None = dataclasses.field(default=None, repr=False)
    """Signature-derived argument model (function and method tools)."""
    input_model: type[BaseModel] | None = dataclasses.field(default=None, repr=False)
    """Pydantic input model (typed tools): the handler receives one instance."""
    presets: _Hidden = dataclasses.field(default_factory=lambda: _Hidden({}))
    """Hidden values bound at registration; never in schema, messages or repr."""
    takes_context: bool = dataclasses.field(default=False, repr=False)
    """Schema tools: whether the handler takes the ``CallContext`` as second argument."""
    validator: Validator | None = dataclasses.field(default=None, repr=False)
    """Schema tools: the validator for ``parameters`` (``harness.tools._jsonschema``:
    it never retrieves a reference and never hangs on a pattern)."""
    context_objects: ContextObjects = dataclasses.field(default=EMPTY, repr=False)
    """Typed context objects registered on the tool (the lowest-priority source)."""
    defer_loading: bool = False
    """Offered deferred: declared, but the model finds it with a tool search (or a result
    reveals it) before calling it (``ToolDefinition.defer_loading``)."""
    namespace: str | None = None
    """The namespace the tool is offered in (OpenAI Responses)."""
    search: SearchMode | None = None
    """Set on a tool-search tool (``ToolDefinition.search``); ``regex``, ``bm25`` and
    ``hosted`` searches are run by the provider, never by the loop."""

    def __post_init__(self) -> None:
        validate_name(self.name)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        presets: Mapping[str, Any] | None = None,
        args_schema: ArgsSchema | None = None,
        metadata: Mapping[str, Any] | None = None,
        model_may_override: bool | Collection[str] = False,
        context: Iterable[object] = (),
    ) -> Tool:
        """A tool from a function or bound method; the schema comes from its signature.

        ``presets`` bind hidden parameters; ``model_may_override`` (``True`` or some preset
        names) lets the model send its own value for them instead; ``context`` registers
        typed context objects on the tool (see docs/context-injection.md).
        """
        presets = dict(presets or {})
        overridable = _overridable(model_may_override, presets)
        if args_schema is None or presets or overridable:
            args_schema = build_args_schema(func, presets=presets, overridable=overridable)
        tool_name: str = name or str(getattr(func, "__name__", ""))
        if not tool_name:
            raise ToolDefinitionError(
                repr(func), ["it has no __name__ to use as the tool name; pass name=..."]
            )
        return cls(
            name=tool_name,
            description=description if description is not None else args_schema.description,
            parameters=args_schema.json_schema,
            handler=func,
            metadata=dict(metadata or {}),
            args_schema=args_schema,
            presets=_Hidden(presets),
        )._with_context_objects(context, replace=True)

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> Tool:
        """A programmatic tool: arguments are checked with jsonschema against ``parameters``.

        ``handler(arguments)`` or ``handler(arguments, context)`` receives the argument dict.
        """
        if not isinstance(parameters, Mapping):
            raise ToolDefinitionError(
                f"tool {name!r}", [f"parameters must be a JSON Schema dict, got {parameters!r}"]
            )
        if not callable(handler):
            raise ToolDefinitionError(
                f"tool {name!r}", [f"handler must be callable, got {handler!r}"]
            )
        problems = schema_problems(parameters)
        if problems:
            raise ToolDefinitionError(f"tool {name!r}", problems)
        if parameters.get("type") != "object":
            raise ToolDefinitionError(
                f"tool {name!r}",
                [f"parameters must be an object schema (type: object), got {dict(parameters)!r}"],
            )
        positional = [
            p
            for p in inspect.signature(handler).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        return cls(
            name=name,
            description=description,
            parameters=dict(parameters),
            handler=handler,
            metadata=dict(metadata or {}),
            takes_context=len(positional) >= 2,
            validator=tool_validator(parameters),
        )

    @classmethod
    def from_model(
        cls,
        name: str,
        description: str,
        input_model: type[BaseModel],
        handler: Callable[..., Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> Tool:
        """A typed tool: ``handler(input: InputModel) -> OutputModel | str``."""
        if not (isinstance(input_model, type) and issubclass(input_model, BaseModel)):
            raise ToolDefinitionError(
                f"tool {name!r}",
                [f"input_model must be a pydantic model class, got {input_model!r}"],
            )
        return cls(
            name=name,
            description=description,
            parameters=clean_schema(input_model.model_json_schema()),
            handler=handler,
            metadata=dict(metadata or {}),
            input_model=input_model,
        )

    # -- copies -------------------------------------------------------------------------

    def with_description(self, description: str) -> Tool:
        """A copy with another description."""
        return self._copy(description=description)

    def with_note(self, note: str) -> Tool:
        """A copy with a usage note appended to the description."""
        return self._copy(notes=(*self.notes, note))

    def deferred(self, defer_loading: bool = True, *, namespace: str | None = None) -> Tool:
        """A copy offered deferred (found by a tool search before it is called), in
        ``namespace`` if given."""
        return dataclasses.replace(
            self, defer_loading=defer_loading, namespace=namespace or self.namespace
        )

    def with_name(self, name: str) -> Tool:
        """A copy offered under another name."""
        return self._copy(name=name)

    def with_metadata(self, **metadata: Any) -> Tool:
        """A copy with extra metadata."""
        return self._copy(metadata={**self.metadata, **metadata})

    def with_presets(
        self, *, model_may_override: bool | Collection[str] | None = None, **presets: Any
    ) -> Tool:
        """A copy with hidden parameters bound (removed from the schema).

        By default the model cannot send a preset parameter (it is not in the schema, so a
        call that sends one is rejected as invalid arguments). ``model_may_override=True``
        (or some preset names) keeps those parameters in the schema, optional and without
        their value, and the model's value wins when it sends one; ``None`` keeps the
        tool's current policy.
        """
        if self.args_schema is None:
            raise ToolDefinitionError(
                f"tool {self.name!r}", ["presets need a function tool (built from a signature)"]
            )
        merged = {**self.presets.values, **presets}
        if model_may_override is None:
            overridable: frozenset[str] = frozenset(self.args_schema.overridable)
        else:
            overridable = _overridable(model_may_override, merged)
        args_schema = build_args_schema(self.handler, presets=merged, overridable=overridable)
        return self._copy(
            parameters=args_schema.json_schema, args_schema=args_schema, presets=_Hidden(merged)
        )

    def with_context(self, *objects: object) -> Tool:
        """A copy with typed context objects registered on the tool (lowest priority:
        the call, the run and the toolset win). Each object must fit one of the tool's
        injected parameters; an object of a class already registered replaces it."""
        return self._with_context_objects(objects, replace=False)

    def _with_context_objects(self, objects: Iterable[object], *, replace: bool) -> Tool:
        items = list(objects)
        if not items and replace:
            return self
        where = f"tool {self.name!r}"
        params = self.args_schema.injected_params if self.args_schema is not None else ()
        if self.args_schema is None:
            raise ToolDefinitionError(
                where, ["context objects need a function tool (built from a signature)"]
            )
        try:
            registry = (
                ContextObjects(items, source="tool")
                if replace
                else self.context_objects.merged(items)
            )
        except Exception as exc:
            raise ToolDefinitionError(where, [str(exc)]) from None
        problems = []
        for obj in items:
            if not any(isinstance(obj, p.cls) for p in params):
                takes = ", ".join(f"{p.name}: {p.cls.__qualname__}" for p in params) or "none"
                problems.append(
                    f"no parameter takes a {type(obj).__qualname__} (its injected parameters: "
                    f"{takes}); annotate one with that class or Injected[...]"
                )
        if problems:
            raise ToolDefinitionError(where, problems)
        return self._copy(context_objects=registry)

    def _copy(self, **changes: Any) -> Tool:
        return dataclasses.replace(self, **changes)

    # -- the model's view ---------------------------------------------------------------

    @property
    def full_description(self) -> str:
        """Description plus notes, as the model reads it."""
        if not self.notes:
            return self.description
        return "\n\n".join((self.description, *self.notes))

    def definition(self) -> ToolDefinition:
        """This tool as the model is offered it (each wire format encodes it its way)."""
        if not (self.defer_loading or self.namespace or self.search):
            return ToolDefinition(
                name=self.name, description=self.full_description, parameters=self.parameters
            )
        return ToolDefinition(
            name=self.name,
            description=self.full_description,
            parameters=self.parameters,
            defer_loading=self.defer_loading,
            namespace=self.namespace,
            search=self.search,
        )

    @functools.cached_property
    def offered_definition(self) -> ToolDefinition:
        """``definition()``, built once (tools are immutable): what toolsets offer.

        Shared by every toolset offering this tool: read it, never change it.
        """
        return self.definition()

    @functools.cached_property
    def is_async(self) -> bool:
        """True when the handler is a coroutine function (computed once)."""
        return inspect.iscoroutinefunction(self.handler)

    # -- calling ------------------------------------------------------------------------

    def prepare(self, arguments: str, context: CallContext) -> PreparedCall | ToolResult:
        """Validate and convert the model's raw ``arguments``.

        Returns the call to run, or an error ``ToolResult`` naming the tool, the
        argument and the problem. JSON Schema patterns that need backtracking get the
        loop's ``tool_timeout`` for this call's checks (5 seconds without one).
        """
        raw = arguments if arguments and not arguments.isspace() else "{}"
        if self.args_schema is not None:
            return self._prepare_function(raw, context, self.args_schema)
        if self.input_model is not None:
            try:
                model_input = self.input_model.model_validate_json(raw, strict=True)
            except ValidationError as exc:
                return ToolResult.error(
                    _format_pydantic_error(self.name, exc), kind="invalid_arguments"
                )
            return PreparedCall(self, self.handler, (model_input,), {}, self.is_async, context)
        return self._prepare_schema(raw, context)

    def _prepare_function(
        self, raw: str, context: CallContext, args_schema: ArgsSchema
    ) -> PreparedCall | ToolResult:
        try:
            parsed = args_schema.parse(raw)
        except ValidationError as exc:
            return ToolResult.error(
                _format_pydantic_error(self.name, exc), kind="invalid_arguments"
            )
        kwargs = args_schema.call_kwargs(parsed)
        for name in args_schema.context_params:
            kwargs[name] = context
        if args_schema.injected_params:
            problem = self._inject(kwargs, context, args_schema)
            if problem is not None:
                return ToolResult.error(problem, kind="missing_context")
        if self.presets.values:
            if args_schema.overridable:  # the model's value wins; an omitted one is UNSET
                for name, value in self.presets.values.items():
                    if kwargs.get(name, UNSET) is UNSET:
                        kwargs[name] = value
            else:
                kwargs.update(self.presets.values)
        return _PreparedCall(self, self.handler, (), kwargs, self.is_async, context)

    def _inject(
        self, kwargs: dict[str, Any], context: CallContext, args_schema: ArgsSchema
    ) -> str | None:
        """Fill the injected parameters from the context's sources (call > run > toolset >
        tool); return a model-safe problem when one cannot be filled."""
        layers = context.context_layers(self.context_objects)
        for param in args_schema.injected_params:
            if param.cls is Emitter:
                kwargs[param.name] = context.emitter
                continue
            found, obj, problem = resolve_injected(self.name, param, layers)
            if problem is not None:
                return problem
            if found:
                kwargs[param.name] = obj
        return None

    def _prepare_schema(self, raw: str, context: CallContext) -> PreparedCall | ToolResult:
        try:
            parsed = json.loads(raw)
            errors = argument_errors(self._validator(), parsed)
        except json.JSONDecodeError as exc:
            return ToolResult.error(
                f"Tool {self.name!r}: the arguments are not valid JSON ({exc.msg} at "
                f"position {exc.pos}). Send a JSON object matching the tool's parameters.",
                kind="invalid_arguments",
            )
        except RecursionError:
            return ToolResult.error(
                f"Tool {self.name!r}: the arguments are nested too deeply to check. "
                "Send a flatter JSON object matching the tool's parameters.",
                kind="invalid_arguments",
            )
        except PatternTimeout as exc:
            return ToolResult.error(
                f"Tool {self.name!r}: the arguments could not be checked in time: {exc}. "
                "The call was not run; send shorter or simpler values.",
                kind="timeout",
                exception=exc,
            )
        if errors:
            parts = []
            for err in errors:
                where = ".".join(str(p) for p in err.absolute_path)
                parts.append(f"argument {where!r}: {err.message}" if where else err.message)
            return ToolResult.error(
                f"Tool {self.name!r}: invalid arguments: " + "; ".join(parts) + ".",
                kind="invalid_arguments",
            )
        args: tuple[Any, ...] = (parsed, context) if self.takes_context else (parsed,)
        return PreparedCall(self, self.handler, args, {}, self.is_async, context)

    def _validator(self) -> Validator:
        """``validator``, or one built now for a ``Tool`` made without ``from_schema``."""
        if self.validator is not None:
            return self.validator
        problems = schema_problems(self.parameters)
        if problems:
            raise ToolDefinitionError(f"tool {self.name!r}", problems)
        return tool_validator(self.parameters)

    def to_result(self, value: Any) -> ToolResult:
        """Wrap a return value: ``ToolResult`` passes through; others are serialised.

        A value that cannot be serialised (a reference cycle, undecodable bytes) gives an
        error result of kind ``unserializable`` that still keeps ``value``.
        """
        if isinstance(value, ToolResult):
            return value
        try:
            content = serialize_for_model(value)
        except Exception as exc:
            return unserializable_result(self.name, value, exc)
        return _ToolResult(content=content, value=value)

    def error_result(
        self, exc: BaseException, *, context: Mapping[str, Any] | None = None
    ) -> ToolResult:
        """The result for a tool that raised: a message for the model, the exception kept.

        Preset values and ``context`` values (by their ``str``, 4 characters or longer)
        and every registered secret (``harness._secrets``) that the exception message
        contains, as is or upper-cased, URL-quoted, JSON- or ``repr``-escaped or inside a
        bytes ``repr``, are replaced by ``[hidden]``.
        """
        message = f"Tool {self.name!r} failed: {type(exc).__name__}: {exc}"
        return ToolResult.error(self._scrub(message, context), kind="exception", exception=exc)

    def hidden_from_model(self, result: ToolResult) -> ToolResult:
        """``result`` as the model may read it: the secrets hidden from its ``content``
        (the tool's secret presets, 4 characters or more, and every registered secret:
        ``harness._secrets.is_secret_value``). ``value``, the Python object strategies
        get, is kept as it is.

        What is not a secret is shown: a preset such as ``region="eu-west-3"``, a
        context object's chat id, a plain call-context value (a tool may echo them on
        purpose); wrap a value in ``Secret`` to hide it. ``error_result`` hides every
        preset and context value: an exception's message is not written for the model.
        """
        content = result.content
        if not content or not (self.presets.secret or secrets_known()):
            return result  # nothing to hide (most calls): no scan of the content
        scrubbed = scrub_text(content, hidden_values(self.presets.secret.values()))
        return result if scrubbed == content else dataclasses.replace(result, content=scrubbed)

    def _scrub(self, text: str, context: Mapping[str, Any] | None) -> str:
        values = [*self.presets.values.values(), *(context.values() if context else ())]
        return scrub_text(text, hidden_values(values))
