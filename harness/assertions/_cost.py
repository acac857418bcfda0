"""Expectations on what a run costs in prompt cache: ``cache_breaks`` and ``no_cache_break``.

They judge a ``harness.cost.CostReport`` (``analyse(...)`` of the requests a run sent;
a trace alone does not hold the requests): ``assert report == no_cache_break(after=1)``
or ``assert expect(report, cache_breaks(2, cause="tools-changed"))``. A failure shows
the last run's timeline with each cache break marked, then the report's table.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from typing import Any

from harness import _check_sink as _sink
from harness._errors import UsageError
from harness._validation import check_choice, is_int
from harness.assertions._labels import strategy_label
from harness.assertions._render import cut, render_table
from harness.assertions._verdict import Expectation, Failure, Verdict
from harness.cost import BreakCause, CacheBreak, CostReport
from harness.loop import Trace
from harness.scenarios import timeline_rows

__all__ = ["CostVerdict", "cache_breaks", "cache_marks", "no_cache_break"]

_COMPACT_FIRST = 240
_COMPACT_ROW = 100
"""Widths that keep a compact explanation within pytest's 640 characters."""


def cache_marks(report: CostReport, trace: Trace | None = None) -> dict[int, str]:
    """The cache breaks of ``trace``'s run (the report's last run by default), by
    iteration: what ``render_table(cache=...)`` marks."""
    trace = trace if trace is not None else report.trace
    if trace is None or trace not in report.traces:
        return {}
    run = report.traces.index(trace) + 1
    return {
        r.iteration: r.cache_break.cause + (f" by {r.cache_break.by}" if r.cache_break.by else "")
        for r in report.requests
        if r.run == run and r.cache_break is not None and r.iteration is not None
    }


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class CostVerdict(Verdict):
    """A verdict on a cost report: explained with the timeline (breaks marked) and the
    report's per-request table."""

    report: CostReport = dataclasses.field(repr=False)

    def lines(self, *, window: int | None = None, compact: bool = False) -> list[str]:
        """What was expected and what the report says: the last run's timeline with the
        cache breaks marked, then (unless ``compact``) the per-request cost table."""
        if self.failure is None:
            return [f"{self.description}: holds"]
        first = f"{self.description}: {self.failure.problem}"
        timeline = (
            render_table(
                timeline_rows(self.trace),
                mark=self.failure.iteration,
                cache=cache_marks(self.report),
                window=1 if compact else window,
                width=_COMPACT_ROW if compact else None,
            )
            if self.trace.iterations
            else []
        )
        if compact:
            return [cut(first, _COMPACT_FIRST), *timeline]
        return [first, *timeline, *self.report.table()]


def _report(subject: Any) -> CostReport:
    if isinstance(subject, CostReport):
        return subject
    raise UsageError(
        "cache assertions judge a harness.cost.CostReport: analyse the requests the run "
        "sent (harness.cost.analyse(log, format=...) of a record_requests() block); got "
        f"{type(subject).__name__}"
    )


class CostExpectation(Expectation):
    """An expectation on a ``CostReport`` (not on a bare trace, which has no requests)."""

    @abstractmethod
    def judge(self, report: CostReport) -> Failure | None:
        """``None`` when ``report`` satisfies the expectation, else why not."""

    def evaluate(self, trace: Trace) -> Failure | None:
        _report(trace)  # a trace alone cannot be judged: raises the UsageError
        return None  # pragma: no cover - _report raised

    def check(self, subject: Any, *, record: bool = True) -> Verdict:
        report = _report(subject)
        failure = self.judge(report)
        trace = report.trace or Trace()
        verdict = CostVerdict(
            passed=failure is None,
            description=self.description,
            failure=failure,
            trace=trace,
            report=report,
        )
        if record:
            _sink.record_cost(report)
            if failure is not None:
                _sink.record_failure(verdict, report.trace)
        return verdict

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CostReport):
            return NotImplemented
        return self.check(other).passed

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, CostReport):
            return NotImplemented
        return not self.check(other).passed

    __hash__ = None


def _describe(b: CacheBreak) -> str:
    return f"#{b.request} {b.cause}" + (f" by {b.by}" if b.by else "")


