"""Expectations on tool calls: order, exact sequence, unordered, arguments, never called."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.assertions._verdict import Expectation, Failure, after_last, in_turn
from harness.loop import CallRecord, Trace

__all__ = [
    "ANY",
    "CallSpec",
    "call_to",
    "called",
    "called_exactly",
    "called_in_order",
    "called_unordered",
    "never_called",
]


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""Matches any argument value (the key must be present)."""

_MISSING = object()


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallSpec:
    """A tool call to look for: a name or glob, argument matchers, error or not."""

    name: str
    """Tool name or glob."""
    args: Mapping[str, Any] | None = None
    """Expected arguments: values, ``ANY``, or predicates ``f(value) -> bool``."""
    exact_args: bool = False
    """When true the call must have exactly these argument keys (else: at least these)."""
    error: bool | None = None
    """``True``: the call must have failed; ``False``: succeeded; ``None``: either."""

    def __str__(self) -> str:
        text = self.name
        if self.args is not None:
            inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
            text += f"({inner}{', ...' if not self.exact_args else ''})"
        if self.error is True:
            text += " failing"
        elif self.error is False:
            text += " succeeding"
        return text

    def mismatch(self, record: CallRecord) -> str | None:
        """Why ``record`` does not match, or ``None`` when it does."""
        if not fnmatch.fnmatchcase(record.name, self.name):
            return f"called {record.name!r}"
        if self.error is not None and record.is_error != self.error:
            state = "failed" if record.is_error else "succeeded"
            return f"{record.name} {state} ({record.content[:80]!r})"
        if self.args is None:
            return None
        try:
            actual = json.loads(record.arguments or "{}")
        except ValueError:
            return f"{record.name} arguments are not JSON: {record.arguments[:80]!r}"
        if not isinstance(actual, dict):
            return f"{record.name} arguments are not an object: {record.arguments[:80]!r}"
        for key, want in self.args.items():
            got = actual.get(key, _MISSING)
            if got is _MISSING:
                return f"{record.name} has no argument {key!r} (arguments {actual!r})"
            if want is ANY:
                continue
            if callable(want) and not isinstance(want, type):
                if not want(got):
                    return f"{record.name} argument {key}={got!r} fails {_name_of(want)}"
            elif got != want:
                return f"{record.name} argument {key}={got!r}, expected {want!r}"
        if self.exact_args:
            extra = sorted(set(actual) - set(self.args))
            if extra:
                return f"{record.name} has unexpected arguments {extra}"
        return None


def _name_of(predicate: Callable[..., Any]) -> str:
    return getattr(predicate, "__name__", repr(predicate))


def call_to(
    name: str,
    /,
    *,
    args: Mapping[str, Any] | None = None,
    exact_args: bool = False,
    error: bool | None = None,
    **kwargs: Any,
) -> CallSpec:
    """A call of ``name`` (or a glob) with arguments matching ``args`` / keyword arguments.

    ``call_to("search_customer", name="John Smith")``; values may be ``ANY`` or a
    predicate (``lambda v: v > 3``). ``args=`` takes a dict for keys that are not valid
    Python identifiers (or clash with ``exact_args``/``error``).
    """
    if not isinstance(name, str) or not name:
        raise UsageError(f"call_to() takes a tool name or glob first, got {name!r}")
    merged: dict[str, Any] | None = None
    if args is not None or kwargs:
        merged = {**(args or {}), **kwargs}
    return CallSpec(name=name, args=merged, exact_args=exact_args, error=error)


def _specs(items: Sequence[str | CallSpec], what: str) -> tuple[CallSpec, ...]:
    out = []
    for item in items:
        if isinstance(item, CallSpec):
            out.append(item)
        elif isinstance(item, str) and item:
            out.append(CallSpec(name=item))
        else:
            raise UsageError(f"{what} takes tool names, globs or call_to(...), got {item!r}")
    return tuple(out)


