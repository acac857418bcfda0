"""Expectations over a trace, and the verdict of checking one.

An ``Expectation`` is built without a trace and compared to one with ``==``
(``assert result.trace == injected("customer_*")``); the pytest plugin then renders
a failing comparison as a timeline table. ``expect(subject, ...)`` returns a
``Verdict``, truthy when every expectation holds, for ``assert expect(...)``.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Any

from harness import _check_sink as _sink
from harness._errors import UsageError
from harness._validation import is_int
from harness.assertions._render import cut, render_table
from harness.loop import Trace
from harness.scenarios import timeline_rows

__all__ = [
    "Expectation",
    "Failure",
    "Verdict",
    "after_last",
    "as_trace",
    "expect",
    "for_assert",
    "in_turn",
]

_COMPACT_FIRST = 240
_COMPACT_ROW = 100
"""Widths that keep a compact explanation within pytest's 640 characters."""


def as_trace(subject: Any) -> Trace:
    """The trace of ``subject``: a ``Trace``, or anything with a ``trace`` (a run result,
    a scenario outcome, an error raised out of a run)."""
    if isinstance(subject, Trace):
        return subject
    trace = getattr(subject, "trace", None)
    if isinstance(trace, Trace):
        return trace
    raise UsageError(
        f"expected a harness Trace or an object with a .trace (RunResult, ScenarioOutcome, "
        f"an error raised out of a run), got {subject!r}"
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Failure:
    """Why an expectation does not hold."""

    problem: str
    """What was expected and what happened, in one line."""
    iteration: int | None = None
    """The 1-based iteration to mark in the table (``None``: the whole run)."""
    expected: str | None = None
    """The expected step, shown beside the marked row."""


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Verdict:
    """The result of checking expectations on a trace; truthy when they all hold."""

    passed: bool
    description: str
    """What was checked."""
    failure: Failure | None = None
    trace: Trace = dataclasses.field(repr=False)
    raise_when_false: bool = dataclasses.field(default=False, repr=False)
    """Raise ``AssertionError`` (the explanation) instead of returning ``False`` from
    ``bool()``: set under the pytest plugin by ``expect``/``expect_timeline``, so that
    ``assert expect(...)`` fails with the table and nothing else from the run."""

    def __bool__(self) -> bool:
        if not self.passed and self.raise_when_false:
            __tracebackhide__ = True
            raise AssertionError(self.explain(window=10))
        return self.passed

    @property
    def problem(self) -> str | None:
        """The failure in one line, or ``None``."""
        return self.failure.problem if self.failure else None

    def explain(self, *, window: int | None = None) -> str:
        """A multi-line explanation: what was expected, what happened, the timeline
        (only ``window`` rows either side of the divergence when given)."""
        return "\n".join(self.lines(window=window))

    def lines(self, *, window: int | None = None, compact: bool = False) -> list[str]:
        """``explain``'s lines. ``compact`` fits pytest's default truncation (8 lines,
        640 characters): a shorter first line, one row either side of the divergence,
        rows cut at 100 characters, so the marked row is never cut off."""
        if self.failure is None:
            return [f"{self.description}: holds"]
        first = f"{self.description}: {self.failure.problem}"
        table = render_table(
            timeline_rows(self.trace),
            mark=self.failure.iteration,
            expected=self.failure.expected,
            window=1 if compact else window,
            width=_COMPACT_ROW if compact else None,
        )
        if not compact:
            return [first, *table]
        hint = ["(-vv shows the whole table)"] if "  ..." in table else []
        return [cut(first, _COMPACT_FIRST), *table, *hint]

    def __repr__(self) -> str:
        if self.failure is None:
            return f"<Verdict passed: {self.description}>"
        return f"<Verdict failed: {self.description}: {self.failure.problem}>"


class Expectation(ABC):
    """Something a trace must satisfy; compare with ``==`` or pass to ``expect``."""

    @property
    @abstractmethod
    def description(self) -> str:
        """What is expected, e.g. ``injected 'customer_*' at iteration 1``."""

    @abstractmethod
    def evaluate(self, trace: Trace) -> Failure | None:
        """``None`` when ``trace`` satisfies the expectation, else why not."""

    def check(self, subject: Any, *, record: bool = True) -> Verdict:
        """Judge ``subject`` (a trace or anything with ``.trace``)."""
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        trace = as_trace(subject)
        failure = self.evaluate(trace)
        verdict = Verdict(
            passed=failure is None, description=self.description, failure=failure, trace=trace
        )
        if record:
            _sink.record_trace(trace)
            if failure is not None:
                _sink.record_failure(verdict, trace)
        return verdict

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True  # pytest shows the test's line, not this frame
        try:
            trace = as_trace(other)
        except UsageError:
            return NotImplemented
        return self.check(trace).passed

    def __ne__(self, other: object) -> bool:
        try:
            trace = as_trace(other)
        except UsageError:
            return NotImplemented
        _sink.record_trace(trace)
        return not self.check(trace, record=False).passed

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<expectation: {self.description}>"


def for_assert(verdict: Verdict) -> Verdict:
    """``verdict`` made to raise its explanation from ``bool()`` when a test runs under
    the pytest plugin (elsewhere it stays a plain truthy-or-falsy value)."""
    if verdict.passed or _sink.current() is None:
        return verdict
    return dataclasses.replace(verdict, raise_when_false=True)


def expect(subject: Any, *expectations: Expectation) -> Verdict:
    """Check every expectation on ``subject``; the verdict of the first that fails, else
    a passing verdict. ``assert expect(result, offered(at=2, includes=["customer_*"]))``."""
    if not expectations:
        raise UsageError("expect(subject, ...) needs at least one expectation")
    for item in expectations:
        if not isinstance(item, Expectation):
            raise UsageError(
                f"expect() takes expectations (offered(...), injected(...), ...), got {item!r}"
            )
    for item in expectations:
        verdict = item.check(subject)  # each reads what it judges (a trace, a cost report)
        if not verdict.passed:
            return for_assert(verdict)
    description = "; ".join(e.description for e in expectations)
    return Verdict(passed=True, description=description, trace=verdict.trace)


def after_last(trace: Trace) -> int:
    """The index a request after ``trace``'s last would have: the row a failure marks
    when what it expected never came (in one turn of a session, that turn's end)."""
    return trace.iterations[-1].index + 1 if trace.iterations else 1


class _InTurn(Expectation):
    """An expectation judged on one user turn of a session's trace (``turn=``)."""

    def __init__(self, inner: Expectation, turn: int) -> None:
        if not is_int(turn) or turn < 1:
            raise UsageError(f"turn= takes a 1-based user turn number, got {turn!r}")
        self.inner, self.turn = inner, turn

    @property
    def description(self) -> str:
        return f"{self.inner.description} in turn {self.turn}"

    def evaluate(self, trace: Trace) -> Failure | None:
        try:
            part = trace.turn(self.turn)
        except UsageError as exc:
            return Failure(problem=str(exc), iteration=after_last(trace))
        return self.inner.evaluate(part)


def in_turn(expectation: Expectation, turn: int | None) -> Expectation:
    """``expectation`` judged on user turn ``turn`` of a session's trace only (``at=``
    then counts that turn's requests); ``None``: on the whole trace."""
    return expectation if turn is None else _InTurn(expectation, turn)
