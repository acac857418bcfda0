"""Expectations on provider-native tool states: what was deferred, discovered, allowed,
and how many tool searches a turn made (``IterationRecord.tools``, ``discovered``,
``searches``; see ``docs/native-tools.md``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness._errors import UsageError
from harness._validation import is_int
from harness.assertions._offered import _patterns, _resolve_iteration, _show, matching
from harness.assertions._verdict import Expectation, Failure
from harness.loop import IterationRecord, Trace

__all__ = ["allowed", "deferred", "discovered", "searched"]

Reader = Callable[[IterationRecord], Sequence[str]]


def _check_at(at: int | None, what: str) -> None:
    if at is not None and (not is_int(at) or at == 0):
        raise UsageError(
            f"{what}(at=...) takes a 1-based iteration (or -1 for the last), got {at!r}"
        )


class _Names(Expectation):
    """Each pattern matches a name ``read`` gives, at iteration ``at`` (or at any)."""

    def __init__(self, what: str, patterns: tuple[str, ...], at: int | None, read: Reader) -> None:
        _check_at(at, what)
        self.what, self.patterns, self.at, self.read = what, patterns, at, read

    @property
    def description(self) -> str:
        where = f" at iteration {self.at}" if self.at is not None else ""
        shown = list(self.patterns) if self.patterns else "some tool"
        return f"{self.what} {shown}{where}"

    def evaluate(self, trace: Trace) -> Failure | None:
        if self.at is not None:
            index = _resolve_iteration(trace, self.at)
            if index is None:
                return Failure(
                    problem=f"the run has {len(trace.iterations)} iterations, no iteration "
                    f"{self.at}",
                    iteration=len(trace.iterations) + 1,
                    expected=self.description,
                )
            records = [trace.iterations[index - 1]]
        else:
            records = list(trace.iterations)
        names = [n for record in records for n in self.read(record)]
        if not self.patterns:
            if names:
                return None
            return Failure(
                problem=f"no tool was {self.what}",
                iteration=_first(records),
                expected=self.description,
            )
        for pattern in self.patterns:
            if not matching(pattern, names):
                return Failure(
                    problem=f"{pattern!r} was not {self.what}; {self.what}: {_show(names, 6)}",
                    iteration=_first(records),
                    expected=self.description,
                )
        return None


def _first(records: Sequence[IterationRecord]) -> int:
    return records[0].index if len(records) == 1 else 1


def discovered(*patterns: str, at: int | None = None) -> Expectation:
    """A tool search revealed tools matching each pattern (no patterns: some tool), in the
    turn of iteration ``at`` (1-based, ``-1`` the last) or in any turn."""
    return _Names("discovered", _patterns(patterns, "discovered()"), at, lambda it: it.discovered)


def deferred(*patterns: str, at: int = 1) -> Expectation:
    """Tools matching each pattern were deferred (declared, not revealed yet) on request
    ``at`` (default: the first)."""
    return _Names("deferred", _patterns(patterns, "deferred()"), at, lambda it: it.deferred)


def allowed(*patterns: str, at: int) -> Expectation:
    """Request ``at``'s tool choice allowed only a subset holding tools matching each
    pattern (no patterns: some subset)."""
    return _Names("allowed", _patterns(patterns, "allowed()"), at, lambda it: it.allowed or ())


class _Searched(Expectation):
    def __init__(self, times: int | None, at: int | None) -> None:
        _check_at(at, "searched")
        if times is not None and (not is_int(times) or times < 0):
            raise UsageError(f"searched(times=...) takes a count >= 0, got {times!r}")
        self.times, self.at = times, at

    @property
    def description(self) -> str:
        count = f"{self.times} time(s)" if self.times is not None else "at least once"
        where = f" at iteration {self.at}" if self.at is not None else ""
        return f"searched {count}{where}"

    def evaluate(self, trace: Trace) -> Failure | None:
        if self.at is not None:
            index = _resolve_iteration(trace, self.at)
            if index is None:
                return Failure(
                    problem=f"the run has {len(trace.iterations)} iterations",
                    iteration=len(trace.iterations) + 1,
                    expected=self.description,
                )
            count = trace.iterations[index - 1].searches
            where = index
        else:
            count, where = sum(it.searches for it in trace.iterations), 1
        if (self.times is None and count == 0) or (self.times is not None and count != self.times):
            return Failure(
                problem=f"{count} tool search(es) made", iteration=where, expected=self.description
            )
        return None


def searched(times: int | None = None, *, at: int | None = None) -> Expectation:
    """The model made tool searches (hosted, or calls of a client search tool): at least
    one, or exactly ``times``, in the turn of iteration ``at`` or over the run."""
    return _Searched(times, at)