def _iteration_of(trace: Trace, position: int) -> int | None:
    """The iteration of the ``position``-th call overall (0-based), ``None`` if past the end."""
    count = 0
    for it in trace.iterations:
        count += len(it.calls)
        if position < count:
            return it.index
    return None


def _shown(calls: Sequence[CallRecord]) -> list[str]:
    return [c.name for c in calls]


class _InOrder(Expectation):
    def __init__(self, specs: tuple[CallSpec, ...]) -> None:
        if not specs:
            raise UsageError("called_in_order() needs at least one call")
        self.specs = specs

    @property
    def description(self) -> str:
        return "called in order " + " -> ".join(str(s) for s in self.specs)

    def evaluate(self, trace: Trace) -> Failure | None:
        calls = trace.calls
        position = 0
        for spec in self.specs:
            while position < len(calls) and spec.mismatch(calls[position]) is not None:
                position += 1
            if position == len(calls):
                near = [m for c in calls if (m := spec.mismatch(c)) and c.name == spec.name]
                hint = f" (closest: {near[0]})" if near else ""
                return Failure(
                    problem=f"no call matching {spec} after the calls before it; "
                    f"calls were {_shown(calls)}{hint}",
                    iteration=after_last(trace) if not calls else None,
                    expected=f"call {spec}",
                )
            position += 1
        return None


def called_in_order(*calls: str | CallSpec, turn: int | None = None) -> Expectation:
    """These calls happened in this order (other calls may come between them); ``turn=``:
    in that user turn of a session."""
    return in_turn(_InOrder(_specs(calls, "called_in_order()")), turn)


class _Exactly(Expectation):
    def __init__(self, specs: tuple[CallSpec, ...]) -> None:
        self.specs = specs

    @property
    def description(self) -> str:
        return "called exactly " + (" -> ".join(str(s) for s in self.specs) or "nothing")

    def evaluate(self, trace: Trace) -> Failure | None:
        calls = trace.calls
        for index, spec in enumerate(self.specs):
            if index >= len(calls):
                return Failure(
                    problem=f"call #{index + 1} missing: expected {spec}, the run made "
                    f"{len(calls)} calls {_shown(calls)}",
                    iteration=after_last(trace),
                    expected=f"call {spec}",
                )
            problem = spec.mismatch(calls[index])
            if problem is not None:
                return Failure(
                    problem=f"call #{index + 1}: expected {spec}, {problem}",
                    iteration=_iteration_of(trace, index),
                    expected=f"call {spec}",
                )
        if len(calls) > len(self.specs):
            extra = calls[len(self.specs)]
            return Failure(
                problem=f"unexpected call #{len(self.specs) + 1} {extra.name!r}; "
                f"expected exactly {len(self.specs)} calls",
                iteration=_iteration_of(trace, len(self.specs)),
                expected="no more calls",
            )
        return None


def called_exactly(*calls: str | CallSpec, turn: int | None = None) -> Expectation:
    """The run (``turn=``: that user turn) made exactly these calls, in this order (none:
    no calls at all)."""
    return in_turn(_Exactly(_specs(calls, "called_exactly()")), turn)


def _assign(specs: Sequence[CallSpec], calls: Sequence[CallRecord]) -> list[int] | None:
    """A distinct call index per spec (bipartite matching), or ``None``."""
    owner: dict[int, int] = {}

    def place(s: int, seen: set[int]) -> bool:
        for c, record in enumerate(calls):
            if c in seen or specs[s].mismatch(record) is not None:
                continue
            seen.add(c)
            if c not in owner or place(owner[c], seen):
                owner[c] = s
                return True
        return False

    for s in range(len(specs)):
        if not place(s, set()):
            return None
    result = [0] * len(specs)
    for c, s in owner.items():
        result[s] = c
    return result


