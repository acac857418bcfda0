"""Context objects injected into tool parameters by their type annotation.

A parameter is *injected* (hidden from the model, filled by the loop) when its
annotation, with ``Optional`` removed, is

- a class marked ``@context_type`` (or a subclass of one): ``chat: ChatContext``;
- ``Injected[T]`` for any class ``T`` (for types you do not own: ``Injected[httpx.Client]``);
- ``CallContext`` (the key/value call context, handled by ``harness.tools._schema``).

Objects come from four sources, searched in this order (the first source with a
match wins): the call (``call_context_objects=`` hook, plus the loop's per-call
``Emitter``), the run (``context_objects=``), the toolset (``Toolset(context=...)``)
and the tool (``tool.with_context(...)``). Within one source an object whose type *is*
the annotation wins; otherwise the single instance of a subclass; several subclass
instances are ambiguous. See docs/context-injection.md.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from harness._errors import UsageError
from harness._secrets import is_secret_value, register_secret

__all__ = [
    "CONTEXT_SOURCES",
    "ContextObjects",
    "Injected",
    "InjectedParam",
    "context_type",
    "injected_type",
    "is_context_type",
    "resolve_injected",
]

_T = TypeVar("_T")
_MARK_ATTR = "__harness_context_type__"


class _InjectMark:
    """The ``Annotated`` marker behind ``Injected[T]``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INJECTED"


INJECT = _InjectMark()

Injected = Annotated[_T, INJECT]
"""``Injected[T]``: the parameter takes a registered ``T`` object; it is never in the schema.

Type checkers read ``Injected[T]`` as ``T``.
"""

CONTEXT_SOURCES = ("call", "run", "toolset", "tool")
"""The sources of context objects, highest priority first."""


def context_type(cls: type[_T]) -> type[_T]:
    """Class decorator: parameters annotated with ``cls`` (or a subclass) are injected."""
    if not isinstance(cls, type):
        raise UsageError(f"@context_type decorates a class, got {cls!r}")
    setattr(cls, _MARK_ATTR, True)
    return cls


def is_context_type(cls: Any) -> bool:
    """True for classes marked ``@context_type`` and their subclasses."""
    return isinstance(cls, type) and bool(getattr(cls, _MARK_ATTR, False))


def injected_type(annotation: Any) -> tuple[type | None, str | None]:
    """``(class, None)`` when ``annotation`` declares an injected parameter; ``(None, None)``
    when it is an ordinary (model-visible) one; ``(None, problem)`` when it is a broken
    ``Injected[...]``. ``Optional[...]`` around either form is allowed."""
    base = annotation
    if get_origin(base) in (Union, types.UnionType):
        args = [a for a in get_args(base) if a is not type(None)]
        if len(args) != 1:
            return None, None
        base = args[0]
    if get_origin(base) is Annotated:
        inner, *meta = get_args(base)
        if any(m is INJECT for m in meta):
            if not isinstance(inner, type):
                return None, (
                    f"Injected[{inner!r}] needs a class (objects are matched with isinstance); "
                    "use Injected[SomeClass]"
                )
            return inner, None
        base = inner
    if is_context_type(base):
        return base, None
    return None, None


@dataclasses.dataclass(frozen=True, slots=True)
class InjectedParam:
    """A parameter filled with a context object."""

    name: str
    """The parameter's name."""
    cls: type
    """The class the object must be an instance of."""
    has_default: bool
    """When no source has a match, the function's default is used instead of failing."""


_LOOP_MADE = ("CallContext", "Emitter")


def _secret_texts(obj: Any) -> list[str]:
    """The texts of ``obj`` that are secrets: what ``__harness_secrets__()`` returns if it
    has one, else its str attributes that ``is_secret_value`` calls secret (a ``Secret``,
    a credential name such as ``api_key``, a key's shape); a string object by its shape."""
    custom = getattr(obj, "__harness_secrets__", None)
    if callable(custom):
        return [str(t) for t in custom() if t]
    if isinstance(obj, (str, bytes)):
        text = obj.decode("utf-8", "replace") if isinstance(obj, bytes) else obj
        return [text] if is_secret_value(None, obj if isinstance(obj, str) else text) else []
    names: list[str] = []
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj)]
    elif hasattr(obj, "__dict__"):
        names = list(vars(obj))
    texts = []
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, str) and value and is_secret_value(name, value):
            texts.append(value)
    return texts


