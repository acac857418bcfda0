"""Cheaper construction of the slotted dataclasses the loop builds every turn.

Two costs dominate building a small record in CPython 3.11:

- a frozen dataclass's ``__init__`` writes each field with ``object.__setattr__(self,
  name, value)``, which looks the field up on the type again for every write;
- calling a class with keyword arguments packs them into a dict for ``type.__call__``
  and unpacks it again for ``__init__``.

``fast_init`` replaces a frozen dataclass's generated ``__init__`` with one that calls
each field's slot descriptor directly, and ``maker`` gives a constructor function that
also skips ``type.__call__`` (a plain function call takes keywords as they are). Both
have the class's signature, defaults, default factories and ``__post_init__``; the
instances are the same (frozen ones still raise ``FrozenInstanceError`` on assignment;
``dataclasses.replace``, ``==``, ``hash``, ``repr`` and pickling are unchanged). Only
slotted dataclasses whose ``__init__`` takes exactly their fields qualify (no
``init=False`` or ``InitVar`` fields, no custom ``__new__``); anything else raises
``TypeError`` at import time.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["fast_init", "maker"]

_T = TypeVar("_T")


class _Factory:
    """The default of a parameter whose field has a ``default_factory``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
_MAKERS: dict[type, Callable[..., Any]] = {}


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """The fields of a qualifying dataclass, or ``TypeError`` saying why it does not qualify."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.init or "__slots__" not in cls.__dict__:
        raise TypeError(f"a slotted dataclass with an __init__ is needed, got {cls.__qualname__}")
    if cls.__new__ is not object.__new__:  # type: ignore[comparison-overlap]
        raise TypeError(f"{cls.__qualname__} has its own __new__")
    fields = dataclasses.fields(cls)
    init_params = list(inspect.signature(cls.__dict__["__init__"]).parameters)[1:]
    if [f.name for f in fields] != init_params:
        raise TypeError(
            f"every field must be an __init__ parameter and nothing else (no init=False or "
            f"InitVar fields); {cls.__qualname__} does not qualify"
        )
    return fields


def _twin(cls: type) -> type | None:
    """A mutable class with ``cls``'s slot layout, or ``None`` when none can stand in.

    An instance is filled with plain attribute stores (the interpreter's fastest write),
    then becomes a ``cls`` instance by ``__class__`` assignment, which CPython allows
    only between classes of the same layout (checked here once).
    """
    if cls.__base__ is not object:
        return None  # a frozen base's __setattr__ would refuse the stores
    twin = type(
        f"_{cls.__name__}Builder",
        (object,),
        {"__slots__": cls.__dict__["__slots__"], "__setattr__": object.__setattr__},
    )
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:  # pragma: no cover - the layouts always match for slotted dataclasses
        return None
    return twin


def _generate(cls: type, name: str) -> Callable[..., Any]:
    """``__init__`` (``name="__init__"``) or a constructor function, from ``cls``'s fields."""
    fields = _fields(cls)
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY, "_new": object.__new__, "_cls": cls}
    frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    twin = _twin(cls) if name != "__init__" and frozen else None
    plain = twin is not None or not frozen  # plain attribute stores fill the instance
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, field in enumerate(fields):
        setter = f"_set{index}"
        namespace[setter] = getattr(cls, field.name).__set__
        value = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = field.default
            parameter = f"{field.name}=_default{index}"
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{index}"] = field.default_factory
            parameter = f"{field.name}=_FACTORY"
            value = f"_factory{index}() if {field.name} is _FACTORY else {field.name}"
        else:
            parameter = field.name
        (keyword if field.kw_only else positional).append(parameter)
        if plain:
            body.append(f"    self.{field.name} = {value}")
        else:
            body.append(f"    {setter}(self, {value})")
    if twin is not None:
        namespace["_twin"] = twin
        body.append("    self.__class__ = _cls")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    parameters = positional + (["*", *keyword] if keyword else [])
    if name == "__init__":
        head = f"def __init__({', '.join(['self', *parameters])}):"
    else:
        new = "_new(_twin)" if twin is not None else "_new(_cls)"
        head = f"def {name}({', '.join(parameters)}):\n    self = {new}"
        body.append("    return self")
    exec("\n".join([head, *body]), namespace)
    function: Callable[..., Any] = namespace[name]
    return function


def fast_init(cls: type[_T]) -> type[_T]:
    """Give the frozen, slotted dataclass ``cls`` a faster ``__init__`` (same signature)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"fast_init is for frozen dataclasses, got {cls.__qualname__}")
    original = cls.__dict__["__init__"]
    init = _generate(cls, "__init__")
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = original.__doc__
    init.__annotations__ = dict(original.__annotations__)
    init.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls


def maker(cls: type[_T]) -> type[_T]:
    """A function building ``cls`` instances without ``type.__call__`` (built once per class).

    It is typed as the class so the type checker checks calls against the fields; use
    it only to call it (it is not a class: no ``isinstance``, no subclassing).
    """
    function = _MAKERS.get(cls)
    if function is None:
        function = _generate(cls, "make")
        function.__qualname__ = f"maker({cls.__qualname__})"
        function.__module__ = cls.__module__
        _MAKERS[cls] = function
    return function  # type: ignore[return-value]
