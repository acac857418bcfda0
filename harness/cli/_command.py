"""A typer command whose options are the fields of a dataclass.

A command with many options declares them once, as a frozen dataclass whose fields are
``Annotated[type, typer.Option(...)]`` with their defaults (flags, help and environment
variable beside the type), and is written as a function of one instance of it. typer
reads a command's parameters from its signature, so ``dataclass_command`` gives the
command the dataclass's fields as keyword parameters, in order, and builds the instance
from what typer parsed.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["dataclass_command"]

Options = TypeVar("Options")


def dataclass_command(
    options: type[Options], run: Callable[[Options], None]
) -> Callable[..., None]:
    """A command for typer: its parameters are the fields of the dataclass ``options``,
    its help is ``run``'s docstring, and it calls ``run(options(**parsed))``."""
    if not dataclasses.is_dataclass(options):
        raise TypeError(f"{options!r} is not a dataclass")
    hints = typing.get_type_hints(options, include_extras=True)
    missing = [f.name for f in dataclasses.fields(options) if f.default is dataclasses.MISSING]
    if missing:
        raise TypeError(
            f"{options.__name__}: every field needs a default (the option's): {missing}"
        )
    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(options)
    ]

    def command(**parsed: Any) -> None:
        run(options(**parsed))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__doc__ = run.__doc__
    command.__name__ = command.__qualname__ = run.__name__.lstrip("_")
    command.__module__ = run.__module__
    return command
