"""Argument checks for the generators and campaigns: one wording, raised before anything runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError

__all__ = ["check_choice", "check_choices", "check_int", "check_output"]


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


def check_output(output: str | Path | None) -> str | None:
    """The output folder as text; a path naming an existing file is a ``UsageError``."""
    if output is None:
        return None
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"--output {str(folder)!r} is an existing file; counterexamples go in a folder: "
            "name a folder (it is created when needed)"
        )
    return str(folder)