class _Unordered(Expectation):
    def __init__(self, specs: tuple[CallSpec, ...], only: bool) -> None:
        if not specs:
            raise UsageError("called_unordered() needs at least one call")
        self.specs, self.only = specs, only

    @property
    def description(self) -> str:
        names = ", ".join(str(s) for s in self.specs)
        return f"called {'only ' if self.only else ''}{{{names}}} in any order"

    def evaluate(self, trace: Trace) -> Failure | None:
        calls = trace.calls
        if _assign(self.specs, calls) is None:
            for spec in self.specs:
                if not any(spec.mismatch(c) is None for c in calls):
                    return Failure(
                        problem=f"no call matches {spec}; calls were {_shown(calls)}",
                        expected=f"call {spec}",
                    )
            return Failure(
                problem=f"not enough distinct calls for {[str(s) for s in self.specs]}; "
                f"calls were {_shown(calls)}"
            )
        if self.only and len(calls) != len(self.specs):
            return Failure(
                problem=f"expected only {len(self.specs)} calls, the run made {len(calls)}: "
                f"{_shown(calls)}"
            )
        return None


def called_unordered(
    *calls: str | CallSpec, only: bool = False, turn: int | None = None
) -> Expectation:
    """Each of these calls happened (a distinct call each), in any order; ``only=True``
    also forbids any other call; ``turn=``: in that user turn of a session."""
    return in_turn(_Unordered(_specs(calls, "called_unordered()"), only), turn)


class _Called(Expectation):
    def __init__(self, spec: CallSpec, times: int | None) -> None:
        if times is not None and (not isinstance(times, int) or times < 0):
            raise UsageError(f"called(times=...) takes a count >= 0, got {times!r}")
        self.spec, self.times = spec, times

    @property
    def description(self) -> str:
        if self.times is None:
            return f"called {self.spec}"
        return f"called {self.spec} {self.times} time(s)"

    def evaluate(self, trace: Trace) -> Failure | None:
        hits = [(i, c) for i, c in enumerate(trace.calls) if self.spec.mismatch(c) is None]
        if self.times is None and not hits:
            near = [
                m
                for c in trace.calls
                if (m := self.spec.mismatch(c)) and not m.startswith("called ")
            ]
            hint = f" (closest: {near[0]})" if near else ""
            return Failure(
                problem=f"no call matches {self.spec}; calls were {_shown(trace.calls)}{hint}",
                expected=f"call {self.spec}",
            )
        if self.times is not None and len(hits) != self.times:
            where = _iteration_of(trace, hits[self.times][0]) if len(hits) > self.times else None
            return Failure(
                problem=f"{self.spec} was called {len(hits)} time(s), expected {self.times}",
                iteration=where,
                expected=f"{self.spec} {self.times} time(s)",
            )
        return None


def called(
    call: str | CallSpec, *, times: int | None = None, turn: int | None = None
) -> Expectation:
    """A call matching ``call`` happened (``times=``: exactly that many times; ``turn=``:
    in that user turn of a session)."""
    return in_turn(_Called(_specs([call], "called()")[0], times), turn)


class _Never(Expectation):
    def __init__(self, specs: tuple[CallSpec, ...]) -> None:
        if not specs:
            raise UsageError("never_called() needs at least one tool name or glob")
        self.specs = specs

    @property
    def description(self) -> str:
        return f"never called {[str(s) for s in self.specs]}"

    def evaluate(self, trace: Trace) -> Failure | None:
        for index, record in enumerate(trace.calls):
            for spec in self.specs:
                if spec.mismatch(record) is None:
                    return Failure(
                        problem=f"{record.name!r} was called (call #{index + 1}, "
                        f"arguments {record.arguments[:80]!r})",
                        iteration=_iteration_of(trace, index),
                        expected=f"never call {spec}",
                    )
        return None


def never_called(*calls: str | CallSpec, turn: int | None = None) -> Expectation:
    """No call matches any of these names, globs or ``call_to(...)`` specs (``turn=``: in
    that user turn of a session)."""
    return in_turn(_Never(_specs(calls, "never_called()")), turn)
