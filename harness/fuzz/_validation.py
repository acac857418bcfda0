"""Argument checks for the generators and campaigns: one wording, raised before anything runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from harness._errors import UsageError

__all__ = ["check_choice", "check_choices", "check_int"]


def check_int(name: str, value: Any, *, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (bools refused), else ``UsageError``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise UsageError(f"{name} must be an int, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise UsageError(f"{name} must be {bound}, got {value!r}")
    return value


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a ``UsageError`` listing them."""
    if value not in choices:
        raise UsageError(f"{name} must be one of {list(choices)}, got {value!r}")
    return str(value)


def check_choices(name: str, values: Iterable[Any], choices: Sequence[str]) -> tuple[str, ...]:
    """Every item of ``values`` is one of ``choices``; returned as a tuple."""
    if isinstance(values, str):
        raise UsageError(f"{name} must be a list of names from {list(choices)}, got {values!r}")
    items = tuple(values)
    bad = [v for v in items if v not in choices]
    if bad:
        raise UsageError(f"{name}: unknown {bad}; valid choices are {list(choices)}")
    return tuple(str(v) for v in items)