class ContextObjects:
    """An immutable set of context objects from one source, looked up by type.

    Built from any iterable; refuses ``None``, classes (register an instance), objects
    the loop makes itself (``CallContext``, ``Emitter``) and two objects of the same
    class. Their secret texts (``_secret_texts``) are registered (``harness._secrets``)
    and the repr names only their classes.
    """

    __slots__ = ("_objects", "source")

    def __init__(self, objects: Iterable[object] = (), *, source: str = "run") -> None:
        if isinstance(objects, (str, bytes)) or not isinstance(objects, Iterable):
            raise UsageError(
                f"context objects on the {source} must be a list of objects, got {objects!r}; "
                "write e.g. context_objects=[my_client]"
            )
        items = tuple(objects)
        problems = []
        seen: dict[type, int] = {}
        for index, obj in enumerate(items):
            kind = type(obj)
            if obj is None:
                problems.append(f"item {index} is None")
            elif isinstance(obj, type):
                problems.append(
                    f"item {index} is the class {obj.__qualname__}, not an instance; "
                    f"register an object, e.g. {obj.__qualname__}(...)"
                )
            elif kind.__name__ in _LOOP_MADE and kind.__module__.startswith("harness."):
                problems.append(
                    f"item {index} is a {kind.__name__}: the loop makes one for each call; "
                    "do not register it"
                )
            elif kind in seen:
                problems.append(
                    f"items {seen[kind]} and {index} are both {kind.__qualname__}: a parameter "
                    "annotated with it would be ambiguous; register one per class (subclass "
                    "it to tell them apart)"
                )
            else:
                seen[kind] = index
        if problems:
            raise UsageError(f"invalid context objects on the {source}: " + "; ".join(problems))
        for obj in items:
            for text in _secret_texts(obj):
                register_secret(text, source=f"a context object on the {source}", warn=False)
        self._objects = items
        self.source = source
        """Where the objects are registered (one of ``CONTEXT_SOURCES``)."""

    @property
    def objects(self) -> tuple[object, ...]:
        """The objects, in registration order."""
        return self._objects

    def secret_texts(self) -> list[str]:
        """The texts of the objects that are hidden wherever the harness shows text."""
        return [text for obj in self._objects for text in _secret_texts(obj)]

    def merged(self, more: Iterable[object]) -> ContextObjects:
        """These objects plus ``more`` (an object of an already present class replaces it)."""
        extra = list(more)
        kinds = {type(o) for o in extra}
        kept = [o for o in self._objects if type(o) not in kinds]
        return ContextObjects([*kept, *extra], source=self.source)

    def matches(self, cls: type) -> list[object]:
        """The objects for a parameter of type ``cls``: the exact-class one if present,
        else every instance of a subclass."""
        found = []
        for obj in self._objects:
            if type(obj) is cls:
                return [obj]
            if isinstance(obj, cls):
                found.append(obj)
        return found

    def __bool__(self) -> bool:
        return bool(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self) -> Iterator[object]:
        return iter(self._objects)

    def __repr__(self) -> str:
        kinds = ", ".join(type(o).__qualname__ for o in self._objects)
        return f"<context objects on the {self.source}: [{kinds}] (values hidden)>"


EMPTY = ContextObjects((), source="tool")


def _type_name(cls: type) -> str:
    return cls.__qualname__


def resolve_injected(
    tool: str,
    param: InjectedParam,
    layers: Sequence[ContextObjects | None],
) -> tuple[bool, object, str | None]:
    """Find the object for ``param`` in ``layers`` (highest priority first).

    Returns ``(found, obj, problem)``: ``problem`` is a model-safe message (it names
    classes and sources, never values) when no source has one or a source has several.
    """
    for layer in layers:
        if not layer:
            continue
        found = layer.matches(param.cls)
        if len(found) == 1:
            return True, found[0], None
        if found:
            kinds = ", ".join(sorted(type(o).__qualname__ for o in found))
            return (
                False,
                None,
                f"Tool {tool!r} cannot run: parameter {param.name!r} takes a "
                f"{_type_name(param.cls)} and the {layer.source} has {len(found)} matching "
                f"context objects ({kinds}); register only one there, or annotate the "
                "parameter with the exact class it needs.",
            )
    if param.has_default:
        return False, None, None
    return (
        False,
        None,
        f"Tool {tool!r} cannot run: parameter {param.name!r} takes a "
        f"{_type_name(param.cls)} context object and none is registered on the call, the "
        "run, the toolset or the tool. The application must register one (e.g. "
        f"run(..., context_objects=[{_type_name(param.cls)}(...)])).",
    )
