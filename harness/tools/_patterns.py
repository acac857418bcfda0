"""Regular-expression search for JSON Schema ``pattern``s that cannot hang.

A tool's schema comes from whoever wrote the tool (an MCP server, a config file) and the
text from the model: Python's ``re`` backtracks, so ``^(a+)+$`` against ``"a" * 34 + "!"``
runs for minutes, holding the GIL. Patterns are searched instead by

- a linear-time engine (the Rust ``regex`` crate, through pydantic-core, which the
  harness depends on anyway): no input makes it backtrack;
- for the few patterns it cannot compile (look-around, back-references, ``\\Z``) and
  texts it cannot read (lone surrogates): the ``regex`` package with a time budget per
  validation (``time_budget``): the loop's ``tool_timeout`` (``validation_seconds``) or
  ``DEFAULT_BUDGET``. Past it, ``PatternTimeout`` is raised.

Both follow JSON Schema's rule that a pattern matches anywhere in the text (a search).
The Rust engine reads ``$`` as the end of the text (as JSON Schema's ECMA-262 does),
where ``re`` also accepts a final newline before it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import time
from contextlib import AbstractContextManager
from typing import Any

import regex
from pydantic_core import SchemaError, SchemaValidator, core_schema

__all__ = [
    "DEFAULT_BUDGET",
    "PatternTimeout",
    "budget_open",
    "pattern_search",
    "time_budget",
    "validation_seconds",
]

DEFAULT_BUDGET = 5.0
"""Seconds a validation may spend on look-around patterns when no ``tool_timeout`` is set."""

_BUDGET: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "harness_pattern_budget", default=None
)
"""``(deadline, seconds)`` of the enclosing ``time_budget`` block."""
_SURROGATE = re.compile("[\ud800-\udfff]")


class PatternTimeout(Exception):
    """Searching ``pattern`` did not finish within the time budget."""

    def __init__(self, pattern: str, budget: float) -> None:
        self.pattern = pattern
        self.budget = budget
        super().__init__(
            f"the pattern {_shown(pattern)} did not finish within the {budget:g}s budget "
            "(it backtracks on this text)"
        )


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")


@functools.lru_cache(maxsize=2048)
def _linear(pattern: str) -> SchemaValidator | None:
    """The Rust engine's matcher, or ``None`` when it cannot compile ``pattern``."""
    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None


@functools.lru_cache(maxsize=2048)
def _backtracking(pattern: str) -> Any:
    """The ``regex`` package's compiled ``pattern`` (``ValueError`` when it has none)."""
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(str(exc)) from None


_SECONDS: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "harness_pattern_seconds", default=None
)
"""The budget of each validation inside a ``validation_seconds`` block (the loop's
``tool_timeout``)."""


class time_budget:
    """Inside the block, searches that need backtracking share ``seconds`` in all
    (``None``: the enclosing ``validation_seconds``, else ``DEFAULT_BUDGET``)."""

    __slots__ = ("_budget", "_token")

    def __init__(self, seconds: float | None) -> None:
        if seconds is None:
            seconds = _SECONDS.get()
        self._budget = DEFAULT_BUDGET if seconds is None else float(seconds)
        self._token: contextvars.Token[tuple[float, float] | None] | None = None

    def __enter__(self) -> None:
        self._token = _BUDGET.set((time.monotonic() + self._budget, self._budget))

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _BUDGET.reset(self._token)


def validation_seconds(seconds: float | None) -> AbstractContextManager[None]:
    """Inside the block, each validation's ``time_budget`` is ``seconds`` (the loop opens
    one per model turn with ``tool_timeout``; each call's validation gets all of it).

    When ``seconds`` is already in force (no timeout anywhere, the common case, or an
    enclosing run's same one) the block sets nothing: a shared empty context.
    """
    if _SECONDS.get() == seconds:
        return _IN_FORCE
    return _ValidationSeconds(seconds)


_IN_FORCE: AbstractContextManager[None] = contextlib.nullcontext()


class _ValidationSeconds:
    """``validation_seconds`` that sets ``seconds`` for its block."""

    __slots__ = ("_seconds", "_token")

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self._token: contextvars.Token[float | None] | None = None

    def __enter__(self) -> None:
        self._token = _SECONDS.set(self._seconds)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _SECONDS.reset(self._token)


def budget_open() -> bool:
    """Whether a ``time_budget`` block is in force."""
    return _BUDGET.get() is not None


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; ``PatternTimeout`` past the budget."""
    linear = _linear(pattern)
    if linear is not None and (text.isascii() or not _SURROGATE.search(text)):
        return linear.isinstance_python(text)
    enclosing = _BUDGET.get()
    if enclosing is None:
        budget, remaining = DEFAULT_BUDGET, DEFAULT_BUDGET
    else:
        budget, remaining = enclosing[1], enclosing[0] - time.monotonic()
    try:
        if remaining <= 0:
            raise TimeoutError
        return _backtracking(pattern).search(text, timeout=remaining) is not None
    except TimeoutError:
        raise PatternTimeout(pattern, budget) from None
