"""Shared argument checks and name-list wording (private, layer 0).

One place for the checks every layer repeats, with one signature (the value first,
its name by keyword): a value that must be one of a ``Literal`` alias's strings or of
a list of names (``check_choice``, ``check_choices``), an int that must not be a bool
(``check_int``, ``is_int``), a duration in seconds that every wait can take
(``seconds_problem``) and an output folder that must not be an existing file
(``check_output``). How a message names things is ``harness._names``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeGuard, TypeVar, get_args

from harness._errors import UsageError
from harness._names import did_you_mean, format_names
from harness._secrets import scrub_message

__all__ = [
    "assert_never",
    "check_choice",
    "check_choices",
    "check_int",
    "check_output",
    "choice_problem",
    "choices_of",
    "int_problem",
    "is_int",
    "is_number",
    "seconds_problem",
]

T = TypeVar("T")


def assert_never(value: NoReturn) -> NoReturn:
    """The end of an exhaustive ``match``: mypy fails if a case of the union is missing
    (``typing.assert_never`` is 3.11+; this works on 3.10)."""
    raise AssertionError(f"unhandled case: {value!r}")


def choices_of(alias: Any) -> tuple[str, ...]:
    """The strings of a ``Literal[...]`` alias (or of a union of them), in order; a list or
    tuple of strings is returned as it is."""
    if isinstance(alias, (list, tuple)) and all(isinstance(a, str) for a in alias):
        return tuple(alias)
    found: list[str] = []
    for arg in get_args(alias):
        if isinstance(arg, str):
            found.append(arg)
        else:  # a nested Literal or a union member
            found.extend(choices_of(arg))
    if not found:
        raise TypeError(f"{alias!r} is not a Literal of strings")
    return tuple(found)


def choice_problem(value: object, alias: Any, *, name: str) -> str | None:
    """Why ``value`` is not one of the strings of ``alias`` (a ``Literal`` alias or a list
    of strings), or ``None``.

    For checks that collect every problem before raising once.
    """
    choices = choices_of(alias)
    if isinstance(value, str) and value in choices:
        return None
    hint = did_you_mean(value, choices) if isinstance(value, str) else ""
    # a secret pasted into the wrong setting never reaches the message
    return scrub_message(f"{name} must be one of {format_names(choices)}, got {value!r}{hint}")


def check_choice(
    value: object,
    alias: Any,
    *,
    name: str,
    error: type[Exception] = UsageError,
) -> str:
    """``value`` if it is one of the strings of ``alias`` (a ``Literal`` alias or a list of
    strings), else ``error``."""
    problem = choice_problem(value, alias, name=name)
    if problem is not None:
        raise error(problem)
    assert isinstance(value, str)
    return value


def check_choices(
    values: object,
    alias: Any,
    *,
    name: str,
    error: type[Exception] = UsageError,
) -> tuple[str, ...]:
    """``values`` as a tuple when every item is one of the strings of ``alias``, else
    ``error`` naming the unknown items and the valid choices."""
    choices = choices_of(alias)
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise error(
            scrub_message(
                f"{name} must be a list of names from {format_names(choices)}, got {values!r}"
            )
        )
    items = tuple(values)
    unknown = [v for v in items if not (isinstance(v, str) and v in choices)]
    if unknown:
        shown = format_names(str(v) if isinstance(v, str) else repr(v) for v in unknown)
        raise error(
            scrub_message(f"{name}: unknown {shown}; valid choices are {format_names(choices)}")
        )
    return items  # every item is one of the strings


def is_int(value: object, *, minimum: int | None = None) -> TypeGuard[int]:
    """True for an ``int`` that is not a ``bool`` (and at least ``minimum`` when given)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return minimum is None or value >= minimum


def is_number(value: object) -> bool:
    """True for an ``int`` or ``float`` that is not a ``bool``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def int_problem(
    value: object, *, name: str, minimum: int | None = None, maximum: int | None = None
) -> str | None:
    """Why ``value`` is not an ``int`` (not a ``bool``) in ``[minimum, maximum]``, or ``None``
    (either bound may be left out)."""
    if is_int(value, minimum=minimum) and (maximum is None or value <= maximum):
        return None
    if minimum is not None and maximum is not None:
        wanted = f"an int between {minimum} and {maximum}"
    elif maximum is not None:
        wanted = f"an int <= {maximum}"
    else:
        wanted = "an int" if minimum is None else f"an int >= {minimum}"
    return f"{name} must be {wanted}, got {value!r}"


MAX_SECONDS = 7 * 24 * 3600
"""The longest duration a timeout or deadline may be (a week): ``inf``, ``1e300`` and
``nan`` would make a wait endless or overflow the clock (``OverflowError``)."""


def seconds_problem(
    value: object, *, name: str, positive: bool = False, optional: bool = False
) -> str | None:
    """Why ``value`` is not a duration in seconds (finite, ``> 0`` when ``positive``
    else ``>= 0``, at most ``MAX_SECONDS``; ``None`` allowed when ``optional``), or ``None``."""
    if value is None and optional:
        return None
    finite = isinstance(value, (int, float)) and is_number(value) and math.isfinite(value)
    if finite and (value > 0 if positive else value >= 0) and value <= MAX_SECONDS:  # type: ignore[operator]
        return None
    bound = "> 0" if positive else ">= 0"
    alternative = " or None" if optional else ""
    return (
        f"{name} must be a number of seconds {bound}{alternative}, finite and at most "
        f"{MAX_SECONDS} (a week), got {value!r}"
    )


def check_int(
    value: object,
    *,
    name: str,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[Exception] = UsageError,
) -> int:
    """``value`` if it is an ``int`` (not a ``bool``) in ``[minimum, maximum]``, else
    ``error``."""
    problem = int_problem(value, name=name, minimum=minimum, maximum=maximum)
    if problem is not None:
        raise error(problem)
    assert isinstance(value, int)
    return value


def check_output(output: str | Path | None, *, name: str = "--output") -> str | None:
    """The output folder as text (``None`` stays ``None``); a path naming an existing
    file is a ``UsageError`` (counterexamples go in a folder, created when needed)."""
    if output is None:
        return None
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"{name} {str(folder)!r} is an existing file; counterexamples go in a folder: "
            "name a folder (it is created when needed)"
        )
    for parent in folder.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(
                    f"{name} {str(folder)!r} is under {str(parent)!r}, which is a file: the "
                    "folder cannot be created there; name a folder elsewhere"
                )
            break
    return str(folder)