def _shown(breaks: list[CacheBreak]) -> str:
    return ", ".join(_describe(b) for b in breaks) or "none"


def _cause(cause: str | None) -> str | None:
    if cause is not None:
        check_choice(cause, BreakCause, name="cause")
    return cause


def _iteration_of(report: CostReport, request: int) -> int | None:
    cost = report.requests[request - 1]
    return cost.iteration if report.traces and cost.run == len(report.traces) else None


class _CacheBreaks(CostExpectation):
    def __init__(
        self,
        requests: tuple[int, ...],
        count: int | None,
        cause: str | None,
        by: str | None,
    ) -> None:
        for number in requests:
            if not is_int(number, minimum=1):
                raise UsageError(f"cache_breaks() takes request numbers >= 1, got {number!r}")
        if count is not None and not is_int(count, minimum=0):
            raise UsageError(f"count must be a number >= 0, got {count!r}")
        if requests and count is not None and count != len(requests):
            raise UsageError("give the requests that break, or count=, not both")
        self.requests, self.count, self.cause, self.by = requests, count, _cause(cause), by

    @property
    def description(self) -> str:
        parts = []
        if self.requests:
            parts.append(f"at request(s) {', '.join(map(str, self.requests))}")
        if self.count is not None:
            parts.append(f"{self.count} in all")
        if self.cause:
            parts.append(f"caused by {self.cause}")
        if self.by:
            parts.append(f"by {self.by}")
        return "cache breaks " + (" ".join(parts) or "somewhere")

    def judge(self, report: CostReport) -> Failure | None:
        breaks = report.breaks
        got = tuple(b.request for b in breaks)
        if self.requests and got != self.requests:
            missing = [n for n in self.requests if n not in got]
            first = missing[0] if missing else next(n for n in got if n not in self.requests)
            return Failure(
                problem=f"expected breaks at {list(self.requests)}, got {_shown(breaks)}",
                iteration=_iteration_of(report, first) if first <= len(report.requests) else None,
            )
        if self.count is not None and len(breaks) != self.count:
            return Failure(problem=f"expected {self.count} cache break(s), got {_shown(breaks)}")
        if not self.requests and self.count is None and not breaks:
            return Failure(problem="expected a cache break, got none")
        for b in breaks:
            if (self.cause and b.cause != self.cause) or (self.by and b.by != self.by):
                return Failure(
                    problem=f"expected every break {self.description[13:]}, got {_describe(b)}",
                    iteration=_iteration_of(report, b.request),
                )
        return None


class _NoCacheBreak(CostExpectation):
    def __init__(self, after: int, cause: str | None) -> None:
        if not is_int(after, minimum=0):
            raise UsageError(f"after must be a request number >= 0, got {after!r}")
        self.after, self.cause = after, _cause(cause)

    @property
    def description(self) -> str:
        what = f"no {self.cause} cache break" if self.cause else "no cache break"
        return what + (f" after request {self.after}" if self.after else "")

    def judge(self, report: CostReport) -> Failure | None:
        for b in report.breaks:
            if b.request > self.after and (self.cause is None or b.cause == self.cause):
                return Failure(
                    problem=f"request {b.request} broke the cache: {_describe(b)} "
                    f"(first difference in {b.section}, {b.lost_tokens} tokens no longer cached)",
                    iteration=_iteration_of(report, b.request),
                )
        return None


def cache_breaks(
    *requests: int, count: int | None = None, cause: str | None = None, by: str | None = None
) -> CostExpectation:
    """The cache breaks are exactly at ``requests`` (1-based request numbers), or number
    ``count``; each has ``cause`` and was caused ``by`` (a strategy) when given. With
    nothing given: at least one break."""
    if isinstance(by, str):
        by = strategy_label(by, "cache_breaks(by=...)")
    return _CacheBreaks(tuple(requests), count, cause, by)


def no_cache_break(*, after: int = 0, cause: str | None = None) -> CostExpectation:
    """No request after request ``after`` (0: none at all) breaks the cache (with
    ``cause``, when given)."""
    return _NoCacheBreak(after, cause)
