"""A faster ``__init__`` for the frozen, slotted dataclasses the loop builds every turn.

``dataclasses`` writes each field of a frozen instance with ``object.__setattr__(self,
name, value)``, which looks the field up on the type again for every write. The loop
builds several such records per iteration (events, trace records, requests, results),
so ``fast_init`` replaces the generated ``__init__`` with one that calls each field's
slot descriptor directly: same signature, defaults, default factories and
``__post_init__``; the instance stays frozen (assignment still raises
``FrozenInstanceError``), and ``dataclasses.replace``, ``==``, ``hash`` and ``repr`` are
unchanged. Only keyword-only, slotted, frozen dataclasses without ``InitVar`` or
``init=False`` fields qualify (anything else raises ``TypeError`` at import time).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["fast_init"]

_T = TypeVar("_T")


class _Factory:
    """The default of a parameter whose field has a ``default_factory``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def fast_init(cls: type[_T]) -> type[_T]:
    """Give the frozen, slotted, keyword-only dataclass ``cls`` a faster ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not (params.frozen and params.init and "__slots__" in cls.__dict__):
        raise TypeError(f"fast_init needs a frozen, slotted dataclass, got {cls.__qualname__}")
    original = cls.__dict__["__init__"]
    original_signature = inspect.signature(original)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if [f.name for f in fields] != list(original_signature.parameters)[1:]:
        raise TypeError(
            f"fast_init needs every field in __init__ and nothing else (no init=False or "
            f"InitVar fields); {cls.__qualname__} does not qualify"
        )
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    signature: list[str] = []
    body: list[str] = []
    for index, field in enumerate(fields):
        if not field.init or not field.kw_only:
            raise TypeError(
                f"fast_init needs keyword-only init fields; {cls.__qualname__}.{field.name} "
                "is not one"
            )
        setter = f"_set{index}"
        namespace[setter] = getattr(cls, field.name).__set__
        value = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = field.default
            signature.append(f"{field.name}=_default{index}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{index}"] = field.default_factory
            signature.append(f"{field.name}=_FACTORY")
            value = f"_factory{index}() if {field.name} is _FACTORY else {field.name}"
        else:
            signature.append(field.name)
        body.append(f"    {setter}(self, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    parameters = f"self, *, {', '.join(signature)}" if signature else "self"
    source = f"def __init__({parameters}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = original.__doc__
    init.__annotations__ = dict(original.__annotations__)
    init.__signature__ = original_signature
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls
